/* cuda_gemm.cu: D = op(A) op(B) through cuBLASLt: f16, bf16, fp8 or f32 inputs, fp32 accumulation. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <cublasLt.h>
#define CUBLAS_STATUS_NAME lt.GetStatusString
#include "cuda_common.h"

/*
 * cuBLASLt is loaded (dlopen) where gemm cells run, before the first (the kernel's open), not linked:
 * loading its 540 MB library cost every sweep process, plan and report included, 210 MB of memory and
 * 80 ms, and a host without it could not start sweep at all; now only its gemm cells fail, saying why.
 */
#define GEMM_LT_FUNCS(X) \
	X(Create) \
	X(Destroy) \
	X(GetStatusString) \
	X(Matmul) \
	X(MatmulAlgoConfigGetAttribute) \
	X(MatmulAlgoGetHeuristic) \
	X(MatmulDescCreate) \
	X(MatmulDescDestroy) \
	X(MatmulDescSetAttribute) \
	X(MatmulPreferenceCreate) \
	X(MatmulPreferenceDestroy) \
	X(MatmulPreferenceSetAttribute) \
	X(MatrixLayoutCreate) \
	X(MatrixLayoutDestroy)
static struct {
#define X(f) decltype(&cublasLt##f) f;
	GEMM_LT_FUNCS(X)
#undef X
} lt;
static char lt_error[256];
static pthread_once_t lt_once = PTHREAD_ONCE_INIT;

static void gemm_lt_open(void)
{
	char name[32];
	void *lib;

	snprintf(name, sizeof(name), "libcublasLt.so.%d", CUBLAS_VER_MAJOR);
	if (!(lib = dlopen(name, RTLD_NOW | RTLD_LOCAL))) {
		snprintf(lt_error, sizeof(lt_error), "cannot load %s: %s", name, dlerror());
		return;
	}
#define X(f) \
	if (!(lt.f = (decltype(&cublasLt##f))dlsym(lib, "cublasLt" #f))) { \
		snprintf(lt_error, sizeof(lt_error), "%s has no cublasLt%s", name, #f); \
		return; \
	}
	GEMM_LT_FUNCS(X)
#undef X
}

/* 0 once cuBLASLt is loaded; else -1 with why in ctx->err. The kernel's open, so that the 80 ms (above)
 * are not in a process's first gemm cell. */
static int gemm_lt_load(struct kctx *ctx)
{
	pthread_once(&lt_once, gemm_lt_open);
	return lt_error[0] ? kfail(ctx, "%s", lt_error) : 0;
}

#define GEMM_WORKSPACE (32u << 20)
#define GEMM_SAMPLES 256

struct gemm_state {
	struct kout out;               /* first: D, for tests (cuda_common.h) */
	void *a, *b, *ws;
	float *one;                    /* device 1.0f: fp8's scale factors */
	long m, n, k;
	int ta, tb;
	enum cuda_dtype in;            /* A and B */
	enum cuda_dtype dout;          /* C and D: the input type, bf16 for fp8 */
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulAlgo_t algo;
};

static const struct param_def gemm_params[] = {
	{ "M", PARAM_INT, "4096", "rows of D and of op(A)", NULL },
	{ "N", PARAM_INT, "4096", "columns of D and of op(B)", NULL },
	{ "K", PARAM_INT, "4096", "columns of op(A), rows of op(B)", NULL },
	{ "dtype", PARAM_STR, "bf16", "input type (fp8 is e4m3 with a bf16 output; accumulation is fp32)",
	  "f16|bf16|fp8|f32" },
	{ "ta", PARAM_STR, "n", "A as stored (n: M x K) or transposed (t: stored K x M); column-major",
	  "n|t" },
	{ "tb", PARAM_STR, "n", "B as stored (n: K x N) or transposed (t: stored N x K); column-major",
	  "n|t" },
	{},
};

static cudaDataType_t gemm_cuda_type(enum cuda_dtype t)
{
	switch (t) {
	case CUDA_F16: return CUDA_R_16F;
	case CUDA_BF16: return CUDA_R_16BF;
	case CUDA_FP8: return CUDA_R_8F_E4M3;
	default: return CUDA_R_32F;
	}
}

/*
 * The reference for a sample of D's elements: one thread per element, a plain fp32 dot product over the
 * stored inputs (so fp8's quantisation is the same on both sides). Column-major throughout: op(A)(i, l) is
 * A[i + l*M] when A is as stored, A[l + i*K] when transposed; op(B)(l, j) is B[l + j*K] or B[j + l*N].
 */
template <typename TI, typename TO>
__global__ void gemm_ref_kernel(const TI *a, const TI *b, const TO *d, long m, long n, long k, int ta, int tb,
				const long *rows, const long *cols, int count, float *ref, float *got)
{
	int s = blockIdx.x * blockDim.x + threadIdx.x;
	long i, j, l;
	float acc = 0;

	if (s >= count)
		return;
	i = rows[s];
	j = cols[s];
	for (l = 0; l < k; l++) {
		float x = cuda_to_float(ta ? a[l + i * k] : a[i + l * m]);
		float y = cuda_to_float(tb ? b[j + l * n] : b[l + j * k]);

		acc = fmaf(x, y, acc);
	}
	ref[s] = acc;
	got[s] = cuda_to_float(d[i + j * m]);
}

static void gemm_ref_launch(const struct gemm_state *s, const long *rows, const long *cols, float *ref,
			    float *got, cudaStream_t st)
{
	int g = (GEMM_SAMPLES + 127) / 128;

	switch (s->in) {
	case CUDA_F32:
		gemm_ref_kernel<<<g, 128, 0, st>>>((const float *)s->a, (const float *)s->b,
						   (const float *)s->out.data, s->m, s->n, s->k, s->ta, s->tb,
						   rows, cols, GEMM_SAMPLES, ref, got);
		break;
	case CUDA_F16:
		gemm_ref_kernel<<<g, 128, 0, st>>>((const __half *)s->a, (const __half *)s->b,
						   (const __half *)s->out.data, s->m, s->n, s->k, s->ta,
						   s->tb, rows, cols, GEMM_SAMPLES, ref, got);
		break;
	case CUDA_BF16:
		gemm_ref_kernel<<<g, 128, 0, st>>>((const __nv_bfloat16 *)s->a, (const __nv_bfloat16 *)s->b,
						   (const __nv_bfloat16 *)s->out.data, s->m, s->n, s->k,
						   s->ta, s->tb, rows, cols, GEMM_SAMPLES, ref, got);
		break;
	case CUDA_FP8:
		gemm_ref_kernel<<<g, 128, 0, st>>>((const __nv_fp8_e4m3 *)s->a, (const __nv_fp8_e4m3 *)s->b,
						   (const __nv_bfloat16 *)s->out.data, s->m, s->n, s->k,
						   s->ta, s->tb, rows, cols, GEMM_SAMPLES, ref, got);
		break;
	}
}

/* The cuBLASLt descriptors and the algorithm its heuristic ranks first for this shape. */
static int gemm_plan(struct kctx *ctx, struct gemm_state *s)
{
	cublasOperation_t opa = s->ta ? CUBLAS_OP_T : CUBLAS_OP_N, opb = s->tb ? CUBLAS_OP_T : CUBLAS_OP_N;
	cudaDataType_t tin = gemm_cuda_type(s->in), tout = gemm_cuda_type(s->dout);
	uint64_t ws = GEMM_WORKSPACE;
	cublasLtMatmulHeuristicResult_t h;
	int found = 0, id = -1;
	char num[32];
	size_t len;

	if (gemm_lt_load(ctx))
		return -1;
	CUBLAS_CHECK(ctx, lt.Create(&s->lt));
	CUBLAS_CHECK(ctx, lt.MatmulDescCreate(&s->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	CUBLAS_CHECK(ctx,
		     lt.MatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSA, &opa, sizeof(opa)));
	CUBLAS_CHECK(ctx,
		     lt.MatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_TRANSB, &opb, sizeof(opb)));
	if (s->in == CUDA_FP8) {
		CUBLAS_CHECK(ctx, lt.MatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
								 &s->one, sizeof(s->one)));
		CUBLAS_CHECK(ctx, lt.MatmulDescSetAttribute(s->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
								 &s->one, sizeof(s->one)));
	}
	/* Stored shapes: A is M x K (K x M transposed), B is K x N (N x K transposed), D is M x N. */
	CUBLAS_CHECK(ctx, lt.MatrixLayoutCreate(&s->la, tin, s->ta ? s->k : s->m, s->ta ? s->m : s->k,
						      s->ta ? s->k : s->m));
	CUBLAS_CHECK(ctx, lt.MatrixLayoutCreate(&s->lb, tin, s->tb ? s->n : s->k, s->tb ? s->k : s->n,
						      s->tb ? s->n : s->k));
	CUBLAS_CHECK(ctx, lt.MatrixLayoutCreate(&s->ld, tout, s->m, s->n, s->m));
	CUBLAS_CHECK(ctx, lt.MatmulPreferenceCreate(&s->pref));
	CUBLAS_CHECK(ctx, lt.MatmulPreferenceSetAttribute(
				  s->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof(ws)));
	if (lt.MatmulAlgoGetHeuristic(s->lt, s->op, s->la, s->lb, s->ld, s->ld, s->pref, 1, &h,
					   &found) != CUBLAS_STATUS_SUCCESS ||
	    found < 1)
		return kfail(ctx, "cuBLASLt has no algorithm for %s %ldx%ldx%ld ta=%c tb=%c%s",
			     kparam_str(ctx, "dtype"), s->m, s->n, s->k, s->ta ? 't' : 'n', s->tb ? 't' : 'n',
			     s->in == CUDA_FP8 && (!s->ta || s->tb) ? " (fp8 wants ta=t tb=n)" : "");
	s->algo = h.algo;
	/* Which kernel the heuristic picked is part of the result: another cuBLAS may pick another. */
	if (lt.MatmulAlgoConfigGetAttribute(&s->algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &len) ==
	    CUBLAS_STATUS_SUCCESS) {
		snprintf(num, sizeof(num), "%d", id);
		json_obj_add(ctx->metrics, "cublaslt_algo", num, JSON_NUM);
	}
	return 0;
}

static int gemm_setup(struct kctx *ctx)
{
	struct gemm_state *s = (struct gemm_state *)xcalloc(1, sizeof(*s));
	const float one = 1.0f;
	int major = 0, minor = 0, t = cuda_dtype_parse(kparam_str(ctx, "dtype"));
	size_t na, nb, nd;

	ctx->priv = s;
	s->m = kparam_long(ctx, "M");
	s->n = kparam_long(ctx, "N");
	s->k = kparam_long(ctx, "K");
	s->ta = !strcmp(kparam_str(ctx, "ta"), "t");
	s->tb = !strcmp(kparam_str(ctx, "tb"), "t");
	if (t < 0)
		return kfail(ctx, "unknown dtype '%s'", kparam_str(ctx, "dtype"));
	if (s->m <= 0 || s->n <= 0 || s->k <= 0)
		return kfail(ctx, "M, N and K must be positive, not %ld, %ld, %ld", s->m, s->n, s->k);
	s->in = (enum cuda_dtype)t;
	s->dout = s->in == CUDA_FP8 ? CUDA_BF16 : s->in;
	if (s->in == CUDA_FP8) {
		CUDA_CHECK(ctx, cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, ctx->gpu));
		CUDA_CHECK(ctx, cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, ctx->gpu));
		if (major * 10 + minor < 89)
			return kfail(ctx, "fp8 needs compute capability 8.9 or newer; GPU %d is %d.%d",
				     ctx->gpu, major, minor);
	}
	na = (size_t)s->m * s->k;
	nb = (size_t)s->k * s->n;
	nd = (size_t)s->m * s->n;
	s->out.bytes = nd * cuda_dtype_size(s->dout);
	CUDA_CHECK(ctx, cudaMalloc(&s->a, na * cuda_dtype_size(s->in)));
	CUDA_CHECK(ctx, cudaMalloc(&s->b, nb * cuda_dtype_size(s->in)));
	CUDA_CHECK(ctx, cudaMalloc(&s->out.data, s->out.bytes));
	CUDA_CHECK(ctx, cudaMalloc(&s->ws, GEMM_WORKSPACE));
	CUDA_CHECK(ctx, cudaMalloc(&s->one, sizeof(float)));
	CUDA_CHECK(ctx, cudaMemcpy(s->one, &one, sizeof(one), cudaMemcpyHostToDevice));
	if (cuda_fill_uniform(ctx, s->a, na, s->in, 1, -1, 1) ||
	    cuda_fill_uniform(ctx, s->b, nb, s->in, 2, -1, 1) ||
	    cuda_fill_bytes(ctx, s->out.data, s->out.bytes, 3))
		return -1;
	if (gemm_plan(ctx, s))
		return -1;
	CUDA_CHECK(ctx, cudaStreamSynchronize(cuda_stream(ctx)));
	return 0;
}

static int gemm_launch(struct kctx *ctx)
{
	struct gemm_state *s = (struct gemm_state *)ctx->priv;
	const float alpha = 1.0f, beta = 0.0f;

	CUBLAS_CHECK(ctx,
		     lt.Matmul(s->lt, s->op, &alpha, s->a, s->la, s->b, s->lb, &beta, s->out.data, s->ld,
				    s->out.data, s->ld, &s->algo, s->ws, GEMM_WORKSPACE, cuda_stream(ctx)));
	return 0;
}

/*
 * ||D - ref|| / ||ref|| over the sampled elements, against the rounding of the output type: a wrong
 * element of a random product is off by about its own size, far over any of these.
 */
static int gemm_check(struct kctx *ctx)
{
	struct gemm_state *s = (struct gemm_state *)ctx->priv;
	long rows[GEMM_SAMPLES], cols[GEMM_SAMPLES], *d_idx = NULL;
	float ref[GEMM_SAMPLES], got[GEMM_SAMPLES], *d_val = NULL;
	double err = 0, norm = 0, worst = 0,
	       tol = s->dout == CUDA_F32   ? 1e-4
		     : s->dout == CUDA_F16 ? 2e-3
					   : 1e-2;
	uint64_t seed = 42;
	int i, bad = -1;
	cudaError_t e;

	for (i = 0; i < GEMM_SAMPLES; i++) {
		/* The corners first: the edges of a tiled kernel are where indexing goes wrong. */
		rows[i] = i < 4 ? (i & 1 ? s->m - 1 : 0) : (long)(krand(&seed) % (uint64_t)s->m);
		cols[i] = i < 4 ? (i & 2 ? s->n - 1 : 0) : (long)(krand(&seed) % (uint64_t)s->n);
	}
	CUDA_CHECK(ctx, cudaMalloc(&d_idx, 2 * sizeof(rows)));
	if ((e = cudaMalloc(&d_val, 2 * sizeof(ref))) == cudaSuccess &&
	    (e = cudaMemcpyAsync(d_idx, rows, sizeof(rows), cudaMemcpyHostToDevice, cuda_stream(ctx))) ==
		    cudaSuccess &&
	    (e = cudaMemcpyAsync(d_idx + GEMM_SAMPLES, cols, sizeof(cols), cudaMemcpyHostToDevice,
				 cuda_stream(ctx))) == cudaSuccess) {
		gemm_ref_launch(s, d_idx, d_idx + GEMM_SAMPLES, d_val, d_val + GEMM_SAMPLES,
				cuda_stream(ctx));
		if ((e = cudaGetLastError()) == cudaSuccess &&
		    (e = cudaMemcpyAsync(ref, d_val, sizeof(ref), cudaMemcpyDeviceToHost,
					 cuda_stream(ctx))) == cudaSuccess &&
		    (e = cudaMemcpyAsync(got, d_val + GEMM_SAMPLES, sizeof(got), cudaMemcpyDeviceToHost,
					 cuda_stream(ctx))) == cudaSuccess)
			e = cudaStreamSynchronize(cuda_stream(ctx));
	}
	cudaFree(d_idx);
	cudaFree(d_val);
	CUDA_CHECK(ctx, e);
	for (i = 0; i < GEMM_SAMPLES; i++) {
		double d = (double)got[i] - ref[i];

		if (isnan(got[i]))
			return kfail(ctx, "D(%ld, %ld) is NaN, want %g", rows[i], cols[i], ref[i]);
		err += d * d;
		norm += (double)ref[i] * ref[i];
		if (fabs(d) > worst) {
			worst = fabs(d);
			bad = i;
		}
	}
	if (norm > 0 && sqrt(err / norm) <= tol)
		return 0;
	return kfail(ctx,
		     "relative error %.3g over %d sampled elements, tolerance %g; worst D(%ld, %ld) = %g, "
		     "want %g",
		     norm > 0 ? sqrt(err / norm) : INFINITY, GEMM_SAMPLES, tol, rows[bad], cols[bad],
		     got[bad], ref[bad]);
}

static void gemm_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct gemm_state *s = (const struct gemm_state *)ctx->priv;
	size_t in = cuda_dtype_size(s->in);

	*flops = 2.0 * s->m * s->n * s->k;
	*bytes = (double)(s->m * s->k + s->k * s->n) * in + (double)s->out.bytes;
}

static void gemm_teardown(struct kctx *ctx)
{
	struct gemm_state *s = (struct gemm_state *)ctx->priv;

	if (!s)
		return;
	cudaStreamSynchronize(cuda_stream(ctx));
	if (s->pref)
		lt.MatmulPreferenceDestroy(s->pref);
	if (s->la)
		lt.MatrixLayoutDestroy(s->la);
	if (s->lb)
		lt.MatrixLayoutDestroy(s->lb);
	if (s->ld)
		lt.MatrixLayoutDestroy(s->ld);
	if (s->op)
		lt.MatmulDescDestroy(s->op);
	if (s->lt)
		lt.Destroy(s->lt);
	cudaFree(s->a);
	cudaFree(s->b);
	cudaFree(s->out.data);
	cudaFree(s->ws);
	cudaFree(s->one);
	free(s);
	ctx->priv = NULL;
}

static struct kernel_ops gemm_ops(void)
{
	struct kernel_ops k = {};

	k.name = "gemm";
	k.doc = "dense matrix product through cuBLASLt (heuristic algorithm, 32 MiB workspace, fp32 "
		"accumulation)";
	k.params = gemm_params;
	k.place = KERNEL_CUDA;
	k.gpus = 1;
	k.setup = gemm_setup;
	k.launch = gemm_launch;
	k.check = gemm_check;
	k.counts = gemm_counts;
	k.teardown = gemm_teardown;
	k.open = gemm_lt_load;
	return k;
}

extern "C" const struct kernel_ops kernel_cuda_gemm = gemm_ops();
