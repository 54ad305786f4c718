/* cuda_decode_attn.cu: a decode step of grouped-query attention over a KV cache, split-K flash-decoding. */
#include <math.h>
#include "cuda_common.h"

/* Tuning constants; -D on the compiler's command line overrides them (bench/gpu/decode_tune.sh, whose
 * figures bench/gpu/README.md keeps: times through `sweep run` with default timing on an H200). */
#ifndef ATTN_WARPS
#define ATTN_WARPS 4           /* warps of a split block, each over its own tiles of 16 keys (dim 256: half) */
#endif
#ifndef ATTN_STAGES
#define ATTN_STAGES 3          /* tiles of K and V each warp has in flight (cp.async; dim 256: 2) */
#endif
#ifndef ATTN_MIN_CHUNK
/* Keys of one split at least: more, shorter splits cost more in the combine than they gain (batch 1 at 64K
 * keys on an H200, with the CUDA-core kernel before this one: 92.3 us with 1024, 99.7 with 512;
 * bench/gpu/decode_variants.sh and bench/gpu/README.md). */
#define ATTN_MIN_CHUNK 1024
#endif
#ifndef ATTN_SMALL_CHUNK
/* Short caches: one wave of blocks with splits of at least this many keys, rather than few long splits
 * (the kernel before this one, batch 1: 1K keys in one split took 33 us, in 8 splits 12.8; 4K keys in 32
 * splits 17.6 us, in 64 of 64 keys 21.3, in 16 of 256 keys 17.2 but 1K keys then 15.3). */
#define ATTN_SMALL_CHUNK 128
#endif
#ifndef ATTN_ONE_WAVE
#define ATTN_ONE_WAVE 1        /* splits making between one wave of blocks and two make one (attn_setup) */
#endif
#ifndef ATTN_WAVES
#define ATTN_WAVES 4           /* blocks per SM slot the splits aim at */
#endif
#define ATTN_MAX_SPLITS 8192   /* the combine keeps a weight per split in shared memory */
#define ATTN_NEG (-1e30f)      /* "minus infinity" that keeps exp2(m - m') finite when both are empty */

/*
 * Layouts (row-major): q and out [batch][heads][dim]; k and v [batch][kv_heads][kv_len][dim]; the partial
 * results of split s: po [batch][heads][splits][dim] (unnormalised), pm and pl [batch][heads][splits]
 * (running max and sum of exp2 of the scores, which are in log2 units: scaled by log2(e)/sqrt(dim)).
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

/* Warps of a split block and tiles in flight per warp, by head dimension: a tile of dim 256 is twice the
 * bytes, so half the warps and two stages keep a block's shared memory within what every GPU from sm_80
 * on grants one block (64 KiB at dim 256, 96 KiB at 128). */
__host__ __device__ constexpr int attn_warps(int d) { return d >= 256 ? (ATTN_WARPS + 1) / 2 : ATTN_WARPS; }
__host__ __device__ constexpr int attn_stages(int d) { return d >= 256 ? 2 : ATTN_STAGES; }

/* Shared memory of a split block: each warp's stages of 16 keys of K and of V, then the merge of its warps. */
__host__ __device__ constexpr size_t attn_smem_bytes(int d, int r)
{
	size_t stages = (size_t)attn_warps(d) * attn_stages(d) * 2 * 16 * d * 2;
	size_t merge = (size_t)attn_warps(d) * r * (d + 2) * sizeof(float);   /* W x R x (D + 2) */

	return stages > merge ? stages : merge;
}

/* One 16-byte asynchronous copy to shared memory (cp.async, sm_80 on), zero-filled past bytes (0 or 16). */
__device__ __forceinline__ void attn_cp_async16(void *dst, const void *src, int bytes)
{
	unsigned d = (unsigned)__cvta_generic_to_shared(dst);

	asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(d), "l"(src), "r"(bytes) : "memory");
}

/* Four 8x8 matrices of 16-bit elements from shared memory, each lane giving one row's address (ldmatrix);
 * trans: each matrix transposed on the way. */
template <bool TRANS>
__device__ __forceinline__ void attn_ldsm4(uint32_t (&a)[4], const void *row)
{
	unsigned p = (unsigned)__cvta_generic_to_shared(row);

	if (TRANS)
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
			     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(p));
	else
		asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
			     : "=r"(a[0]), "=r"(a[1]), "=r"(a[2]), "=r"(a[3]) : "r"(p));
}

/* c += a b on the tensor cores: a 16x16 (row-major fragments), b 16x8, c 16x8 in fp32; one per type. */
#define ATTN_MMA(T, PTX) \
	__device__ __forceinline__ void attn_mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1, \
						 const T *) \
	{ \
		asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." PTX "." PTX ".f32 {%0, %1, %2, %3}, " \
			     "{%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};" \
			     : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3]) \
			     : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1)); \
	}
ATTN_MMA(__nv_bfloat16, "bf16")
ATTN_MMA(__half, "f16")
#undef ATTN_MMA

/* Two floats as a pair of the element type, the first in the low half. */
__device__ __forceinline__ uint32_t attn_pack(float x, float y, const __nv_bfloat16 *)
{
	__nv_bfloat162 h = __floats2bfloat162_rn(x, y);

	return *reinterpret_cast<uint32_t *>(&h);
}

__device__ __forceinline__ uint32_t attn_pack(float x, float y, const __half *)
{
	__half2 h = __floats2half2_rn(x, y);

	return *reinterpret_cast<uint32_t *>(&h);
}

/* The lane's part of the transpose of the 8x8 matrix of 16-bit elements whose part a is (movmatrix). */
__device__ __forceinline__ uint32_t attn_transpose(uint32_t a)
{
	uint32_t d;

	asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(d) : "r"(a));
	return d;
}

/*
 * One block per (split, kv head, sequence); each warp takes every W-th tile of 16 keys of the split and
 * keeps its own online softmax for the R query heads that share the kv head, on the tensor cores
 * (mma.m16n8k16, fp32 accumulation): the scores transposed, S^T = K Q^T (16 keys x 8 head columns, R of
 * them used), then O^T += V^T P^T (16 dims x 8 heads a step), P^T being S^T's probabilities rounded to the
 * element type and moved into place by movmatrix. Lane t holds the scores of keys t/4 and t/4 + 8 for
 * heads 2(t%4) and 2(t%4)+1, and the output of those heads for dims t/4 and t/4 + 8 of every 16; so the
 * maxima and the rescaling stay within lanes of the same t%4. K and V come by cp.async into the warp's
 * stages, rows swizzled (16-byte chunk c of row r at c ^ (r % 8)) so that ldmatrix reads 8 rows without bank
 * conflicts. At the end the block merges its warps through shared memory, one partial result per head.
 * The CUDA-core loop it replaces (a lane group per key, 16-lane shuffles for each dot product) had a body of
 * 1592 instructions for a warp's 16 keys, this one 409 (sm_90), and the issue rate bounded that loop at
 * 3.9 TB/s where the cache's reads alone reach 4.4 (bench/gpu/README.md).
 */
template <typename T, int D, int R>
__global__ void __launch_bounds__(attn_warps(D) * 32)
attn_split_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
		  float *__restrict__ po, float *__restrict__ pm, float *__restrict__ pl, int kv_len,
		  int chunk, int splits, int heads, int kv_heads, float qscale)
{
	constexpr int W = attn_warps(D), S = attn_stages(D), KS = D / 16, CH = D / 8, PER = 16 * CH / 32;
	extern __shared__ __align__(128) unsigned char attn_smem[];
	const int lane = threadIdx.x % 32, warp = threadIdx.x / 32, quad = lane % 4, row4 = lane / 4;
	const int s = blockIdx.x, g = blockIdx.y, b = blockIdx.z;
	const int k0 = s * chunk, k1 = min(kv_len, k0 + chunk);
	const size_t cache = ((size_t)b * kv_heads + g) * kv_len * D;
	uint4 *stage = reinterpret_cast<uint4 *>(attn_smem) + (size_t)warp * S * 2 * 16 * CH;
	uint32_t qb[KS][2];
	float acc[KS][4], m[2] = { ATTN_NEG, ATTN_NEG }, l[2] = { 0, 0 };

	/* Q^T as the b operand: lane t holds head t/4 (zero past R), dims 2(t%4), +1 and those + 8. */
#pragma unroll
	for (int j = 0; j < KS; j++) {
		const T *qh = q + ((size_t)b * heads + g * R + row4) * D + 16 * j + 2 * quad;

		qb[j][0] = row4 < R ? *reinterpret_cast<const uint32_t *>(qh) : 0;
		qb[j][1] = row4 < R ? *reinterpret_cast<const uint32_t *>(qh + 8) : 0;
#pragma unroll
		for (int e = 0; e < 4; e++)
			acc[j][e] = 0;
	}
	const int ntiles = (k1 - k0 + 15) / 16, mine = ntiles > warp ? (ntiles - warp + W - 1) / W : 0;
	auto at = [&](int st, int which, int r, int c) -> uint4 * {
		return stage + ((st * 2 + which) * 16 + r) * CH + (c ^ (r % 8));
	};
	auto issue = [&](int it) {   /* the warp's it-th tile into stage it % S; keys past the split zero-filled */
		if (it < mine) {
			const int base = k0 + (warp + it * W) * 16;
#pragma unroll
			for (int j = 0; j < PER; j++) {
				int i = lane + 32 * j, r = i / CH, c = i % CH, key = base + r, ok = key < k1;
				size_t at_row = cache + (size_t)(ok ? key : k0) * D + c * 8;

				attn_cp_async16(at(it % S, 0, r, c), k + at_row, ok ? 16 : 0);
				attn_cp_async16(at(it % S, 1, r, c), v + at_row, ok ? 16 : 0);
			}
		}
		asm volatile("cp.async.commit_group;" ::: "memory");   /* empty groups keep the count even */
	};
	for (int it = 0; it < S - 1; it++)
		issue(it);
	for (int it = 0; it < mine; it++) {
		const int base = k0 + (warp + it * W) * 16, st = it % S;
		float sc[4] = { 0, 0, 0, 0 };
		uint32_t a[4];

		__syncwarp();                  /* every lane is done with the stage read last time round */
		issue(it + S - 1);
		asm volatile("cp.async.wait_group %0;" ::"n"(S - 1) : "memory");
		__syncwarp();                  /* and every lane's copies of this tile have landed */
#pragma unroll
		for (int j = 0; j < KS; j++) {   /* S^T: rows lane%16, chunk 2j + lane/16 of K */
			attn_ldsm4<false>(a, at(st, 0, lane % 16, 2 * j + lane / 16));
			attn_mma(sc, a, qb[j][0], qb[j][1], k);
		}
		/* Keys row4 (sc 0, 1) and row4 + 8 (sc 2, 3); heads 2 quad (sc 0, 2) and 2 quad + 1 (sc 1, 3). */
		const bool ok0 = base + row4 < k1, ok1 = base + row4 + 8 < k1;
		float p[4];

#pragma unroll
		for (int h = 0; h < 2; h++) {
			float x0 = ok0 ? sc[h] * qscale : ATTN_NEG, x1 = ok1 ? sc[h + 2] * qscale : ATTN_NEG;
			float mn = fmaxf(x0, x1), corr;

#pragma unroll
			for (int off = 4; off < 32; off *= 2)
				mn = fmaxf(mn, __shfl_xor_sync(0xffffffffu, mn, off));
			mn = fmaxf(mn, m[h]);
			corr = exp2f(m[h] - mn);
			m[h] = mn;
			p[h] = ok0 ? exp2f(x0 - mn) : 0.0f;
			p[h + 2] = ok1 ? exp2f(x1 - mn) : 0.0f;
			l[h] = l[h] * corr + p[h] + p[h + 2];
#pragma unroll
			for (int j = 0; j < KS; j++) {
				acc[j][h] *= corr;
				acc[j][h + 2] *= corr;
			}
		}
		/* P^T as the b operand: keys 2(t%4), +1 (and + 8) of head t/4, the transposes of S^T's parts. */
		const uint32_t pb0 = attn_transpose(attn_pack(p[0], p[1], k));
		const uint32_t pb1 = attn_transpose(attn_pack(p[2], p[3], k));
#pragma unroll
		for (int j = 0; j < KS; j++) {   /* V^T, dims 16j on: keys lane%8 + 8 (lane/16), chunk 2j + lane/8%2 */
			attn_ldsm4<true>(a, at(st, 1, lane % 8 + 8 * (lane / 16), 2 * j + (lane / 8) % 2));
			attn_mma(acc[j], a, pb0, pb1, k);
		}
	}
	/* The stages are done with: the merge reuses their shared memory once every thread is past them. */
	asm volatile("cp.async.wait_all;" ::: "memory");
	__syncthreads();
	float(*sm_acc)[R][D] = reinterpret_cast<float(*)[R][D]>(attn_smem);
	float(*sm_m)[R] = reinterpret_cast<float(*)[R]>(attn_smem + sizeof(float) * W * R * D);
	float(*sm_l)[R] = reinterpret_cast<float(*)[R]>(attn_smem + sizeof(float) * W * R * (D + 1));
#pragma unroll
	for (int h = 0; h < 2; h++) {
		const int head = 2 * quad + h;

#pragma unroll
		for (int off = 4; off < 32; off *= 2)   /* each lane summed its own keys */
			l[h] += __shfl_xor_sync(0xffffffffu, l[h], off);
		if (head < R) {
#pragma unroll
			for (int j = 0; j < KS; j++) {
				sm_acc[warp][head][16 * j + row4] = acc[j][h];
				sm_acc[warp][head][16 * j + row4 + 8] = acc[j][h + 2];
			}
			if (row4 == 0) {
				sm_m[warp][head] = m[h];
				sm_l[warp][head] = l[h];
			}
		}
	}
	__syncthreads();
	for (int i = threadIdx.x; i < R * D; i += blockDim.x) {
		int r = i / D, d = i % D;
		float mx = ATTN_NEG, sum = 0, o = 0;
		size_t h = (size_t)b * heads + g * R + r;

		for (int j = 0; j < W; j++)
			mx = fmaxf(mx, sm_m[j][r]);
		for (int j = 0; j < W; j++) {
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
	 * 64K keys on an H200 (two blocks an SM) took 80.1 us in 64 splits (1.9 waves) and 73.0 in one wave
	 * of 33 (bench/gpu/README.md; the kernel before this one: 89.9 us in 1.3 waves, 85.4 in one).
	 */
	s->threads = attn_warps((int)s->dim) * 32;
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

/* Merge a running maximum and sum of exp(x - maximum) with another's; -INFINITY is an empty one. */
__device__ __forceinline__ void attn_ref_merge(double &m, double &l, double om, double ol)
{
	double mx = fmax(m, om);

	if (mx == -INFINITY)
		return;
	l = (m == -INFINITY ? 0 : l * exp(m - mx)) + (om == -INFINITY ? 0 : ol * exp(om - mx));
	m = mx;
}

/* The score of key row kr against the query heads' rows qs (dim each) for head h: products of 16-bit floats
 * are exact in float, their sum of at most 256 terms close enough for a reference. */
template <typename T>
__device__ __forceinline__ double attn_ref_score(const float *qs, const T *kr, int dim, int h, double scale)
{
	float x = 0;

	for (int d = 0; d < dim; d++)
		x = fmaf(qs[h * dim + d], cuda_to_float(kr[d]), x);
	return x * scale;
}

/*
 * The check's reference, plain and apart from the split kernel, in two passes over chunks of ATTN_REF_CHUNK
 * keys, each a block of ATTN_REF_THREADS per (kv head, sequence, chunk) with its r query heads together:
 * attn_ref_max_kernel writes each chunk's maximum score and sum of exp(score - max) per head into part
 * ([batch][kv_heads][chunks][8]); attn_ref_kernel merges every chunk's pair, then adds its own chunk's share
 * of the weighted sum of V, divided by the merged sum, into ref (zeroed; [batch][heads][dim], double). K is
 * read twice and V once. One block per (kv head, sequence) walking all keys left 8 blocks on a 132-SM card
 * for a batch-1 cell at 64K keys, 60 ms of check before its warm-up; split, the issue grid's cells at 64K
 * keys took 0.079 and 0.104 s in all on an H200, against 0.199-0.201 (docs/measured.md).
 */
#define ATTN_REF_THREADS 256
#define ATTN_REF_CHUNK 4096

/* The number of chunks of kv_len keys: the third dimension of both passes' grids. */
static unsigned attn_ref_chunks(size_t kv_len)
{
	return (unsigned)((kv_len + ATTN_REF_CHUNK - 1) / ATTN_REF_CHUNK);
}

/* The block's r query heads (dim each) as floats into qs; returns where the first of them is in q. */
template <typename T>
__device__ __forceinline__ size_t attn_ref_query(const T *q, float *qs, int heads, int dim, int r)
{
	const size_t first = ((size_t)blockIdx.y * heads + blockIdx.x * r) * dim;

	for (int i = threadIdx.x; i < r * dim; i += ATTN_REF_THREADS)
		qs[i] = cuda_to_float(q[first + i]);
	__syncthreads();
	return first;
}

template <typename T>
__global__ void __launch_bounds__(ATTN_REF_THREADS)
attn_ref_max_kernel(const T *__restrict__ q, const T *__restrict__ k, double2 *part, int kv_len, int heads,
		    int kv_heads, int dim, int r)
{
	__shared__ float qs[8 * 256];
	__shared__ double wm[ATTN_REF_THREADS / 32][8], wl[ATTN_REF_THREADS / 32][8];
	const int g = blockIdx.x, b = blockIdx.y, t = threadIdx.x, c0 = blockIdx.z * ATTN_REF_CHUNK;
	const int c1 = min(kv_len, c0 + ATTN_REF_CHUNK);
	const size_t cache = ((size_t)b * kv_heads + g) * kv_len * dim;
	const double scale = 1 / sqrt((double)dim);
	double m[8], l[8];

	attn_ref_query(q, qs, heads, dim, r);
	for (int h = 0; h < r; h++) {
		m[h] = -INFINITY;
		l[h] = 0;
	}
	for (int j = c0 + t; j < c1; j += ATTN_REF_THREADS)
		for (int h = 0; h < r; h++)
			attn_ref_merge(m[h], l[h], attn_ref_score(qs, k + cache + (size_t)j * dim, dim, h, scale), 1);
	for (int h = 0; h < r; h++) {
		for (int off = 16; off > 0; off /= 2) {
			double om = __shfl_xor_sync(0xffffffffu, m[h], off), ol = __shfl_xor_sync(0xffffffffu, l[h], off);

			attn_ref_merge(m[h], l[h], om, ol);
		}
		if (t % 32 == 0) {
			wm[t / 32][h] = m[h];
			wl[t / 32][h] = l[h];
		}
	}
	__syncthreads();
	if (t < r) {
		const size_t at = (((size_t)b * kv_heads + g) * gridDim.z + blockIdx.z) * 8 + t;

		for (int w = 1; w < ATTN_REF_THREADS / 32; w++)
			attn_ref_merge(wm[0][t], wl[0][t], wm[w][t], wl[w][t]);
		part[at] = make_double2(wm[0][t], wl[0][t]);
	}
}

template <typename T>
__global__ void __launch_bounds__(ATTN_REF_THREADS)
attn_ref_kernel(const T *__restrict__ q, const T *__restrict__ k, const T *__restrict__ v,
		const double2 *__restrict__ part, double *ref, int kv_len, int heads, int kv_heads, int dim,
		int r)
{
	__shared__ float qs[8 * 256], ps[8][ATTN_REF_THREADS];
	const int g = blockIdx.x, b = blockIdx.y, t = threadIdx.x, slices = ATTN_REF_THREADS / dim;
	const int c0 = blockIdx.z * ATTN_REF_CHUNK, c1 = min(kv_len, c0 + ATTN_REF_CHUNK);
	const size_t cache = ((size_t)b * kv_heads + g) * kv_len * dim;
	const double2 *mine = part + ((size_t)b * kv_heads + g) * gridDim.z * 8;
	const double scale = 1 / sqrt((double)dim);
	const size_t first = attn_ref_query(q, qs, heads, dim, r);
	double m[8], l[8], o[8];

	for (int h = 0; h < r; h++) {
		m[h] = -INFINITY;
		l[h] = 0;
		o[h] = 0;
		for (unsigned c = 0; c < gridDim.z; c++)
			attn_ref_merge(m[h], l[h], mine[c * 8 + h].x, mine[c * 8 + h].y);
	}
	for (int c = c0; c < c1; c += ATTN_REF_THREADS) {
		for (int h = 0; h < r; h++)
			ps[h][t] = c + t < c1 ? (float)exp(attn_ref_score(qs, k + cache + (size_t)(c + t) * dim,
									dim, h, scale) - m[h]) : 0.0f;
		__syncthreads();
		for (int i = t / dim; i < ATTN_REF_THREADS && c + i < c1; i += slices) {
			double x = cuda_to_float(v[cache + (size_t)(c + i) * dim + t % dim]);

			for (int h = 0; h < r; h++)
				o[h] += ps[h][i] * x;
		}
		__syncthreads();
	}
	if (t < slices * dim)
		for (int h = 0; h < r; h++)
			atomicAdd(&ref[first + h * dim + t % dim], o[h] / l[h]);
}

/* The output as floats, to compare on the host. */
template <typename T>
__global__ void attn_out_kernel(const T *__restrict__ out, float *got, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		got[i] = cuda_to_float(out[i]);
}

/* The reference of every head into ref (zeroed first; part holds the chunks' pairs) and the output as floats
 * into got: n values each. */
template <typename T>
static void attn_ref_launch(const struct attn_state *s, double2 *part, double *ref, float *got, size_t n,
			    cudaStream_t st)
{
	const dim3 grid((unsigned)s->kv_heads, (unsigned)s->batch, attn_ref_chunks(s->kv_len));
	const int kv_len = (int)s->kv_len, heads = (int)s->heads, kv_heads = (int)s->kv_heads;
	const int dim = (int)s->dim, r = heads / kv_heads;

	attn_ref_max_kernel<<<grid, ATTN_REF_THREADS, 0, st>>>((const T *)s->q, (const T *)s->k, part, kv_len,
							       heads, kv_heads, dim, r);
	attn_ref_kernel<<<grid, ATTN_REF_THREADS, 0, st>>>((const T *)s->q, (const T *)s->k, (const T *)s->v,
							   part, ref, kv_len, heads, kv_heads, dim, r);
	attn_out_kernel<<<(unsigned)((n + 255) / 256), 256, 0, st>>>((const T *)s->out.data, got, n);
}

/*
 * Every output against the reference computed on the GPU (attn_ref_launch), head by head: the worst
 * ||out - ref|| / ||ref|| of a head, against the output type's rounding (bf16 keeps 8 bits, f16 11), so
 * that one wrong element of 128 stands out however many heads there are; the first NaN by name.
 */
static int attn_check(struct kctx *ctx)
{
	struct attn_state *s = (struct attn_state *)ctx->priv;
	size_t n = (size_t)s->batch * s->heads * s->dim, i, h, worst = 0;
	double *ref = (double *)xmalloc(n * sizeof(double)), *d_ref = NULL, rel = 0;
	double tol = s->dtype == CUDA_BF16 ? 1e-2 : 5e-3;
	float *got = (float *)xmalloc(n * sizeof(float)), *d_got = NULL;
	double2 *d_part = NULL;
	size_t parts = (size_t)s->batch * s->kv_heads * attn_ref_chunks(s->kv_len) * 8;
	cudaStream_t st = cuda_stream(ctx);
	int ret = 0;
	cudaError_t e = cudaMalloc(&d_ref, n * sizeof(double));

	if (e == cudaSuccess && (e = cudaMalloc(&d_got, n * sizeof(float))) == cudaSuccess &&
	    (e = cudaMalloc(&d_part, parts * sizeof(double2))) == cudaSuccess &&
	    (e = cudaMemsetAsync(d_ref, 0, n * sizeof(double), st)) == cudaSuccess) {
		if (s->dtype == CUDA_BF16)
			attn_ref_launch<__nv_bfloat16>(s, d_part, d_ref, d_got, n, st);
		else
			attn_ref_launch<__half>(s, d_part, d_ref, d_got, n, st);
		if ((e = cudaGetLastError()) == cudaSuccess &&
		    (e = cudaMemcpyAsync(ref, d_ref, n * sizeof(double), cudaMemcpyDeviceToHost, st)) ==
			    cudaSuccess &&
		    (e = cudaMemcpyAsync(got, d_got, n * sizeof(float), cudaMemcpyDeviceToHost, st)) == cudaSuccess)
			e = cudaStreamSynchronize(st);
	}
	cudaFree(d_ref);
	cudaFree(d_got);
	cudaFree(d_part);
	for (h = 0; h < n / s->dim && e == cudaSuccess && !ret; h++) {
		double err = 0, norm = 0, x;

		for (i = h * s->dim; i < (h + 1) * s->dim && !ret; i++) {
			if (isnan(got[i]))
				ret = kfail(ctx, "out[%zu][%zu][%zu] is NaN, want %g", h / s->heads, h % s->heads,
					    i % s->dim, ref[i]);
			err += (got[i] - ref[i]) * (got[i] - ref[i]);
			norm += ref[i] * ref[i];
		}
		x = norm > 0 ? sqrt(err / norm) : INFINITY;
		if (!(x <= rel)) {
			rel = x;
			worst = h;
		}
	}
	free(ref);
	free(got);
	CUDA_CHECK(ctx, e);
	if (!ret && !(rel <= tol))
		ret = kfail(ctx, "relative error %.3g in out[%zu][%zu], the worst of %zu heads; tolerance %g", rel,
			    worst / s->heads, worst % s->heads, n / s->dim, tol);
	return ret;
}

/* Only the cache counts: q and the output are a few kilobytes next to it. */
static void attn_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct attn_state *s = (const struct attn_state *)ctx->priv;

	*flops = 4.0 * s->batch * s->heads * s->kv_len * s->dim;
	*bytes = 2.0 * s->batch * s->kv_heads * s->kv_len * s->dim * 2;
}

/* A decode step makes one token a sequence. */
static double attn_tokens(const struct kctx *ctx)
{
	return (double)((const struct attn_state *)ctx->priv)->batch;
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
	k.tokens = attn_tokens;
	k.teardown = attn_teardown;
	return k;
}

extern "C" const struct kernel_ops kernel_cuda_decode_attn = decode_attn_ops();
