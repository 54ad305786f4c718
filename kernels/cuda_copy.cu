/* cuda_copy.cu: device memory bandwidth: a 16-byte grid-stride copy, counted as bytes read plus written. */
#include "cuda_common.h"

#define COPY_THREADS 512

struct copy_state {
	struct kout out;       /* first: the destination, for tests (cuda_common.h) */
	void *src;
	size_t bytes;
	int unroll;
	int memcpy;            /* method: memcpy: the driver's device-to-device copy instead of ours */
	int plain;             /* method: plain: our copy without the streaming (evict-first) hints */
	unsigned blocks;
};

static const struct param_def copy_params[] = {
	{ "bytes", PARAM_BYTES, "1G", "bytes copied per launch", NULL },
	{ "unroll", PARAM_INT, "4", "16-byte loads each thread has in flight before storing: 1, 2, 4 or 8",
	  NULL },
	{ "method", PARAM_STR, "kernel", "kernel: vector copy with streaming cache hints; plain: without them; "
	  "memcpy: cudaMemcpyAsync device to device", "kernel|plain|memcpy" },
	{},
};

/*
 * Each thread loads U 16-byte vectors (a block's loads of one round are contiguous, so every warp reads
 * whole 512-byte runs) before it stores any: U independent loads in flight per thread hide the memory
 * latency that a load-store-load chain would expose. The last partial round and the tail under 16 bytes
 * are done with bounds checks.
 */
template <int U, bool HINTS>
__global__ void __launch_bounds__(COPY_THREADS)
	copy_kernel(uint4 *__restrict__ dst, const uint4 *__restrict__ src, size_t n16,
		    unsigned char *dst_tail, const unsigned char *src_tail, int tail)
{
	size_t step = (size_t)gridDim.x * COPY_THREADS * U;
	size_t i = (size_t)blockIdx.x * COPY_THREADS * U + threadIdx.x;
	uint4 v[U];

	for (; i + (U - 1) * COPY_THREADS < n16; i += step) {
#pragma unroll
		for (int u = 0; u < U; u++)
			v[u] = HINTS ? __ldcs(src + i + u * COPY_THREADS) : src[i + u * COPY_THREADS];
#pragma unroll
		for (int u = 0; u < U; u++) {
			if (HINTS)
				__stcs(dst + i + u * COPY_THREADS, v[u]);
			else
				dst[i + u * COPY_THREADS] = v[u];
		}
	}
#pragma unroll
	for (int u = 0; u < U; u++)
		if (i + u * COPY_THREADS < n16)
			dst[i + u * COPY_THREADS] = src[i + u * COPY_THREADS];
	if (blockIdx.x == 0 && threadIdx.x < tail)
		dst_tail[threadIdx.x] = src_tail[threadIdx.x];
}

template <bool HINTS>
static void copy_run(int unroll, unsigned blocks, cudaStream_t st, uint4 *d, const uint4 *a, size_t n16,
		     unsigned char *dt, const unsigned char *at, int tail)
{
	switch (unroll) {
	case 1: copy_kernel<1, HINTS><<<blocks, COPY_THREADS, 0, st>>>(d, a, n16, dt, at, tail); break;
	case 2: copy_kernel<2, HINTS><<<blocks, COPY_THREADS, 0, st>>>(d, a, n16, dt, at, tail); break;
	case 4: copy_kernel<4, HINTS><<<blocks, COPY_THREADS, 0, st>>>(d, a, n16, dt, at, tail); break;
	default: copy_kernel<8, HINTS><<<blocks, COPY_THREADS, 0, st>>>(d, a, n16, dt, at, tail); break;
	}
}

template <int U>
static int copy_blocks(struct kctx *ctx, unsigned *blocks)
{
	int sms = 0, per_sm = 0;

	CUDA_CHECK(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->gpu));
	CUDA_CHECK(ctx,
		   cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, copy_kernel<U, true>, COPY_THREADS, 0));
	*blocks = (unsigned)(sms * (per_sm > 0 ? per_sm : 1));
	return 0;
}

static int copy_setup(struct kctx *ctx)
{
	struct copy_state *s = (struct copy_state *)xcalloc(1, sizeof(*s));
	long bytes = kparam_long(ctx, "bytes");

	ctx->priv = s;
	s->unroll = (int)kparam_long(ctx, "unroll");
	s->memcpy = !strcmp(kparam_str(ctx, "method"), "memcpy");
	s->plain = !strcmp(kparam_str(ctx, "method"), "plain");
	if (bytes <= 0)
		return kfail(ctx, "bytes must be positive, not %ld", bytes);
	s->bytes = bytes;
	switch (s->unroll) {
	case 1: if (copy_blocks<1>(ctx, &s->blocks)) return -1; break;
	case 2: if (copy_blocks<2>(ctx, &s->blocks)) return -1; break;
	case 4: if (copy_blocks<4>(ctx, &s->blocks)) return -1; break;
	case 8: if (copy_blocks<8>(ctx, &s->blocks)) return -1; break;
	default: return kfail(ctx, "unroll must be 1, 2, 4 or 8, not %d", s->unroll);
	}
	CUDA_CHECK(ctx, cudaMalloc(&s->src, s->bytes));
	CUDA_CHECK(ctx, cudaMalloc(&s->out.data, s->bytes));
	s->out.bytes = s->bytes;
	if (cuda_fill_bytes(ctx, s->src, s->bytes, 1) || cuda_fill_bytes(ctx, s->out.data, s->bytes, 2))
		return -1;
	CUDA_CHECK(ctx, cudaStreamSynchronize(cuda_stream(ctx)));
	return 0;
}

static int copy_launch(struct kctx *ctx)
{
	struct copy_state *s = (struct copy_state *)ctx->priv;
	size_t n16 = s->bytes / 16;
	int tail = (int)(s->bytes % 16);
	uint4 *d = (uint4 *)s->out.data;
	const uint4 *a = (const uint4 *)s->src;
	unsigned char *dt = (unsigned char *)s->out.data + 16 * n16;
	const unsigned char *at = (const unsigned char *)s->src + 16 * n16;
	cudaStream_t st = cuda_stream(ctx);

	if (s->memcpy) {
		CUDA_CHECK(ctx, cudaMemcpyAsync(s->out.data, s->src, s->bytes, cudaMemcpyDeviceToDevice, st));
		return 0;
	}
	if (s->plain)
		copy_run<false>(s->unroll, s->blocks, st, d, a, n16, dt, at, tail);
	else
		copy_run<true>(s->unroll, s->blocks, st, d, a, n16, dt, at, tail);
	LAUNCH_CHECK(ctx);
	return 0;
}

static int copy_check(struct kctx *ctx)
{
	struct copy_state *s = (struct copy_state *)ctx->priv;

	return cuda_compare(ctx, s->out.data, s->src, s->bytes, "copy");
}

static void copy_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct copy_state *s = (const struct copy_state *)ctx->priv;

	*flops = 0;
	*bytes = 2.0 * s->bytes;
}

static void copy_teardown(struct kctx *ctx)
{
	struct copy_state *s = (struct copy_state *)ctx->priv;

	if (s) {
		cudaStreamSynchronize(cuda_stream(ctx));
		cudaFree(s->src);
		cudaFree(s->out.data);
		free(s);
	}
	ctx->priv = NULL;
}

static struct kernel_ops copy_ops(void)
{
	struct kernel_ops k = {};

	k.name = "copy";
	k.doc = "device memory bandwidth: 16-byte vector copy, bytes read plus written";
	k.params = copy_params;
	k.place = KERNEL_CUDA;
	k.gpus = 1;
	k.setup = copy_setup;
	k.launch = copy_launch;
	k.check = copy_check;
	k.counts = copy_counts;
	k.teardown = copy_teardown;
	return k;
}

extern "C" const struct kernel_ops kernel_cuda_copy = copy_ops();
