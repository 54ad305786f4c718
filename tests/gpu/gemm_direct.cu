/* gemm_direct.cu: cuBLASLt bf16 GEMM timed directly (CUDA events, median of 50 after warm-up), to compare
 * with the sweep's gemm cell of the same shape: same data (cuda_fill_uniform, seeds 1 and 2, [-1, 1]),
 * same descriptors (column-major, n/n, fp32 compute), same heuristic and 32 MiB workspace.
 * Usage: gemm_direct [M N K [GPU]] (default 8192 8192 8192 0). Prints one line per statistic. */
#include <algorithm>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <vector>
#include <cublasLt.h>
#include "../../kernels/cuda_common.h"

#define WARMUP 10
#define SAMPLES 50

/* cuda_common.h's checks report through kfail (kernels/registry.c); this program prints instead. */
extern "C" int kfail(struct kctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int run(struct kctx *ctx, long m, long n, long k)
{
	cublasLtHandle_t lt;
	cublasLtMatmulDesc_t op;
	cublasLtMatrixLayout_t la, lb, ld;
	cublasLtMatmulPreference_t pref;
	cublasLtMatmulHeuristicResult_t h;
	cublasOperation_t nn = CUBLAS_OP_N;
	uint64_t wsb = 32u << 20;
	void *a, *b, *d, *ws;
	cudaEvent_t e0, e1;
	cudaStream_t st = cuda_stream(ctx);
	std::vector<float> ms;
	const float alpha = 1, beta = 0;
	int found = 0, id = -1;
	size_t len;

	CUDA_CHECK(ctx, cudaMalloc(&a, (size_t)m * k * 2));
	CUDA_CHECK(ctx, cudaMalloc(&b, (size_t)k * n * 2));
	CUDA_CHECK(ctx, cudaMalloc(&d, (size_t)m * n * 2));
	CUDA_CHECK(ctx, cudaMalloc(&ws, wsb));
	if (cuda_fill_uniform(ctx, a, (size_t)m * k, CUDA_BF16, 1, -1, 1) ||
	    cuda_fill_uniform(ctx, b, (size_t)k * n, CUDA_BF16, 2, -1, 1))
		return -1;
	CUBLAS_CHECK(ctx, cublasLtCreate(&lt));
	CUBLAS_CHECK(ctx, cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
	CUBLAS_CHECK(ctx, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSA, &nn, sizeof(nn)));
	CUBLAS_CHECK(ctx, cublasLtMatmulDescSetAttribute(op, CUBLASLT_MATMUL_DESC_TRANSB, &nn, sizeof(nn)));
	CUBLAS_CHECK(ctx, cublasLtMatrixLayoutCreate(&la, CUDA_R_16BF, m, k, m));
	CUBLAS_CHECK(ctx, cublasLtMatrixLayoutCreate(&lb, CUDA_R_16BF, k, n, k));
	CUBLAS_CHECK(ctx, cublasLtMatrixLayoutCreate(&ld, CUDA_R_16BF, m, n, m));
	CUBLAS_CHECK(ctx, cublasLtMatmulPreferenceCreate(&pref));
	CUBLAS_CHECK(ctx, cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
							       &wsb, sizeof(wsb)));
	CUBLAS_CHECK(ctx, cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, ld, ld, pref, 1, &h, &found));
	if (found < 1)
		return kfail(ctx, "no algorithm");
	cublasLtMatmulAlgoConfigGetAttribute(&h.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof(id), &len);
	CUDA_CHECK(ctx, cudaEventCreate(&e0));
	CUDA_CHECK(ctx, cudaEventCreate(&e1));
	for (int i = 0; i < WARMUP + SAMPLES; i++) {
		float t;

		CUDA_CHECK(ctx, cudaEventRecord(e0, st));
		CUBLAS_CHECK(ctx, cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &h.algo,
						 ws, wsb, st));
		CUDA_CHECK(ctx, cudaEventRecord(e1, st));
		CUDA_CHECK(ctx, cudaEventSynchronize(e1));
		CUDA_CHECK(ctx, cudaEventElapsedTime(&t, e0, e1));
		if (i >= WARMUP)
			ms.push_back(t);
	}
	std::sort(ms.begin(), ms.end());
	double med = (ms[SAMPLES / 2 - 1] + ms[SAMPLES / 2]) / 2, flops = 2.0 * m * n * k;
	printf("gemm_direct bf16 %ldx%ldx%ld algo %d: median %.4f ms = %.1f TFLOP/s (min %.4f ms = %.1f, "
	       "max %.4f ms), %d samples after %d warm-up\n", m, n, k, id, med, flops / med / 1e9, ms[0],
	       flops / ms[0] / 1e9, ms[SAMPLES - 1], SAMPLES, WARMUP);
	return 0;
}

int main(int argc, char **argv)
{
	long m = argc > 3 ? atol(argv[1]) : 8192, n = argc > 3 ? atol(argv[2]) : 8192;
	long k = argc > 3 ? atol(argv[3]) : 8192;
	int gpu = argc > 4 ? atoi(argv[4]) : 0;
	struct kctx ctx;
	cudaStream_t st;

	memset(&ctx, 0, sizeof(ctx));
	ctx.gpu = gpu;
	if (cudaSetDevice(gpu) != cudaSuccess || cudaStreamCreate(&st) != cudaSuccess) {
		fprintf(stderr, "gemm_direct: no GPU %d\n", gpu);
		return 1;
	}
	ctx.stream = st;
	if (run(&ctx, m, n, k)) {
		fprintf(stderr, "gemm_direct: %s\n", ctx.err);
		return 1;
	}
	return 0;
}
