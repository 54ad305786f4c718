/* cpu_gemm.c: dense matrix multiply C = A * B on the host through OpenBLAS (cblas), f32 or f64. */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <cblas.h>
#include "kernel.h"

/* OpenBLAS extensions; declared here too so that a netlib-style cblas.h still compiles. */
void openblas_set_num_threads(int num_threads);
int openblas_get_num_threads(void);

/* The check recomputes a corner of C of at most this many rows and columns, with the full K. */
#define GEMM_CHECK_DIM 64

struct gemm_state {
	struct kout out;       /* first: C, for tests (kernel.h) */
	void *a, *b;
	long m, n, k;
	int f64;
	int saved_threads;     /* OpenBLAS's thread count before setup, restored by teardown; 0: untouched */
};

static const struct param_def gemm_params[] = {
	{ .name = "M", .type = PARAM_INT, .def = "256", .doc = "rows of A and C" },
	{ .name = "N", .type = PARAM_INT, .def = "256", .doc = "columns of B and C" },
	{ .name = "K", .type = PARAM_INT, .def = "256", .doc = "columns of A, rows of B" },
	{ .name = "dtype", .type = PARAM_STR, .def = "f32", .doc = "element type", .choices = "f32|f64" },
	{ .name = "threads", .type = PARAM_INT, .def = "0",
	  .doc = "OpenBLAS threads (0: the library default)" },
	{ .name = NULL }
};

static size_t gemm_elem(const struct gemm_state *s)
{
	return s->f64 ? sizeof(double) : sizeof(float);
}

/* Uniform in [-1, 1), never exactly zero: zeros would let a wrong kernel pass and time faster. */
static double gemm_uniform(uint64_t *rng)
{
	double x;

	do
		x = 2.0 * ((double)(krand(rng) >> 11) * 0x1p-53) - 1.0;
	while (x == 0);
	return x;
}

static int gemm_alloc(struct kctx *ctx, void **p, long rows, long cols, size_t elem, uint64_t seed)
{
	uint64_t rng = seed;
	size_t i, n = (size_t)rows * (size_t)cols;

	if ((double)rows * (double)cols * (double)elem > 1e15 || posix_memalign(p, 64, n * elem))
		return kfail(ctx, "cannot allocate a %ld x %ld matrix", rows, cols);
	for (i = 0; i < n; i++) {
		if (elem == sizeof(double))
			((double *)*p)[i] = gemm_uniform(&rng);
		else
			((float *)*p)[i] = (float)gemm_uniform(&rng);
	}
	return 0;
}

static int gemm_setup(struct kctx *ctx)
{
	struct gemm_state *s = xcalloc(1, sizeof(*s));
	const char *dtype = kparam_str(ctx, "dtype");
	long threads = kparam_long(ctx, "threads");

	ctx->priv = s;
	s->m = kparam_long(ctx, "M");
	s->n = kparam_long(ctx, "N");
	s->k = kparam_long(ctx, "K");
	if (s->m <= 0 || s->n <= 0 || s->k <= 0 || s->m > INT32_MAX || s->n > INT32_MAX || s->k > INT32_MAX)
		return kfail(ctx, "M, N and K must be in 1..%d, not %ld, %ld, %ld", INT32_MAX, s->m, s->n,
			     s->k);
	if (!strcmp(dtype, "f64"))
		s->f64 = 1;
	else if (strcmp(dtype, "f32"))
		return kfail(ctx, "dtype '%s' is not f32 or f64", dtype);
	if (threads < 0)
		return kfail(ctx, "threads must not be negative");
	if (threads > 0) {
		s->saved_threads = openblas_get_num_threads();
		openblas_set_num_threads((int)threads);
	}
	if (gemm_alloc(ctx, &s->a, s->m, s->k, gemm_elem(s), 3) ||
	    gemm_alloc(ctx, &s->b, s->k, s->n, gemm_elem(s), 4) ||
	    gemm_alloc(ctx, &s->out.data, s->m, s->n, gemm_elem(s), 5))
		return -1;
	s->out.bytes = (size_t)s->m * s->n * gemm_elem(s);
	return 0;
}

static int gemm_launch(struct kctx *ctx)
{
	struct gemm_state *s = ctx->priv;
	int m = (int)s->m, n = (int)s->n, k = (int)s->k;

	if (s->f64)
		cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0, s->a, k, s->b, n, 0.0,
			    s->out.data, n);
	else
		cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, s->a, k, s->b, n, 0.0f,
			    s->out.data, n);
	return 0;
}

static double gemm_at(const struct gemm_state *s, const void *p, size_t i)
{
	return s->f64 ? ((const double *)p)[i] : ((const float *)p)[i];
}

/*
 * A naive product, in double, of the top-left corner with the full K. The error bound of a dot product
 * of length K in precision eps is about K * eps * sum |a||b|; twice that leaves room for blocked
 * summation orders while a wrong element (or a NaN) still fails.
 */
static int gemm_check(struct kctx *ctx)
{
	struct gemm_state *s = ctx->priv;
	double eps = s->f64 ? DBL_EPSILON : FLT_EPSILON;
	long rows = s->m < GEMM_CHECK_DIM ? s->m : GEMM_CHECK_DIM;
	long cols = s->n < GEMM_CHECK_DIM ? s->n : GEMM_CHECK_DIM;
	long i, j, l;

	for (i = 0; i < rows; i++) {
		for (j = 0; j < cols; j++) {
			double ref = 0, mag = 0, got, tol;

			for (l = 0; l < s->k; l++) {
				double p = gemm_at(s, s->a, (size_t)i * s->k + l) *
					   gemm_at(s, s->b, (size_t)l * s->n + j);
				ref += p;
				mag += fabs(p);
			}
			got = gemm_at(s, s->out.data, (size_t)i * s->n + j);
			tol = 2.0 * s->k * eps * mag;
			if (!(fabs(got - ref) <= tol))
				return kfail(ctx, "C[%ld][%ld] = %.9g, want %.9g (tolerance %.3g)", i, j, got,
					     ref, tol);
		}
	}
	return 0;
}

static void gemm_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct gemm_state *s = ctx->priv;
	double m = s->m, n = s->n, k = s->k;

	*flops = 2.0 * m * n * k;
	*bytes = (m * k + k * n + m * n) * gemm_elem(s);
}

static void gemm_teardown(struct kctx *ctx)
{
	struct gemm_state *s = ctx->priv;

	if (s) {
		if (s->saved_threads > 0)
			openblas_set_num_threads(s->saved_threads);
		free(s->a);
		free(s->b);
		free(s->out.data);
		free(s);
	}
	ctx->priv = NULL;
}

const struct kernel_ops kernel_cpu_gemm = {
	.name = "cpu.gemm",
	.doc = "host GEMM through OpenBLAS: C = A * B, row-major, f32 or f64",
	.params = gemm_params,
	.place = KERNEL_CPU,
	.gpus = 1,
	.setup = gemm_setup,
	.launch = gemm_launch,
	.check = gemm_check,
	.counts = gemm_counts,
	.teardown = gemm_teardown,
};
