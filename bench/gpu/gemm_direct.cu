/* gemm_direct.cu: cuBLASLt bf16 GEMM timed directly (CUDA events around each launch, median of 50 after a
 * warm-up of 10 launches and at least WARM seconds back to back), to compare with the sweep's gemm cell of
 * the same shape: same data (cuda_fill_uniform, seeds 1 and 2, [-1, 1]), same descriptors (column-major,
 * n/n, fp32 compute), same heuristic and 32 MiB workspace. The SM clock is read through NVML after each
 * sample (as the cell does), so that times taken at different clocks of a power-limited card can be
 * compared as cycles (time x clock). With FLUSH = 1, the L2 is flushed before each sample as the cell's
 * cold L2 is (cuda_l2_flush). With TRACE = s > 0, it samples for s seconds instead, each sample behind a
 * gate as sweep's (a kernel that spins at least 10 us, counting its SM's cycles against the global timer),
 * and prints a line per sample: seconds since the first, microseconds, the gate's clock and NVML's, in MHz;
 * and first the global timer's smallest step; with MODES set, it compares the idle time between samples
 * instead (modes()). Build: nvcc ... gemm_direct.cu ../../src/nvml.c -lcublasLt
 * -ldl. Usage: gemm_direct [M N K [GPU [WARM [FLUSH [TRACE]]]]] (default 8192 8192 8192 0 0 0 0). */
#include <algorithm>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <string>
#include <vector>
#include <cublasLt.h>
#include "../../kernels/cuda_common.h"
#include "../../src/nvml.h"

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

static double wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Reads the global timer 4096 times back to back: its smallest and largest steps, and how many it took. */
static __global__ void timer_step(unsigned long long *out)
{
	unsigned long long prev, t, lo = ~0ULL, hi = 0, steps = 0;

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(prev));
	for (int i = 0; i < 4096; i++) {
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
		if (t != prev) {
			lo = t - prev < lo ? t - prev : lo;
			hi = t - prev > hi ? t - prev : hi;
			steps++;
		}
		prev = t;
	}
	out[0] = lo;
	out[1] = hi;
	out[2] = steps;
}

/* A gate whose page the host opens, as sweep's: spins at least min_ns and until opened; its cycles and ns. */
struct page {
	volatile unsigned open;
	unsigned long long cycles, ns;
};

static __global__ void gate_wait(volatile struct page *p, unsigned long long min_ns)
{
	unsigned long long t0, t, c0 = clock64();

	asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
	do
		asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
	while ((!p->open || t - t0 < min_ns) && t - t0 < 2000000000ULL);
	p->cycles = clock64() - c0;
	p->ns = t - t0;
}

/* The trace: samples for `seconds`, each behind a gate, a line each. */
static int trace(struct kctx *ctx, cublasLtHandle_t lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
		 cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld, cublasLtMatmulHeuristicResult_t *h,
		 void *a, void *b, void *d, void *ws, uint64_t wsb, void *fl, size_t fl_bytes, void *nv,
		 double seconds)
{
	cudaStream_t st = cuda_stream(ctx);
	unsigned long long *g, *gd;
	struct page *pg, *pgd;
	const float alpha = 1, beta = 0;
	cudaEvent_t e0, e1;
	double t0 = wall_now();

	CUDA_CHECK(ctx, cudaHostAlloc((void **)&g, 3 * sizeof(*g), cudaHostAllocMapped));
	CUDA_CHECK(ctx, cudaHostGetDevicePointer((void **)&gd, g, 0));
	CUDA_CHECK(ctx, cudaHostAlloc((void **)&pg, sizeof(*pg), cudaHostAllocMapped));
	CUDA_CHECK(ctx, cudaHostGetDevicePointer((void **)&pgd, pg, 0));
	pg->open = 1;   /* opened at once: each gate spins its 10 us */
	CUDA_CHECK(ctx, cudaEventCreate(&e0));
	CUDA_CHECK(ctx, cudaEventCreate(&e1));
	timer_step<<<1, 1, 0, st>>>(gd);
	CUDA_CHECK(ctx, cudaStreamSynchronize(st));
	printf("global timer: steps of %llu to %llu ns, %llu steps in 4096 reads\n", g[0], g[1], g[2]);
	for (unsigned i = 0; wall_now() - t0 < seconds; i++) {
		unsigned mhz = 0;
		float ms;

		gate_wait<<<1, 1, 0, st>>>(pgd, 10000);
		if (fl)
			CUDA_CHECK(ctx, cuda_l2_flush(fl, fl_bytes, i, 528, st));
		CUDA_CHECK(ctx, cudaEventRecord(e0, st));
		CUBLAS_CHECK(ctx, cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &h->algo,
						 ws, wsb, st));
		CUDA_CHECK(ctx, cudaEventRecord(e1, st));
		CUDA_CHECK(ctx, cudaEventSynchronize(e1));
		CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, e0, e1));
		if (nv)
			nvml_clock(nv, NVML_SM, 0, &mhz);
		printf("trace %.4f %.2f %.1f %u\n", wall_now() - t0, ms * 1e3,
		       1e3 * (double)pg->cycles / (double)pg->ns, mhz);
	}
	cudaFreeHost(g);
	cudaFreeHost(pg);
	return 0;
}

/*
 * The idle time between samples against the kernel's time: each mode of MODES (space-separated) samples for
 * `seconds`, ROUNDS times in turn: "s<X>" as sweep did (the host waits for a sample, idles X us more, then
 * enqueues the next behind a 10 us gate), "g<X>" the same with the gate held X us, "p" one sample enqueued
 * ahead (sweep's now: the next gate starts as a sample ends). A line each: median, gate clock, samples, and
 * the range of the medians of consecutive 20 ms windows after the first 0.1 s.
 */
static int modes(struct kctx *ctx, cublasLtHandle_t lt, cublasLtMatmulDesc_t op, cublasLtMatrixLayout_t la,
		 cublasLtMatrixLayout_t lb, cublasLtMatrixLayout_t ld, cublasLtMatmulHeuristicResult_t *h,
		 void *a, void *b, void *d, void *ws, uint64_t wsb, void *fl, size_t fl_bytes, double seconds)
{
	cudaStream_t st = cuda_stream(ctx);
	struct page *pg, *pgd;
	const float alpha = 1, beta = 0;
	cudaEvent_t e0[2], e1[2];
	int rounds = getenv("ROUNDS") ? atoi(getenv("ROUNDS")) : 3;
	unsigned flushv = 0;

	CUDA_CHECK(ctx, cudaHostAlloc((void **)&pg, 2 * sizeof(*pg), cudaHostAllocMapped));
	CUDA_CHECK(ctx, cudaHostGetDevicePointer((void **)&pgd, pg, 0));
	for (int i = 0; i < 2; i++) {
		CUDA_CHECK(ctx, cudaEventCreate(&e0[i]));
		CUDA_CHECK(ctx, cudaEventCreate(&e1[i]));
	}
	auto put = [&](int p, double gate_us) -> int {
		pg[p].open = 0;
		gate_wait<<<1, 1, 0, st>>>(pgd + p, (unsigned long long)(gate_us * 1e3));
		if (fl)
			CUDA_CHECK(ctx, cuda_l2_flush(fl, fl_bytes, ++flushv, 528, st));
		CUDA_CHECK(ctx, cudaEventRecord(e0[p], st));
		CUBLAS_CHECK(ctx, cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &h->algo, ws,
						 wsb, st));
		CUDA_CHECK(ctx, cudaEventRecord(e1[p], st));
		__sync_synchronize();
		pg[p].open = 1;
		return 0;
	};
	for (int round = 0; round < rounds; round++) {
		std::string all = getenv("MODES");
		size_t at = 0;

		while (at < all.size()) {
			size_t end = all.find(' ', at);
			std::string m = all.substr(at, end == std::string::npos ? std::string::npos : end - at);
			at = end == std::string::npos ? all.size() : end + 1;
			if (m.empty())
				continue;
			std::vector<double> us, when, mhz, win, part;
			double x = atof(m.c_str() + 1), t0 = wall_now(), start = 0.1, gate = m[0] == 'g' ? x : 10;
			int ahead = m[0] == 'p';
			float ms;

			if (put(0, gate))
				return -1;
			for (unsigned i = 0; wall_now() - t0 < seconds; i++) {
				int p = i % 2;

				if (ahead && put(1 - p, gate))
					return -1;
				CUDA_CHECK(ctx, cudaEventSynchronize(e1[p]));
				CUDA_CHECK(ctx, cudaEventElapsedTime(&ms, e0[p], e1[p]));
				us.push_back(ms * 1e3);
				when.push_back(wall_now() - t0);
				mhz.push_back(1e3 * (double)pg[p].cycles / (double)pg[p].ns);
				for (double w = wall_now(); m[0] == 's' && (wall_now() - w) * 1e6 < x;)
					;
				if (!ahead && put(1 - p, gate))
					return -1;
			}
			CUDA_CHECK(ctx, cudaStreamSynchronize(st));
			for (size_t i = 0; i < us.size(); i++) {
				if (when[i] < 0.1)
					continue;
				if (when[i] - start >= 0.02) {
					std::sort(part.begin(), part.end());
					if (part.size() > 5)
						win.push_back(part[part.size() / 2]);
					part.clear();
					start = when[i];
				}
				part.push_back(us[i]);
			}
			std::sort(win.begin(), win.end());
			std::sort(mhz.begin(), mhz.end());
			part = us;
			std::sort(part.begin(), part.end());
			if (win.empty())
				continue;
			printf("mode %-5s round %d: median %.3f us, gate %.0f MHz, %zu samples, %zu windows of 20 ms: "
			       "medians %.3f-%.3f us (%.2f %%)\n", m.c_str(), round, part[part.size() / 2],
			       mhz[mhz.size() / 2], us.size(), win.size(), win.front(), win.back(),
			       (win.back() / win.front() - 1) * 100);
			fflush(stdout);
		}
	}
	cudaFreeHost(pg);
	return 0;
}

static int run(struct kctx *ctx, long m, long n, long k, double warm, int flush, double tr)
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
	double t0, warmed;
	void *fl = NULL, *nv = NULL;
	size_t fl_bytes = 0;
	std::vector<unsigned> clk;
	char pci[32];

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
	if (flush) {
		int l2 = 0;

		CUDA_CHECK(ctx, cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, ctx->gpu));
		fl_bytes = 2 * (size_t)l2;
		CUDA_CHECK(ctx, cudaMalloc(&fl, fl_bytes + 16));
	}
	if (cudaDeviceGetPCIBusId(pci, sizeof(pci), ctx->gpu) != cudaSuccess || nvml_device(pci, NULL, &nv))
		nv = NULL;
	t0 = wall_now();
	for (int i = 0; i < WARMUP || wall_now() - t0 < warm; i++) {
		CUBLAS_CHECK(ctx, cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &h.algo,
						 ws, wsb, st));
		if (i % 8 == 7)
			CUDA_CHECK(ctx, cudaStreamSynchronize(st));
	}
	warmed = wall_now() - t0;
	if (tr > 0 && getenv("MODES"))
		return modes(ctx, lt, op, la, lb, ld, &h, a, b, d, ws, wsb, fl, fl_bytes, tr);
	if (tr > 0)
		return trace(ctx, lt, op, la, lb, ld, &h, a, b, d, ws, wsb, fl, fl_bytes, nv, tr);
	for (int i = 0; i < SAMPLES; i++) {
		float t;
		unsigned mhz = 0;

		if (fl)
			CUDA_CHECK(ctx, cuda_l2_flush(fl, fl_bytes, (unsigned)i, 528, st));
		CUDA_CHECK(ctx, cudaEventRecord(e0, st));
		CUBLAS_CHECK(ctx, cublasLtMatmul(lt, op, &alpha, a, la, b, lb, &beta, d, ld, d, ld, &h.algo,
						 ws, wsb, st));
		CUDA_CHECK(ctx, cudaEventRecord(e1, st));
		CUDA_CHECK(ctx, cudaEventSynchronize(e1));
		CUDA_CHECK(ctx, cudaEventElapsedTime(&t, e0, e1));
		ms.push_back(t);
		if (nv && !nvml_clock(nv, NVML_SM, 0, &mhz))
			clk.push_back(mhz);
	}
	std::sort(ms.begin(), ms.end());
	std::sort(clk.begin(), clk.end());
	double med = (ms[SAMPLES / 2 - 1] + ms[SAMPLES / 2]) / 2, flops = 2.0 * m * n * k;
	unsigned mhz = clk.empty() ? 0 : clk[clk.size() / 2];
	printf("gemm_direct bf16 %ldx%ldx%ld algo %d%s: median %.5f ms = %.1f TFLOP/s (min %.5f, max %.5f ms), "
	       "%d samples after %.1f s of warm-up, SM clock median %u MHz: %.3f Mcycles\n", m, n, k, id,
	       flush ? " (cold L2)" : "", med, flops / med / 1e9, ms[0], ms[SAMPLES - 1], SAMPLES, warmed, mhz,
	       med * 1e-3 * mhz);
	if (fl)
		cudaFree(fl);
	return 0;
}

int main(int argc, char **argv)
{
	long m = argc > 3 ? atol(argv[1]) : 8192, n = argc > 3 ? atol(argv[2]) : 8192;
	long k = argc > 3 ? atol(argv[3]) : 8192;
	int gpu = argc > 4 ? atoi(argv[4]) : 0;
	double warm = argc > 5 ? atof(argv[5]) : 0;
	int flush = argc > 6 ? atoi(argv[6]) : 0;
	double tr = argc > 7 ? atof(argv[7]) : 0;
	struct kctx ctx;
	cudaStream_t st;

	memset(&ctx, 0, sizeof(ctx));
	ctx.gpu = gpu;
	if (cudaSetDevice(gpu) != cudaSuccess || cudaStreamCreate(&st) != cudaSuccess) {
		fprintf(stderr, "gemm_direct: no GPU %d\n", gpu);
		return 1;
	}
	ctx.stream = st;
	if (run(&ctx, m, n, k, warm, flush, tr)) {
		fprintf(stderr, "gemm_direct: %s\n", ctx.err);
		return 1;
	}
	return 0;
}
