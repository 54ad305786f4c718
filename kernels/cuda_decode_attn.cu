/* cuda_decode_attn.cu: a decode step of grouped-query attention over a KV cache, split-K flash-decoding. */
#include <math.h>
#include "cuda_common.h"

/* Tuning constants; -D on the compiler's command line overrides them (bench/gpu/decode_tune.sh, whose
 * figures bench/gpu/README.md keeps: times through `sweep run` with default timing on an H200). */
#ifndef ATTN_WARPS
#define ATTN_WARPS 4
#endif
#ifndef ATTN_TILE
/* Keys each lane group loads before it computes. 8 keys with 2 stages against 4 with 3 (the same bytes in
 * flight): batch 1 at 64K keys 90.5 against 93.3 us, batch 8 561 against 572 us. */
#define ATTN_TILE 8
#endif
#ifndef ATTN_MIN_CHUNK
/* Keys of one split at least: more, shorter splits cost more in the combine than they gain (batch 1 at 64K
 * keys on an H200: 92.3 us with 1024, 99.7 with 512; bench/gpu/decode_variants.sh and bench/gpu/README.md). */
#define ATTN_MIN_CHUNK 1024
#endif
#ifndef ATTN_SMALL_CHUNK
/* Short caches: one wave of blocks with splits of at least this many keys, rather than few long splits
 * (batch 1: 1K keys in one split took 33 us, in 8 splits 12.8; 4K keys in 32 splits 17.6 us, in 64 of
 * 64 keys 21.3, in 16 of 256 keys 17.2 but 1K keys then 15.3). */
#define ATTN_SMALL_CHUNK 128
#endif
#ifndef ATTN_ONE_WAVE
#define ATTN_ONE_WAVE 1        /* splits making between one wave of blocks and two make one (attn_setup) */
#endif
#ifndef ATTN_WAVES
#define ATTN_WAVES 4           /* blocks per SM slot the splits aim at */
#endif
#ifndef ATTN_STAGES
#define ATTN_STAGES 2          /* tiles of K and V in flight per thread (cp.async into shared memory) */
#endif
#define ATTN_MAX_SPLITS 8192   /* the combine keeps a weight per split in shared memory */
#define ATTN_CHECK_HEADS 8     /* (batch, head) pairs the host reference recomputes, about */
#define ATTN_NEG (-1e30f)      /* "minus infinity" that keeps exp2(m - m') finite when both are empty */

/*
 * Layouts (row-major): q and out [batch][heads][dim]; k and v [batch][kv_heads][kv_len][dim]; the partial
 * results of split s: po [batch][heads][splits][dim] (unnormalised), pm and pl [batch][heads][splits]
 * (running max and sum of exp2 of the scores, which are in log2 units: q is prescaled by log2(e)/sqrt(dim)).
 */
struct attn_state {
	struct kout out;       /* first: out, for tests (cuda_common.h) */
	void *q, *k, *v;
	float *po, *pm, *pl;
	long batch, heads, kv_heads, dim, kv_len;
	int splits, chunk, dtype;
	unsigned threads;
	size_t smem;           /* dynamic shared memory of a split block */
	const void *split_fn, *combine_fn;
};

static const struct param_def attn_params[] = {
	{ "batch", PARAM_INT, "1", "sequences decoded together", NULL },
	{ "heads", PARAM_INT, "32", "query heads", NULL },
	{ "kv_heads", PARAM_INT, "8",
	  "key/value heads; heads / kv_heads query heads share one (1, 2, 4 or 8)", NULL },
	{ "dim", PARAM_INT, "128", "head dimension: 64, 128 or 256", NULL },
	{ "kv_len", PARAM_INT, "65536", "cached tokens per sequence", NULL },
	{ "dtype", PARAM_STR, "bf16", "element type of q, the cache and the output (fp32 accumulation)",
	  "f16|bf16" },
	{},
};

__device__ __forceinline__ void attn_to_float8(const uint4 &u, float *f, const __nv_bfloat16 *)
{
	const __nv_bfloat162 *p = reinterpret_cast<const __nv_bfloat162 *>(&u);

#pragma unroll
	for (int j = 0; j < 4; j++) {
		float2 x = __bfloat1622float2(p[j]);

		f[2 * j] = x.x;
		f[2 * j + 1] = x.y;
	}
}

__device__ __forceinline__ void attn_to_float8(const uint4 &u, float *f, const __half *)
{
	const __half2 *p = reinterpret_cast<const __half2 *>(&u);

#pragma unroll
	for (int j = 0; j < 4; j++) {
		float2 x = __half22float2(p[j]);

		f[2 * j] = x.x;
		f[2 * j + 1] = x.y;
	}
}

/* One 16-byte asynchronous copy to shared memory (cp.async, sm_80 on), zero-filled past bytes (0 or 16). */
__device__ __forceinline__ void attn_cp_async16(void *dst, const void *src, int bytes)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);

	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(bytes) : "memory");
}

/* Shared memory of a split block: the copy stages during the loop, then the merge of its lane groups. */
static constexpr size_t attn_smem_bytes(int d, int r)
{
	size_t stages = (size_t)ATTN_STAGES * 2 * ATTN_TILE * ATTN_WARPS * 32 * sizeof(uint4);
	size_t merge = (size_t)ATTN_WARPS * (256 / d) * r * (d + 2) * sizeof(float);   /* NG x R x (D + 2) */

	return stages > merge ? stages : merge;
}

/*
 * One block per (split, kv head, sequence). A lane group of D/8 lanes takes one key at a time, each lane
 * 8 elements (one 16-byte load) of it, so a warp reads 32 / (D/8) whole consecutive rows per load. Every
 * lane group keeps its own online softmax (max m, sum l, unnormalised output acc) for the R query heads of
 * the group: K and V are read once for all of them. At the end the block merges its lane groups through
 * shared memory and writes one partial result per head.
 */
template <typename T, int D, int R>
__global__ void __launch_bounds__(ATTN_WARPS * 32)
attn_split_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
		  float *__restrict__ po, float *__restrict__ pm, float *__restrict__ pl, int kv_len,
		  int chunk, int splits, int heads, int kv_heads, float qscale)
{
	constexpr int LANES = D / 8, KPW = 32 / LANES, NG = ATTN_WARPS * KPW, STEP = NG * ATTN_TILE;
	extern __shared__ __align__(16) unsigned char attn_smem[];
	uint4 *stage = reinterpret_cast<uint4 *>(attn_smem);
	const int lane = threadIdx.x % 32, li = lane % LANES, group = (threadIdx.x / 32) * KPW + lane / LANES;
	const int s = blockIdx.x, g = blockIdx.y, b = blockIdx.z;
	const int k0 = s * chunk, k1 = min(kv_len, k0 + chunk);
	const size_t cache = ((size_t)b * kv_heads + g) * kv_len * D + li * 8;
	float qf[R][8], acc[R][8], m[R], l[R];

#pragma unroll
	for (int r = 0; r < R; r++) {
		uint4 u = *(const uint4 *)(q + ((size_t)b * heads + g * R + r) * D + li * 8);

		attn_to_float8(u, qf[r], q);
#pragma unroll
		for (int e = 0; e < 8; e++) {
			qf[r][e] *= qscale;
			acc[r][e] = 0;
		}
		m[r] = ATTN_NEG;
		l[r] = 0;
	}
	/*
	 * Each thread copies the 16 bytes of K and of V it will use itself into its own slots of shared
	 * memory, ATTN_STAGES tiles ahead: the loads stay in flight without holding registers, and since no
	 * thread reads another's slots the stages need no barrier. Keys past the split are zero-filled.
	 */
	const int ntiles = (k1 - k0 + STEP - 1) / STEP;
	auto slot = [&](int st, int which, int t) -> uint4 * {
		return &stage[((st * 2 + which) * ATTN_TILE + t) * (ATTN_WARPS * 32) + threadIdx.x];
	};
	auto issue = [&](int it) {
		if (it < ntiles) {
#pragma unroll
			for (int t = 0; t < ATTN_TILE; t++) {
				int key = k0 + it * STEP + t * NG + group, ok = key < k1;
				size_t row = (size_t)(ok ? key : k0) * D;

				attn_cp_async16(slot(it % ATTN_STAGES, 0, t), k + cache + row, ok ? 16 : 0);
				attn_cp_async16(slot(it % ATTN_STAGES, 1, t), v + cache + row, ok ? 16 : 0);
			}
		}
		asm volatile("cp.async.commit_group;" ::: "memory");   /* empty groups keep the count even */
	};
	for (int it = 0; it < ATTN_STAGES - 1; it++)
		issue(it);
	for (int it = 0; it < ntiles; it++) {
		const int base = k0 + it * STEP;
		uint4 kv[ATTN_TILE], vv[ATTN_TILE];
		float sc[ATTN_TILE][R];

		issue(it + ATTN_STAGES - 1);   /* into the stage this thread read last time round */
		asm volatile("cp.async.wait_group %0;" ::"n"(ATTN_STAGES - 1) : "memory");
#pragma unroll
		for (int t = 0; t < ATTN_TILE; t++) {
			kv[t] = *slot(it % ATTN_STAGES, 0, t);
			vv[t] = *slot(it % ATTN_STAGES, 1, t);
		}
#pragma unroll
		for (int t = 0; t < ATTN_TILE; t++) {
			float kf[8];

			attn_to_float8(kv[t], kf, k);
#pragma unroll
			for (int r = 0; r < R; r++) {
				float x = 0;
#pragma unroll
				for (int e = 0; e < 8; e++)
					x = fmaf(qf[r][e], kf[e], x);
				sc[t][r] = x;
			}
		}
		/* Sum over the lane group: xor partners stay inside it, as LANES is a power of two. */
#pragma unroll
		for (int off = LANES / 2; off > 0; off /= 2)
#pragma unroll
			for (int t = 0; t < ATTN_TILE; t++)
#pragma unroll
				for (int r = 0; r < R; r++)
					sc[t][r] += __shfl_xor_sync(0xffffffffu, sc[t][r], off);
#pragma unroll
		for (int t = 0; t < ATTN_TILE; t++)
			if (base + t * NG + group >= k1)
#pragma unroll
				for (int r = 0; r < R; r++)
					sc[t][r] = ATTN_NEG;
		/* Online softmax, rescaling acc once per tile rather than once per key. */
#pragma unroll
		for (int r = 0; r < R; r++) {
			float mn = m[r], corr;

#pragma unroll
			for (int t = 0; t < ATTN_TILE; t++)
				mn = fmaxf(mn, sc[t][r]);
			corr = exp2f(m[r] - mn);
			m[r] = mn;
			l[r] *= corr;
#pragma unroll
			for (int e = 0; e < 8; e++)
				acc[r][e] *= corr;
		}
#pragma unroll
		for (int t = 0; t < ATTN_TILE; t++) {
			float vf[8];
			bool valid = base + t * NG + group < k1;

			attn_to_float8(vv[t], vf, v);
#pragma unroll
			for (int r = 0; r < R; r++) {
				float p = valid ? exp2f(sc[t][r] - m[r]) : 0.0f;

				l[r] += p;
#pragma unroll
				for (int e = 0; e < 8; e++)
					acc[r][e] = fmaf(p, vf[e], acc[r][e]);
			}
		}
	}
	/* The stages are done with: the merge reuses their shared memory once every thread is past them. */
	asm volatile("cp.async.wait_all;" ::: "memory");
	__syncthreads();
	float(*sm_acc)[R][D] = reinterpret_cast<float(*)[R][D]>(attn_smem);
	float(*sm_m)[R] = reinterpret_cast<float(*)[R]>(attn_smem + sizeof(float) * NG * R * D);
	float(*sm_l)[R] = reinterpret_cast<float(*)[R]>(attn_smem + sizeof(float) * NG * R * (D + 1));
#pragma unroll
	for (int r = 0; r < R; r++) {
#pragma unroll
		for (int e = 0; e < 8; e++)
			sm_acc[group][r][li * 8 + e] = acc[r][e];
		if (li == 0) {
			sm_m[group][r] = m[r];
			sm_l[group][r] = l[r];
		}
	}
	__syncthreads();
	for (int i = threadIdx.x; i < R * D; i += blockDim.x) {
		int r = i / D, d = i % D;
		float mx = ATTN_NEG, sum = 0, o = 0;
		size_t h = (size_t)b * heads + g * R + r;

		for (int j = 0; j < NG; j++)
			mx = fmaxf(mx, sm_m[j][r]);
		for (int j = 0; j < NG; j++) {
			float w = exp2f(sm_m[j][r] - mx);

			sum += sm_l[j][r] * w;
			o += sm_acc[j][r][d] * w;
		}
		po[(h * splits + s) * D + d] = o;
		if (d == 0) {
			pm[h * splits + s] = mx;
			pl[h * splits + s] = sum;
		}
	}
}

/* The block's maximum or sum of v (op 0: max, 1: sum), in every thread; red holds a value per warp. */
__device__ float attn_block_reduce(float v, int op, float *red)
{
	int lane = threadIdx.x % 32, warp = threadIdx.x / 32, nwarps = (blockDim.x + 31) / 32;

#pragma unroll
	for (int off = 16; off > 0; off /= 2) {
		float o = __shfl_xor_sync(0xffffffffu, v, off);

		v = op ? v + o : fmaxf(v, o);
	}
	__syncthreads();   /* red may still be read from the last reduction */
	if (lane == 0)
		red[warp] = v;
	__syncthreads();
	v = red[0];
	for (int i = 1; i < nwarps; i++)
		v = op ? v + red[i] : fmaxf(v, red[i]);
	return v;
}

/*
 * One block of dim threads per (head, sequence): the splits' partial results, weighted by their maxima.
 * The maximum, the weights (kept in shared memory) and the sum over splits are computed by all threads
 * at once, and the weighted sum of each output element reads the splits' partials with no dependence
 * between loads: a loop over splits in each thread in turn took 33 us at 64 splits (batch 1, 64K keys).
 */
template <typename T>
__global__ void attn_combine_kernel(const float *__restrict__ po, const float *__restrict__ pm,
				    const float *__restrict__ pl, T *__restrict__ out, int splits, int heads)
{
	extern __shared__ float w[];   /* one weight per split */
	__shared__ float red[32];
	size_t h = (size_t)blockIdx.y * heads + blockIdx.x;
	const float *m = pm + h * splits, *l = pl + h * splits, *p = po + h * splits * blockDim.x;
	int d = threadIdx.x, dim = blockDim.x;
	float mx = ATTN_NEG, sum = 0, o0 = 0, o1 = 0, o2 = 0, o3 = 0;
	int s;

	for (s = d; s < splits; s += dim)
		mx = fmaxf(mx, m[s]);
	mx = attn_block_reduce(mx, 0, red);
	for (s = d; s < splits; s += dim) {
		w[s] = exp2f(m[s] - mx);
		sum += l[s] * w[s];
	}
	sum = attn_block_reduce(sum, 1, red);   /* its barriers also publish w */
	for (s = 0; s + 4 <= splits; s += 4) {
		o0 += p[(size_t)s * dim + d] * w[s];
		o1 += p[(size_t)(s + 1) * dim + d] * w[s + 1];
		o2 += p[(size_t)(s + 2) * dim + d] * w[s + 2];
		o3 += p[(size_t)(s + 3) * dim + d] * w[s + 3];
	}
	for (; s < splits; s++)
		o0 += p[(size_t)s * dim + d] * w[s];
	out[h * dim + d] = cuda_from_float<T>(sum > 0 ? (o0 + o1 + o2 + o3) / sum : 0.0f);
}

/* The instance for (dtype, dim, group size), or NULL when the shape is not built. */
template <typename T>
static const void *attn_split_fn(long dim, long r)
{
#define ATTN_R(D) \
	switch (r) { \
	case 1: return (const void *)attn_split_kernel<T, D, 1>; \
	case 2: return (const void *)attn_split_kernel<T, D, 2>; \
	case 4: return (const void *)attn_split_kernel<T, D, 4>; \
	case 8: return (const void *)attn_split_kernel<T, D, 8>; \
	default: return NULL; \
	}
	switch (dim) {
	case 64: ATTN_R(64)
	case 128: ATTN_R(128)
	case 256: ATTN_R(256)
	default: return NULL;
	}
#undef ATTN_R
}

static int attn_setup(struct kctx *ctx)
{
	struct attn_state *s = (struct attn_state *)xcalloc(1, sizeof(*s));
	int sms = 0, per_sm = 0, t = cuda_dtype_parse(kparam_str(ctx, "dtype"));
	long target, r, nq, ncache, most;
	double many, wave;
	char num[32];

	ctx->priv = s;
	s->batch = kparam_long(ctx, "batch");
	s->heads = kparam_long(ctx, "heads");
	s->kv_heads = kparam_long(ctx, "kv_heads");
	s->dim = kparam_long(ctx, "dim");
	s->kv_len = kparam_long(ctx, "kv_len");
	if (t != CUDA_F16 && t != CUDA_BF16)
		return kfail(ctx, "dtype must be f16 or bf16, not '%s'", kparam_str(ctx, "dtype"));
	s->dtype = t;
	if (s->batch <= 0 || s->kv_heads <= 0 || s->heads <= 0 || s->kv_len <= 0 || s->kv_len > (1L << 30) ||
	    s->heads % s->kv_heads)
		return kfail(ctx,
			     "need batch, kv_len > 0 and heads a multiple of kv_heads (%ld, %ld, %ld, %ld)",
			     s->batch, s->kv_len, s->heads, s->kv_heads);
	if (s->batch > 65535 || s->kv_heads > 65535)
		return kfail(ctx, "batch and kv_heads must be at most 65535");
	r = s->heads / s->kv_heads;
	s->split_fn =
		t == CUDA_BF16 ? attn_split_fn<__nv_bfloat16>(s->dim, r) : attn_split_fn<__half>(s->dim, r);
	s->combine_fn = t == CUDA_BF16 ? (const void *)attn_combine_kernel<__nv_bfloat16> :
					 (const void *)attn_combine_kernel<__half>;
	if (!s->split_fn)
		return kfail(ctx, "dim must be 64, 128 or 256, heads / kv_heads 1, 2, 4 or 8 "
			     "(dim %ld, %ld / %ld)", s->dim, s->heads, s->kv_heads);
	/*
	 * Splits: about ATTN_WAVES times as many blocks as fit on the GPU at once, never more (rounding up
	 * to one block over a full wave would run that block alone, doubling the time), none shorter than
	 * ATTN_MIN_CHUNK keys. Several waves keep the share lost to a partial last wave small. A cache too
	 * short for that still fills one wave, with splits of at least ATTN_SMALL_CHUNK keys. Where the splits
	 * of ATTN_MIN_CHUNK keys make between one wave and two, one wave of longer splits instead: batch 1 at
	 * 64K keys on an H200 (64 splits, 1.3 waves) took 89.9 us, in one wave (49 splits) 85.4, in 0.85
	 * (42) 85.5, in 1.5 and 1.9 waves 97.2 and 95.0; batch 8 at 16K keys at 2.6 waves 151.2 us, at 2.1
	 * 162.5 (bench/gpu/README.md).
	 */
	s->threads = ATTN_WARPS * 32;
	CUDA_CHECK(ctx, cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, ctx->gpu));
	s->smem = attn_smem_bytes((int)s->dim, (int)r);
	CUDA_CHECK(ctx, cudaFuncSetAttribute(s->split_fn, cudaFuncAttributeMaxDynamicSharedMemorySize,
					     (int)s->smem));
	CUDA_CHECK(ctx,
		   cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, s->split_fn, s->threads, s->smem));
	target = (long)sms * (per_sm > 0 ? per_sm : 1);
	most = (s->kv_len + ATTN_MIN_CHUNK - 1) / ATTN_MIN_CHUNK;
	many = fmin(fmax(ATTN_WAVES * target / (s->batch * s->kv_heads), 1), most);
	most = (s->kv_len + ATTN_SMALL_CHUNK - 1) / ATTN_SMALL_CHUNK;
	wave = fmin(fmax(target / (s->batch * s->kv_heads), 1), most);
	if (ATTN_ONE_WAVE && many > wave && many < 2 * wave)
		many = wave;
	s->splits = (int)fmin(fmax(many, wave), ATTN_MAX_SPLITS);
	s->chunk = (int)((s->kv_len + s->splits - 1) / s->splits);
	s->splits = (int)((s->kv_len + s->chunk - 1) / s->chunk);
	if (s->splits > 65535 || s->heads > 65535)
		return kfail(ctx, "too many splits or heads for one grid (%d, %ld)", s->splits, s->heads);

	nq = s->batch * s->heads * s->dim;
	ncache = s->batch * s->kv_heads * s->kv_len * s->dim;
	s->out.bytes = nq * 2;
	CUDA_CHECK(ctx, cudaMalloc(&s->q, nq * 2));
	CUDA_CHECK(ctx, cudaMalloc(&s->k, ncache * 2));
	CUDA_CHECK(ctx, cudaMalloc(&s->v, ncache * 2));
	CUDA_CHECK(ctx, cudaMalloc(&s->out.data, s->out.bytes));
	CUDA_CHECK(ctx, cudaMalloc(&s->po, (size_t)nq * s->splits * sizeof(float)));
	CUDA_CHECK(ctx, cudaMalloc(&s->pm, (size_t)s->batch * s->heads * s->splits * sizeof(float)));
	CUDA_CHECK(ctx, cudaMalloc(&s->pl, (size_t)s->batch * s->heads * s->splits * sizeof(float)));
	if (cuda_fill_uniform(ctx, s->q, nq, (enum cuda_dtype)t, 1, -1, 1) ||
	    cuda_fill_uniform(ctx, s->k, ncache, (enum cuda_dtype)t, 2, -1, 1) ||
	    cuda_fill_uniform(ctx, s->v, ncache, (enum cuda_dtype)t, 3, -1, 1) ||
	    cuda_fill_bytes(ctx, s->out.data, s->out.bytes, 4))
		return -1;
	snprintf(num, sizeof(num), "%d", s->splits);
	json_obj_add(ctx->metrics, "splits", num, JSON_NUM);
	CUDA_CHECK(ctx, cudaStreamSynchronize(cuda_stream(ctx)));
	return 0;
}

static int attn_launch(struct kctx *ctx)
{
	struct attn_state *s = (struct attn_state *)ctx->priv;
	int kv_len = (int)s->kv_len, heads = (int)s->heads, kv_heads = (int)s->kv_heads;
	float qscale = (float)(M_LOG2E / sqrt((double)s->dim));
	void *split_args[] = { &s->q, &s->k, &s->v, &s->po, &s->pm, &s->pl, &kv_len, &s->chunk, &s->splits,
			       &heads, &kv_heads, &qscale };
	void *combine_args[] = { &s->po, &s->pm, &s->pl, &s->out.data, &s->splits, &heads };

	CUDA_CHECK(ctx, cudaLaunchKernel(s->split_fn, dim3(s->splits, s->kv_heads, s->batch),
					 dim3(s->threads), split_args, s->smem, cuda_stream(ctx)));
	CUDA_CHECK(ctx, cudaLaunchKernel(s->combine_fn, dim3(s->heads, s->batch), dim3(s->dim), combine_args,
					 s->splits * sizeof(float), cuda_stream(ctx)));
	return 0;
}

static double attn_half(uint16_t x, int bf16)
{
	if (bf16) {
		uint32_t u = (uint32_t)x << 16;
		float f;

		memcpy(&f, &u, sizeof(f));
		return f;
	}
	__half_raw r;
	r.x = x;
	return __half2float(__half(r));
}

/*
 * softmax(q K^T / sqrt(dim)) V for the r query heads that share one kv head (q: r rows of dim; k, v: kv_len
 * rows of dim, as the device holds them), into o (r rows of dim): one pass over the keys for all r heads,
 * each key row converted once; products in float (128 terms), weights and sums in double.
 */
static void attn_reference(const struct attn_state *s, long r, const uint16_t *q, const uint16_t *k,
			   const uint16_t *v, double *o)
{
	int bf = s->dtype == CUDA_BF16;
	long d, j, h, dim = s->dim, n = s->kv_len;
	float *qf = (float *)xmalloc(r * dim * sizeof(float)), *row = (float *)xmalloc(dim * sizeof(float));
	double *w = (double *)xmalloc(r * n * sizeof(double)), *mx = (double *)xmalloc(r * sizeof(double)),
	       *sum = (double *)xcalloc(r, sizeof(double)), scale = 1 / sqrt((double)dim);

	for (d = 0; d < r * dim; d++)
		qf[d] = (float)attn_half(q[d], bf);
	for (h = 0; h < r; h++)
		mx[h] = -INFINITY;
	for (j = 0; j < n; j++) {
		for (d = 0; d < dim; d++)
			row[d] = (float)attn_half(k[j * dim + d], bf);
		for (h = 0; h < r; h++) {
			float x = 0;

			for (d = 0; d < dim; d++)
				x += qf[h * dim + d] * row[d];
			w[h * n + j] = x * scale;
			mx[h] = fmax(mx[h], w[h * n + j]);
		}
	}
	for (h = 0; h < r; h++)
		for (j = 0; j < n; j++)
			sum[h] += (w[h * n + j] = exp(w[h * n + j] - mx[h]));
	for (d = 0; d < r * dim; d++)
		o[d] = 0;
	for (j = 0; j < n; j++) {
		for (d = 0; d < dim; d++)
			row[d] = (float)attn_half(v[j * dim + d], bf);
		for (h = 0; h < r; h++) {
			double p = w[h * n + j] / sum[h];

			for (d = 0; d < dim; d++)
				o[h * dim + d] += p * row[d];
		}
	}
	free(qf);
	free(row);
	free(w);
	free(mx);
	free(sum);
}

/* The device's q and output of the r heads of (sequence b, kv head g), and that kv head's keys and values,
 * copied back. */
static cudaError_t attn_copy_group(const struct attn_state *s, long b, long g, long r, uint16_t *q, uint16_t *o,
				   uint16_t *k, uint16_t *v)
{
	size_t rows = (size_t)s->kv_len * s->dim, first = ((size_t)b * s->heads + g * r) * s->dim;
	size_t kv = ((size_t)b * s->kv_heads + g) * rows;
	cudaError_t e = cudaMemcpy(q, (uint16_t *)s->q + first, r * s->dim * 2, cudaMemcpyDeviceToHost);

	if (e == cudaSuccess)
		e = cudaMemcpy(o, (uint16_t *)s->out.data + first, r * s->dim * 2, cudaMemcpyDeviceToHost);
	if (e == cudaSuccess)
		e = cudaMemcpy(k, (uint16_t *)s->k + kv, rows * 2, cudaMemcpyDeviceToHost);
	if (e == cudaSuccess)
		e = cudaMemcpy(v, (uint16_t *)s->v + kv, rows * 2, cudaMemcpyDeviceToHost);
	return e;
}

/*
 * Recompute on the host the outputs of about ATTN_CHECK_HEADS (sequence, head) pairs, from the inputs copied
 * back, a kv head's query heads together (the first and the last kv head always, then random ones: all when
 * there are few), and compare ||out - ref|| / ||ref|| with the output type's rounding (bf16 keeps 8 bits,
 * f16 11).
 */
static int attn_check(struct kctx *ctx)
{
	struct attn_state *s = (struct attn_state *)ctx->priv;
	long r = s->heads / s->kv_heads, groups = s->batch * s->kv_heads, i, d, h;
	long want = r < ATTN_CHECK_HEADS / 2 ? (ATTN_CHECK_HEADS + r - 1) / r : 2;   /* the first and the last */
	long n = groups < want ? groups : want;
	size_t rows = (size_t)s->kv_len * s->dim;
	uint16_t *q = (uint16_t *)xmalloc(r * s->dim * 2), *o = (uint16_t *)xmalloc(r * s->dim * 2);
	uint16_t *k = (uint16_t *)xmalloc(rows * 2), *v = (uint16_t *)xmalloc(rows * 2);
	double *ref = (double *)xmalloc(r * s->dim * sizeof(double)), err = 0, norm = 0, tol;
	uint64_t seed = 7;
	cudaError_t e = cudaStreamSynchronize(cuda_stream(ctx));
	int ret = 0, bf = s->dtype == CUDA_BF16;

	tol = bf ? 1e-2 : 5e-3;
	for (i = 0; i < n && e == cudaSuccess && !ret; i++) {
		long p = i, b, g;

		if (n < groups)
			p = i == 0 ? 0 : i == 1 ? groups - 1 : (long)(krand(&seed) % (uint64_t)groups);
		b = p / s->kv_heads;
		g = p % s->kv_heads;
		if ((e = attn_copy_group(s, b, g, r, q, o, k, v)) != cudaSuccess)
			break;
		attn_reference(s, r, q, k, v, ref);
		for (h = 0; h < r && !ret; h++) {
			for (d = 0; d < s->dim; d++) {
				double x = attn_half(o[h * s->dim + d], bf), y = ref[h * s->dim + d];

				if (isnan(x)) {
					ret = kfail(ctx, "out[%ld][%ld][%ld] is NaN, want %g", b, g * r + h, d, y);
					break;
				}
				err += (x - y) * (x - y);
				norm += y * y;
			}
		}
	}
	free(q);
	free(o);
	free(k);
	free(v);
	free(ref);
	CUDA_CHECK(ctx, e);
	if (ret)
		return ret;
	if (!(norm > 0) || sqrt(err / norm) > tol)
		return kfail(ctx, "relative error %.3g over %ld heads, tolerance %g",
			     norm > 0 ? sqrt(err / norm) : INFINITY, n * r, tol);
	return 0;
}

/* Only the cache counts: q and the output are a few kilobytes next to it. */
static void attn_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct attn_state *s = (const struct attn_state *)ctx->priv;

	*flops = 4.0 * s->batch * s->heads * s->kv_len * s->dim;
	*bytes = 2.0 * s->batch * s->kv_heads * s->kv_len * s->dim * 2;
}

static void attn_teardown(struct kctx *ctx)
{
	struct attn_state *s = (struct attn_state *)ctx->priv;

	if (!s)
		return;
	cudaStreamSynchronize(cuda_stream(ctx));
	cudaFree(s->q);
	cudaFree(s->k);
	cudaFree(s->v);
	cudaFree(s->out.data);
	cudaFree(s->po);
	cudaFree(s->pm);
	cudaFree(s->pl);
	free(s);
	ctx->priv = NULL;
}

static struct kernel_ops decode_attn_ops(void)
{
	struct kernel_ops k = {};

	k.name = "decode_attn";
	k.doc = "one decode step of grouped-query attention over a KV cache (split-K flash decoding)";
	k.params = attn_params;
	k.place = KERNEL_CUDA;
	k.gpus = 1;
	k.setup = attn_setup;
	k.launch = attn_launch;
	k.check = attn_check;
	k.counts = attn_counts;
	k.teardown = attn_teardown;
	return k;
}

extern "C" const struct kernel_ops kernel_cuda_decode_attn = decode_attn_ops();
