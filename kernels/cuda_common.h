/* cuda_common.h: what the CUDA kernels share: error checks, element types, random fills, a device compare. */
#ifndef SWEEP_CUDA_COMMON_H
#define SWEEP_CUDA_COMMON_H

#include <cuda_runtime.h>
#include <cuda_fp16.h>
#include <cuda_bf16.h>
#include <cuda_fp8.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "kernel.h"
}

/*
 * Checks in the style of nccl-tests: a failed call makes the hook return -1 with "file:line: call: reason"
 * in ctx->err, through kfail. Nothing aborts: the cell becomes an error result and the worker goes on (a
 * sticky error such as an illegal address still spoils the CUDA context for the rest of the process).
 */
#define CUDA_CHECK(ctx, call) do { \
	cudaError_t e_ = (call); \
	if (e_ != cudaSuccess) \
		return kfail((ctx), "%s:%d: %s", __FILE__, __LINE__, cudaGetErrorString(e_)); \
	} while (0)
/* After a <<<>>> launch: a bad configuration shows only in cudaGetLastError. */
#define LAUNCH_CHECK(ctx) CUDA_CHECK(ctx, cudaGetLastError())
#ifndef CUBLAS_STATUS_NAME
#define CUBLAS_STATUS_NAME cublasLtGetStatusString   /* cuda_gemm.cu calls it through its dlopen table */
#endif
#define CUBLAS_CHECK(ctx, call) do { \
	cublasStatus_t s_ = (call); \
	if (s_ != CUBLAS_STATUS_SUCCESS) \
		return kfail((ctx), "%s:%d: cuBLASLt: %s", __FILE__, __LINE__, CUBLAS_STATUS_NAME(s_)); \
	} while (0)

/*
 * A CUDA kernel's priv starts with struct kout (kernel.h) describing its output, as the CPU kernels' do:
 * data is a device pointer (a pinned host one for d2h), so a test can overwrite the output with
 * cudaMemcpy(..., cudaMemcpyDefault) and see check() fail without knowing the rest of the state.
 */

/*
 * A CUDA kernel's struct kernel_ops is built by a function from a zeroed struct, field by field, not by
 * an initialiser list: C++ warns (-Wmissing-field-initializers) about every field an initialiser leaves
 * out, so each field kernel.h adds later would break the CUDA build. Dynamic initialisation is harmless
 * here: kernels/registry.c only takes the object's address.
 */

static inline cudaStream_t cuda_stream(const struct kctx *ctx)
{
	return (cudaStream_t)ctx->stream;
}

/* A device's UUID as nvidia-smi and NVML write it: "GPU-" and 8-4-4-4-12 hex digits. */
static inline void cuda_uuid_string(const cudaUUID_t *id, char *buf, size_t n)
{
	const unsigned char *u = (const unsigned char *)id->bytes;

	snprintf(buf, n, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0],
		 u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
		 u[15]);
}

/* Element types of the dtype parameters. */
enum cuda_dtype { CUDA_F32, CUDA_F16, CUDA_BF16, CUDA_FP8 };

/* "f32", "f16", "bf16", "fp8" (e4m3); -1 for anything else. */
static inline int cuda_dtype_parse(const char *s)
{
	static const char *const names[] = { "f32", "f16", "bf16", "fp8" };

	for (int i = 0; i < 4; i++)
		if (!strcmp(s, names[i]))
			return i;
	return -1;
}

static inline size_t cuda_dtype_size(enum cuda_dtype t)
{
	return t == CUDA_F32 ? 4 : t == CUDA_FP8 ? 1 : 2;
}

/* Conversions both ways for every element type, on the device. */
__device__ __forceinline__ float cuda_to_float(float x) { return x; }
__device__ __forceinline__ float cuda_to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float cuda_to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
__device__ __forceinline__ float cuda_to_float(__nv_fp8_e4m3 x) { return (float)x; }
template <typename T> __device__ __forceinline__ T cuda_from_float(float x);
template <> __device__ __forceinline__ float cuda_from_float<float>(float x) { return x; }
template <> __device__ __forceinline__ __half cuda_from_float<__half>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ __nv_bfloat16 cuda_from_float<__nv_bfloat16>(float x)
{
	return __float2bfloat16_rn(x);
}
template <> __device__ __forceinline__ __nv_fp8_e4m3 cuda_from_float<__nv_fp8_e4m3>(float x)
{
	return __nv_fp8_e4m3(x);
}

/* splitmix64 of one index: every element is a pure function of (seed, index), so fills are reproducible
 * and any thread layout gives the same data. */
__device__ __forceinline__ uint64_t cuda_mix(uint64_t seed, uint64_t i)
{
	uint64_t z = seed + (i + 1) * 0x9e3779b97f4a7c15ULL;

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

template <typename T>
__global__ void cuda_fill_uniform_kernel(T *p, size_t n, uint64_t seed, float lo, float hi)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x) {
		float u = (float)(cuda_mix(seed, i) >> 40) * (1.0f / 16777216.0f);   /* [0, 1), 24 bits */

		p[i] = cuda_from_float<T>(lo + (hi - lo) * u);
	}
}

static __global__ void cuda_fill_bytes_kernel(unsigned char *p, size_t bytes, uint64_t seed)
{
	size_t n8 = bytes / 8;

	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i <= n8;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint64_t x = cuda_mix(seed, i);

		if (i < n8)
			((uint64_t *)p)[i] = x;
		else
			for (size_t b = 0; b < bytes - 8 * n8; b++)
				p[8 * n8 + b] = (unsigned char)(x >> (8 * b));
	}
}

static inline unsigned cuda_fill_grid(size_t n)
{
	size_t g = (n + 255) / 256;

	return g > 65536 ? 65536 : g ? (unsigned)g : 1;
}

/* Fill n elements of type t at device pointer p with uniform values in [lo, hi], on ctx's stream. The
 * pointer must be aligned for 8-byte stores (cudaMalloc's is). */
static inline int cuda_fill_uniform(struct kctx *ctx, void *p, size_t n, enum cuda_dtype t, uint64_t seed,
				    float lo, float hi)
{
	cudaStream_t s = cuda_stream(ctx);
	unsigned g = cuda_fill_grid(n);

	switch (t) {
	case CUDA_F32: cuda_fill_uniform_kernel<<<g, 256, 0, s>>>((float *)p, n, seed, lo, hi); break;
	case CUDA_F16: cuda_fill_uniform_kernel<<<g, 256, 0, s>>>((__half *)p, n, seed, lo, hi); break;
	case CUDA_BF16:
		cuda_fill_uniform_kernel<<<g, 256, 0, s>>>((__nv_bfloat16 *)p, n, seed, lo, hi);
		break;
	case CUDA_FP8: cuda_fill_uniform_kernel<<<g, 256, 0, s>>>((__nv_fp8_e4m3 *)p, n, seed, lo, hi); break;
	}
	LAUNCH_CHECK(ctx);
	return 0;
}

/* Fill bytes at device pointer p (8-byte aligned) with random bits, on ctx's stream. */
static inline int cuda_fill_bytes(struct kctx *ctx, void *p, size_t bytes, uint64_t seed)
{
	cuda_fill_bytes_kernel<<<cuda_fill_grid(bytes / 8 + 1), 256, 0, cuda_stream(ctx)>>>(
		(unsigned char *)p, bytes, seed);
	LAUNCH_CHECK(ctx);
	return 0;
}

/*
 * The cold-L2 flush the timer does before each GPU sample (src/measure_cuda.cu), here so that reference
 * programs (tests/gpu) flush the same way. buf holds bytes (a multiple of 16, twice the L2) and 16 more
 * for the read's sink. It is written with value, then read back (cuda_l2_read): the write alone leaves the
 * L2 full of dirty lines whose write-back would land inside the next timed launch (up to the L2's size of
 * extra writes: 3 % of a 1 GiB copy); reading evicts them here and leaves only clean lines. The sink's
 * store never happens (the XOR of equal bytes is not the sentinel) but keeps the loads from being dropped.
 */
static __global__ void cuda_flush_read_kernel(const uint4 *p, size_t n16, unsigned *sink)
{
	size_t step = (size_t)gridDim.x * blockDim.x;
	unsigned acc = 0;

	for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n16; i += step)
		acc ^= p[i].x ^ p[i].y ^ p[i].z ^ p[i].w;
	if (acc == 0x5eed5eedu)
		*sink = acc;
}

/* The flush's second half alone: buf (bytes, twice the L2, and 16 more) read, nothing written: meant to
 * leave the L2 holding clean lines of buf only, each dirty line written back during the read (the clean
 * before a launch that counters are read over, src/measure_cuda.cu). */
static inline cudaError_t cuda_l2_read(void *buf, size_t bytes, unsigned blocks, cudaStream_t st)
{
	cuda_flush_read_kernel<<<blocks, 256, 0, st>>>((const uint4 *)buf, bytes / 16,
							 (unsigned *)((char *)buf + bytes));
	return cudaGetLastError();
}

static inline cudaError_t cuda_l2_flush(void *buf, size_t bytes, unsigned value, unsigned blocks,
					cudaStream_t st)
{
	cudaError_t e = cudaMemsetAsync(buf, (int)(value & 0xff), bytes, st);

	if (e != cudaSuccess)
		return e;
	return cuda_l2_read(buf, bytes, blocks, st);
}

/* The lowest index i < n where a[i] != b[i] goes to *first (left at ~0 when equal). */
static __global__ void cuda_compare_kernel(const unsigned char *a, const unsigned char *b, size_t n,
				    unsigned long long *first)
{
	size_t n16 = n / 16, i;

	for (i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16;
	     i += (size_t)gridDim.x * blockDim.x) {
		uint4 x = ((const uint4 *)a)[i], y = ((const uint4 *)b)[i];

		if (x.x != y.x || x.y != y.y || x.z != y.z || x.w != y.w)
			for (int k = 0; k < 16; k++)
				if (a[16 * i + k] != b[16 * i + k]) {
					atomicMin(first, (unsigned long long)(16 * i + k));
					break;
				}
	}
	for (i = 16 * n16 + blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		if (a[i] != b[i])
			atomicMin(first, (unsigned long long)i);
}

/*
 * Compare n bytes of two device buffers (16-byte aligned) on the GPU. Returns 0 when equal; -1 with the
 * first differing byte in ctx->err, or a CUDA error. Synchronises ctx's stream.
 */
static inline int cuda_compare(struct kctx *ctx, const void *got, const void *want, size_t n,
			       const char *what)
{
	unsigned long long *d_first = NULL, first = ~0ULL;
	unsigned char a = 0, b = 0;
	cudaError_t e;

	CUDA_CHECK(ctx, cudaMalloc(&d_first, sizeof(*d_first)));
	e = cudaMemcpyAsync(d_first, &first, sizeof(first), cudaMemcpyHostToDevice, cuda_stream(ctx));
	if (e == cudaSuccess) {
		cuda_compare_kernel<<<cuda_fill_grid(n / 16 + 1), 256, 0, cuda_stream(ctx)>>>(
			(const unsigned char *)got, (const unsigned char *)want, n, d_first);
		e = cudaGetLastError();
	}
	if (e == cudaSuccess)
		e = cudaMemcpyAsync(&first, d_first, sizeof(first), cudaMemcpyDeviceToHost, cuda_stream(ctx));
	if (e == cudaSuccess)
		e = cudaStreamSynchronize(cuda_stream(ctx));
	cudaFree(d_first);
	CUDA_CHECK(ctx, e);
	if (first == ~0ULL)
		return 0;
	CUDA_CHECK(ctx, cudaMemcpy(&a, (const unsigned char *)got + first, 1, cudaMemcpyDefault));
	CUDA_CHECK(ctx, cudaMemcpy(&b, (const unsigned char *)want + first, 1, cudaMemcpyDefault));
	return kfail(ctx, "%s differs at byte %llu: 0x%02x, want 0x%02x", what, first, a, b);
}

#endif
