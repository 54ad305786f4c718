/* copy_once.cu: one grid-stride copy of GIB GiB (default 2) on GPU 0 and nothing else, for
 * tests/gpu/counters.sh: its DRAM traffic is what must be true (GIB GiB read, GIB GiB written). The source
 * is left as cudaMalloc gives it: a memset would be a second kernel's traffic. Usage: copy_once [GIB]. */
#include <stdio.h>
#include <stdlib.h>
#include <cuda_runtime.h>

static __global__ void copy(const float4 *__restrict__ src, float4 *__restrict__ dst, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		dst[i] = src[i];
}

int main(int argc, char **argv)
{
	size_t bytes = (size_t)(argc > 1 ? atof(argv[1]) : 2) * (1ull << 30);
	void *src, *dst;
	int sms;

	if (cudaMalloc(&src, bytes) != cudaSuccess || cudaMalloc(&dst, bytes) != cudaSuccess ||
	    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0) != cudaSuccess) {
		fprintf(stderr, "copy_once: cannot allocate 2 x %zu bytes\n", bytes);
		return 1;
	}
	copy<<<4 * sms, 1024>>>((const float4 *)src, (float4 *)dst, bytes / 16);
	if (cudaDeviceSynchronize() != cudaSuccess) {
		fprintf(stderr, "copy_once: %s\n", cudaGetErrorString(cudaGetLastError()));
		return 1;
	}
	printf("bytes=%zu\n", bytes);
	return 0;
}
