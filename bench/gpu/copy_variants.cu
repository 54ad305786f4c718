/* copy_variants.cu: device-to-device copy variants timed side by side (bytes read plus written over the
 * median of CUDA-event times, each sample after the timer's cold-L2 flush, cuda_l2_flush), to choose the
 * copy kernel's method: grid-stride or contiguous per block, loads with or without the L2 256-byte prefetch
 * hint, block sizes and unrolls, against cudaMemcpyAsync, and read-only / write-only kernels for the two
 * ceilings. Usage: copy_variants [GiB [GPU [DST_SHIFT]]]. One line per variant. */
#include <algorithm>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <cuda_runtime.h>
#include "../../kernels/cuda_common.h"

#define CK(x) do { cudaError_t e_ = (x); if (e_ != cudaSuccess) { \
	fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); exit(1); } } while (0)

enum { GRID = 0, CONTIG = 1 };
enum { LD_PLAIN = 0, LD_NC256 = 1, LD_CS = 2, LD_NC = 3 };

template <int LD>
__device__ __forceinline__ uint4 load(const uint4 *p)
{
	if (LD == LD_NC256) {
		uint4 v;
		asm volatile("ld.global.nc.L1::no_allocate.L2::256B.v4.u32 {%0,%1,%2,%3}, [%4];"
			     : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
		return v;
	}
	if (LD == LD_CS)
		return __ldcs(p);
	if (LD == LD_NC)
		return __ldg(p);
	return *p;
}

template <int U, int LD, int PART>
__global__ void copy_k(uint4 *__restrict__ d, const uint4 *__restrict__ s, size_t n)
{
	size_t lo = 0, hi = n, step, i;

	if (PART == CONTIG) {
		size_t per = (n + gridDim.x - 1) / gridDim.x;
		lo = blockIdx.x * per;
		hi = lo + per < n ? lo + per : n;
		step = (size_t)blockDim.x * U;
		i = lo + threadIdx.x;
	} else {
		step = (size_t)gridDim.x * blockDim.x * U;
		i = (size_t)blockIdx.x * blockDim.x * U + threadIdx.x;
	}
	for (; i + (U - 1) * blockDim.x < hi; i += step) {
		uint4 v[U];
#pragma unroll
		for (int u = 0; u < U; u++)
			v[u] = load<LD>(s + i + u * blockDim.x);
#pragma unroll
		for (int u = 0; u < U; u++)
			d[i + u * blockDim.x] = v[u];
	}
	for (int u = 0; u < U; u++)
		if (i + u * blockDim.x < hi)
			d[i + u * blockDim.x] = s[i + u * blockDim.x];
}

template <int LD = LD_NC256>
__global__ void read_k(const uint4 *__restrict__ s, size_t n, unsigned *sink)
{
	unsigned a = 0;
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
		uint4 v = load<LD>(s + i);
		a ^= v.x ^ v.y ^ v.z ^ v.w;
	}
	if (a == 0x5eed5eedu)
		*sink = a;
}

__global__ void write_k(uint4 *__restrict__ d, size_t n)
{
	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
		d[i] = make_uint4((unsigned)i, 1, 2, 3);
}

static void *flushbuf;
static size_t flushn;
static cudaStream_t st;

template <typename F>
static double timeit(F launch, double bytes, int samples)
{
	cudaEvent_t a, b;
	std::vector<float> ms;

	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	for (int i = 0; i < 3; i++)
		launch();
	for (int i = 0; i < samples; i++) {
		float t;
		CK(cuda_l2_flush(flushbuf, flushn, (unsigned)i, 528, st));
		CK(cudaEventRecord(a, st));
		launch();
		CK(cudaEventRecord(b, st));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&t, a, b));
		ms.push_back(t);
	}
	CK(cudaGetLastError());
	std::sort(ms.begin(), ms.end());
	return bytes / (ms[samples / 2] * 1e-3) / 1e9;
}

int main(int argc, char **argv)
{
	size_t bytes = (size_t)(argc > 1 ? atof(argv[1]) : 4) * (1ull << 30), n = bytes / 16;
	int gpu = argc > 2 ? atoi(argv[2]) : 0, sms, l2;
	size_t off = argc > 3 ? strtoull(argv[3], NULL, 0) : 0;   /* bytes the destination is shifted by */
	uint4 *s, *d;
	char *dbase;

	CK(cudaSetDevice(gpu));
	CK(cudaStreamCreate(&st));
	CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, gpu));
	CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, gpu));
	flushn = 2 * (size_t)l2;
	CK(cudaMalloc(&flushbuf, flushn + 16));
	CK(cudaMalloc(&s, bytes));
	CK(cudaMalloc(&dbase, bytes + off));
	d = (uint4 *)(dbase + off);
	CK(cudaMemset(s, 7, bytes));
	CK(cudaMemset(d, 0, bytes));
	printf("copy_variants: %.1f GiB, GPU %d, %d SMs, L2 %d MiB, destination shifted by %zu bytes\n",
	       bytes / 1073741824.0, gpu, sms, l2 >> 20, off);
	const int S = 40;
	printf("%-40s %8.1f GB/s\n", "memcpy", timeit([&] { CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, st)); }, 2.0 * bytes, S));
	printf("%-40s %8.1f GB/s\n", "read only (nc, L2::256B)", timeit([&] { read_k<LD_NC256><<<sms * 8, 256, 0, st>>>(s, n, (unsigned *)flushbuf); }, 1.0 * bytes, S));
	printf("%-40s %8.1f GB/s\n", "read only (plain)", timeit([&] { read_k<LD_PLAIN><<<sms * 8, 256, 0, st>>>(s, n, (unsigned *)flushbuf); }, 1.0 * bytes, S));
	printf("%-40s %8.1f GB/s\n", "write only", timeit([&] { write_k<<<sms * 8, 256, 0, st>>>(d, n); }, 1.0 * bytes, S));
#define V(U, LD, PART, T, BPS) do { \
	char name[64]; \
	snprintf(name, sizeof(name), "%s u%d %s t%d b%d/SM", PART == CONTIG ? "contig" : "grid", U, \
		 LD == LD_NC256 ? "nc256" : LD == LD_CS ? "cs" : LD == LD_NC ? "nc" : "plain", T, BPS); \
	printf("%-40s %8.1f GB/s\n", name, timeit([&] { copy_k<U, LD, PART><<<sms * BPS, T, 0, st>>>(d, s, n); }, \
		2.0 * bytes, S)); } while (0)
	V(4, LD_PLAIN, GRID, 512, 4);
	V(4, LD_NC, GRID, 512, 4);
	V(1, LD_PLAIN, GRID, 512, 4);
	V(2, LD_PLAIN, GRID, 512, 4);
	V(8, LD_PLAIN, GRID, 512, 4);
	V(4, LD_PLAIN, GRID, 256, 8);
	V(4, LD_PLAIN, GRID, 128, 16);
	V(2, LD_PLAIN, GRID, 1024, 2);
	V(4, LD_PLAIN, GRID, 512, 32);
	V(1, LD_PLAIN, GRID, 256, 64);

	/* The copy split between the driver's copy on one stream and our kernel (or more driver copies) on
	 * others, all started together: does a second engine add bandwidth? The timed region spans both. */
	cudaStream_t st2[4];
	cudaEvent_t go, done[4];
	for (int i = 0; i < 4; i++) {
		CK(cudaStreamCreateWithFlags(&st2[i], cudaStreamNonBlocking));
		CK(cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming));
	}
	CK(cudaEventCreateWithFlags(&go, cudaEventDisableTiming));
	auto split = [&](double share, int kernel_part, int parts) {
		size_t first = ((size_t)(share * n) / 256) * 256;   /* 16-byte units copied by memcpy */
		CK(cudaEventRecord(go, st));
		for (int i = 0; i < parts; i++)
			CK(cudaStreamWaitEvent(st2[i], go, 0));
		if (kernel_part) {
			CK(cudaMemcpyAsync(d, s, first * 16, cudaMemcpyDeviceToDevice, st2[0]));
			copy_k<4, LD_PLAIN, GRID><<<sms * 32, 512, 0, st2[1]>>>(d + first, s + first, n - first);
		} else {
			size_t per = (n / parts / 256) * 256;
			for (int i = 0; i < parts; i++) {
				size_t lo = i * per, len = i == parts - 1 ? n - lo : per;
				CK(cudaMemcpyAsync(d + lo, s + lo, len * 16, cudaMemcpyDeviceToDevice, st2[i]));
			}
		}
		for (int i = 0; i < parts; i++) {
			CK(cudaEventRecord(done[i], st2[i]));
			CK(cudaStreamWaitEvent(st, done[i], 0));
		}
	};
	const double shares[] = { 0.95, 0.9, 0.8, 0.7, 0.5 };
	for (double sh : shares) {
		char name[64];
		snprintf(name, sizeof(name), "memcpy %.0f%% + kernel %.0f%%", sh * 100, 100 - sh * 100);
		printf("%-40s %8.1f GB/s\n", name, timeit([&] { split(sh, 1, 2); }, 2.0 * bytes, S));
	}
	for (int parts = 2; parts <= 4; parts *= 2) {
		char name[64];
		snprintf(name, sizeof(name), "memcpy in %d parts on %d streams", parts, parts);
		printf("%-40s %8.1f GB/s\n", name, timeit([&] { split(0, 0, parts); }, 2.0 * bytes, S));
	}
	printf("%-40s %8.1f GB/s\n", "memcpy (again)", timeit([&] { CK(cudaMemcpyAsync(d, s, bytes, cudaMemcpyDeviceToDevice, st)); }, 2.0 * bytes, S));
	return 0;
}
