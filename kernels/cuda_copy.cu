/* cuda_copy.cu: device memory bandwidth, counted as bytes read plus written: the driver's copy, a 16-byte
 * grid-stride copy kernel with or without cache hints, or bulk copies through shared memory. On an H200
 * (4 GiB, cold L2) they moved 4.30, 3.89, 3.98 and 3.96 TB/s; bench/gpu/copy_variants.cu times more. */
#include "cuda_common.h"

#define COPY_THREADS 512

/* The method parameter, in the order of its choices. */
enum copy_method {
	COPY_MEMCPY,           /* the driver's device-to-device copy */
	COPY_KERNEL,           /* our vector copy, streaming (evict-first) hints */
	COPY_PLAIN,            /* the same without the hints */
	COPY_BULK,             /* the copy engine of sm_90 (TMA) through shared memory */
};

static const char *const copy_method_names[] = { "memcpy", "kernel", "plain", "bulk" };

struct copy_state {
	struct kout out;       /* first: the destination, for tests (cuda_common.h) */
	void *src;
	size_t bytes;
	int unroll;
	enum copy_method method;
	unsigned chunk;        /* bytes of one bulk copy */
	unsigned blocks;
};

/* Shared-memory stages of the bulk copy: while one is stored, the loads of the others are in flight. */
#define BULK_STAGES 4

static const struct param_def copy_params[] = {
	{ "bytes", PARAM_BYTES, "1G", "bytes copied per launch", NULL },
	{ "unroll", PARAM_INT, "4", "methods kernel and plain: 16-byte loads each thread has in flight before "
	  "storing: 1, 2, 4 or 8",
	  NULL },
	{ "method", PARAM_STR, "memcpy", "memcpy: cudaMemcpyAsync device to device (the fastest on an H200); "
	  "kernel: our vector copy with streaming cache hints; plain: the same without them; bulk: sm_90 bulk "
	  "copies (TMA) through shared memory", "memcpy|kernel|plain|bulk" },
	{ "chunk", PARAM_BYTES, "32K", "method bulk: bytes of one bulk copy (a multiple of 16, at most 48K)",
	  NULL },
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

/*
 * The bulk copy: one thread per block drives the copy engine. Chunk j of the block (chunks are dealt
 * round-robin over the grid) is loaded into stage j % BULK_STAGES, completing on that stage's mbarrier,
 * then stored from there; the stage is loaded again once the store has read it (wait_group.read), so
 * BULK_STAGES - 1 loads stay in flight behind every store. n is a multiple of 16 (the copy engine's
 * unit); the tail under 16 bytes is copied by other threads of block 0. Compiled to a trap before sm_90,
 * which copy_setup never launches.
 */
__global__ void __launch_bounds__(32)
	bulk_copy_kernel(char *__restrict__ dst, const char *__restrict__ src, size_t n, unsigned chunk,
			 unsigned char *dst_tail, const unsigned char *src_tail, int tail)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
	extern __shared__ __align__(128) unsigned char stage[];
	__shared__ __align__(8) unsigned long long bar[BULK_STAGES];
	size_t nchunks = (n + chunk - 1) / chunk, mine;

	if (blockIdx.x == 0 && threadIdx.x > 0 && threadIdx.x <= tail)
		dst_tail[threadIdx.x - 1] = src_tail[threadIdx.x - 1];
	if (threadIdx.x != 0 || blockIdx.x >= nchunks)
		return;
	mine = (nchunks - blockIdx.x + gridDim.x - 1) / gridDim.x;
	for (int k = 0; k < BULK_STAGES; k++)
		asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"((unsigned)__cvta_generic_to_shared(&bar[k]))
			     : "memory");
	asm volatile("fence.mbarrier_init.release.cluster;\n\tfence.proxy.async.shared::cta;" ::: "memory");
	auto load = [&](size_t j) {
		size_t off = (blockIdx.x + j * gridDim.x) * (size_t)chunk;
		unsigned len = (unsigned)(n - off < chunk ? n - off : chunk);
		unsigned b = (unsigned)__cvta_generic_to_shared(&bar[j % BULK_STAGES]);
		unsigned d = (unsigned)__cvta_generic_to_shared(stage + (j % BULK_STAGES) * (size_t)chunk);

		asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(b), "r"(len) : "memory");
		asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
			     ::"r"(d), "l"(src + off), "r"(len), "r"(b) : "memory");
	};
	for (size_t j = 0; j < mine && j < BULK_STAGES; j++)
		load(j);
	for (size_t j = 0; j < mine; j++) {
		size_t off = (blockIdx.x + j * gridDim.x) * (size_t)chunk;
		unsigned len = (unsigned)(n - off < chunk ? n - off : chunk), done = 0;
		unsigned b = (unsigned)__cvta_generic_to_shared(&bar[j % BULK_STAGES]);
		unsigned parity = (unsigned)(j / BULK_STAGES) & 1;
		unsigned d = (unsigned)__cvta_generic_to_shared(stage + (j % BULK_STAGES) * (size_t)chunk);

		while (!done)
			asm volatile("{\n\t.reg .pred p;\n\tmbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
				     "selp.u32 %0, 1, 0, p;\n\t}" : "=r"(done) : "r"(b), "r"(parity) : "memory");
		asm volatile("cp.async.bulk.global.shared::cta.bulk_group [%0], [%1], %2;\n\t"
			     "cp.async.bulk.commit_group;" ::"l"(dst + off), "r"(d), "r"(len) : "memory");
		if (j >= 1 && j - 1 + BULK_STAGES < mine) {
			asm volatile("cp.async.bulk.wait_group.read 1;" ::: "memory");
			load(j - 1 + BULK_STAGES);
		}
	}
	asm volatile("cp.async.bulk.wait_group 0;" ::: "memory");
#else
	__trap();
#endif
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

/* One block per SM for each BULK_STAGES chunks of shared memory that fit. */
static int bulk_setup(struct kctx *ctx, struct copy_state *s)
{
	long chunk = kparam_long(ctx, "chunk");
	int cc = 0, sms = 0, per_sm = 0;
	size_t smem;

	CUDA_CHECK(ctx, cudaDeviceGetAttribute(&cc, cudaDevAttrComputeCapabilityMajor, ctx->gpu));
	if (cc < 9)
		return kfail(ctx, "method bulk needs compute capability 9.0 or later (this GPU has %d.x)", cc);
	if (chunk < 16 || chunk > 48 * 1024 || chunk % 16)
		return kfail(ctx, "chunk must be a multiple of 16 from 16 to 48K, not %ld", chunk);
	s->chunk = (unsigned)chunk;
	smem = (size_t)BULK_STAGES * s->chunk;
	CUDA_CHECK(ctx, cudaFuncSetAttribute(bulk_copy_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
					     (int)smem));
	CUDA_CHECK(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->gpu));
	CUDA_CHECK(ctx, cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bulk_copy_kernel, 32, smem));
	s->blocks = (unsigned)(sms * (per_sm > 0 ? per_sm : 1));
	return 0;
}

static int copy_setup(struct kctx *ctx)
{
	struct copy_state *s = (struct copy_state *)xcalloc(1, sizeof(*s));
	long bytes = kparam_long(ctx, "bytes");

	ctx->priv = s;
	s->unroll = (int)kparam_long(ctx, "unroll");
	for (int i = 0; i < (int)ARRAY_SIZE(copy_method_names); i++)
		if (!strcmp(kparam_str(ctx, "method"), copy_method_names[i]))
			s->method = (enum copy_method)i;
	if (bytes <= 0)
		return kfail(ctx, "bytes must be positive, not %ld", bytes);
	s->bytes = bytes;
	if (s->method == COPY_BULK) {
		if (bulk_setup(ctx, s))
			return -1;
	} else switch (s->unroll) {
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

	switch (s->method) {
	case COPY_MEMCPY:
		CUDA_CHECK(ctx, cudaMemcpyAsync(s->out.data, s->src, s->bytes, cudaMemcpyDeviceToDevice, st));
		return 0;
	case COPY_BULK:
		bulk_copy_kernel<<<s->blocks, 32, (size_t)BULK_STAGES * s->chunk, st>>>(
			(char *)d, (const char *)a, 16 * n16, s->chunk, dt, at, tail);
		break;
	case COPY_PLAIN:
		copy_run<false>(s->unroll, s->blocks, st, d, a, n16, dt, at, tail);
		break;
	case COPY_KERNEL:
		copy_run<true>(s->unroll, s->blocks, st, d, a, n16, dt, at, tail);
		break;
	}
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
