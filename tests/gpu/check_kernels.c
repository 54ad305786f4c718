/* check_kernels.c: every CUDA kernel on small cells run as a worker runs them, then each check against a
 * corrupted output; without a GPU, that every CUDA cell fails cleanly. Also prints GPU facts and bindings.
 *
 * Built against build/libsweep.a (see tests/gpu/smoke.sh): check_kernels [GPU [small]], or
 * check_kernels GPU cells KERNEL PARAMS [KERNEL PARAMS...] to time given cells as a sweep would. Prints
 * "ok - " and "not ok - " lines like the unit tests and exits 1 when anything failed. The broken variants
 * need no hook in the kernels: a CUDA kernel's priv starts with struct kout (kernels/cuda_common.h), so this
 * program overwrites the output after a good launch, through cudaMemcpy, and expects check() to refuse. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cuda_runtime_api.h>
#include "../../kernels/kernel.h"
#include "../../src/hostinfo.h"
#include "../../src/measure.h"
#include "../../src/topo.h"
#include "../../src/executor.h"

static int failures;

#define REPORT(cond, ...) do { \
	if (cond) printf("ok - "); else { failures++; printf("not ok - "); } \
	printf(__VA_ARGS__); printf("\n"); fflush(stdout); } while (0)

struct cell {
	const char *kernel;
	const char *params;    /* JSON; parameters left out take the kernel's defaults */
	const char *fails; /* NULL: must pass on a GPU; else a substring of the expected error; "?": either */
	int big;               /* skipped in "small" mode (under compute-sanitizer) */
};

static const struct cell cells[] = {
	{ "copy", "{\"bytes\": 1048579}", NULL, 0 },
	{ "copy", "{\"bytes\": 1048579, \"method\": \"kernel\", \"unroll\": 1}", NULL, 0 },
	{ "copy", "{\"bytes\": 1048579, \"method\": \"kernel\", \"unroll\": 4}", NULL, 0 },
	{ "copy", "{\"bytes\": 15, \"method\": \"plain\", \"unroll\": 8}", NULL, 0 },
	{ "copy", "{\"bytes\": \"64M\", \"method\": \"kernel\", \"unroll\": 2}", NULL, 1 },
	{ "copy", "{\"bytes\": 4096, \"method\": \"kernel\", \"unroll\": 3}", "unroll must be", 0 },
	{ "copy", "{\"bytes\": 1048579, \"method\": \"bulk\"}", NULL, 0 },
	{ "copy", "{\"bytes\": 100000, \"method\": \"bulk\", \"chunk\": 4096}", NULL, 0 },
	{ "copy", "{\"bytes\": 9, \"method\": \"bulk\"}", NULL, 0 },
	{ "copy", "{\"bytes\": \"64M\", \"method\": \"bulk\", \"chunk\": \"48K\"}", NULL, 1 },
	{ "copy", "{\"bytes\": 4096, \"method\": \"bulk\", \"chunk\": 100}", "chunk must be", 0 },
	{ "h2d", "{\"bytes\": 1048581}", NULL, 0 },
	{ "d2h", "{\"bytes\": 1048581}", NULL, 0 },
	{ "h2d", "{\"bytes\": \"64M\"}", NULL, 1 },
	{ "gemm", "{\"M\": 256, \"N\": 256, \"K\": 256, \"dtype\": \"bf16\"}", NULL, 0 },
	{ "gemm", "{\"M\": 1000, \"N\": 520, \"K\": 72, \"dtype\": \"bf16\", \"ta\": \"t\"}", NULL, 0 },
	{ "gemm", "{\"M\": 1000, \"N\": 520, \"K\": 72, \"dtype\": \"bf16\", \"tb\": \"t\"}", NULL, 0 },
	{ "gemm",
	  "{\"M\": 1000, \"N\": 520, \"K\": 72, \"dtype\": \"bf16\", \"ta\": \"t\", "
	  "\"tb\": \"t\"}",
	  NULL, 0 },
	{ "gemm", "{\"M\": 768, \"N\": 640, \"K\": 1024, \"dtype\": \"f16\"}", NULL, 0 },
	{ "gemm", "{\"M\": 512, \"N\": 384, \"K\": 2048, \"dtype\": \"f32\", \"tb\": \"t\"}", NULL, 0 },
	{ "gemm", "{\"M\": 512, \"N\": 256, \"K\": 4096, \"dtype\": \"fp8\", \"ta\": \"t\"}", NULL, 0 },
	{ "gemm", "{\"M\": 4096, \"N\": 4096, \"K\": 4096, \"dtype\": \"bf16\"}", NULL, 1 },
	/* Hopper's fp8 kernels want ta=t: as stored, cuBLASLt may have none ("?": either outcome is fine) */
	{ "gemm", "{\"M\": 512, \"N\": 256, \"K\": 256, \"dtype\": \"fp8\"}", "?", 0 },
	{ "decode_attn", "{\"batch\": 2, \"heads\": 8, \"kv_heads\": 2, \"kv_len\": 1000}", NULL, 0 },
	{ "decode_attn",
	  "{\"batch\": 1, \"heads\": 32, \"kv_heads\": 8, \"dim\": 64, \"kv_len\": 5000, "
	  "\"dtype\": \"f16\"}",
	  NULL, 0 },
	{ "decode_attn", "{\"batch\": 3, \"heads\": 8, \"kv_heads\": 8, \"dim\": 256, \"kv_len\": 300}", NULL,
	  0 },
	{ "decode_attn", "{\"batch\": 1, \"heads\": 16, \"kv_heads\": 2, \"kv_len\": 70001}", NULL, 0 },
	{ "decode_attn", "{\"batch\": 2, \"heads\": 4, \"kv_heads\": 4, \"kv_len\": 1}", NULL, 0 },
	{ "decode_attn", "{\"batch\": 4, \"heads\": 32, \"kv_heads\": 8, \"kv_len\": 65536}", NULL, 1 },
	{ "decode_attn", "{\"heads\": 12, \"kv_heads\": 4}", "heads / kv_heads", 0 },
};

static double metric(const struct result *r, const char *name)
{
	const char *v = json_obj_get(&r->metrics, name);
	double d;

	return v && !parse_double(v, &d) ? d : NAN;
}

/* One cell through executor_run: defaults, the timer, warm-up, check and samples as in a real run. */
static const char *timing = "{min_samples: 5, min_time: 0.05, max_noise: 1, timeout: 20}";

static void run_cell(const struct cell *c, int gpu, int have_gpu)
{
	char *yaml = xasprintf("sweep: check\nkernel: %s\ntiming: %s\n", c->kernel, timing);
	struct executor w = { .rank = 0, .gpu = gpu, .host = "check" };
	struct task t = { .cell = 1, .params = (char *)c->params };
	struct spec s;
	struct result r;

	if (spec_parse("check.yaml", yaml, strlen(yaml), &s)) {
		REPORT(0, "%s: the spec does not parse", c->kernel);
		free(yaml);
		return;
	}
	w.spec = &s;
	result_init(&r);
	executor_run(&w, &t, &r);
	if (!have_gpu) {
		REPORT(r.status == RESULT_ERROR && r.error && *r.error,
		       "%s %s on GPU %d, absent: error result '%s'", c->kernel, c->params, gpu,
		       r.error ? r.error : "");
	} else if (c->fails && !strcmp(c->fails, "?")) {
		REPORT(r.status == RESULT_OK ||
			       (r.status == RESULT_ERROR && r.error && strstr(r.error, "cuBLASLt")),
		       "%s %s: %s %s", c->kernel, c->params, result_status_name[r.status],
		       r.error ? r.error : "");
	} else if (c->fails) {
		REPORT(r.status == RESULT_ERROR && r.error && strstr(r.error, c->fails),
		       "%s %s is refused: '%s'", c->kernel, c->params, r.error ? r.error : "(ok)");
	} else {
		REPORT(r.status == RESULT_OK && r.nsamples >= 5,
		       "%s %s: %s, median %.4g ms, %.1f GB/s, "
		       "%.1f GFLOP/s, noise %.2f%%, n %d, throttled %d, clock %.0f MHz%s%s",
		       c->kernel, c->params, result_status_name[r.status], metric(&r, "seconds") * 1e3,
		       metric(&r, "gbs"), metric(&r, "gflops"), r.sum.noise * 100, r.nsamples, r.throttled,
		       r.nsamples ? r.clocks[0] : 0.0, r.error ? ": " : "", r.error ? r.error : "");
	}
	result_release(&r);
	executor_release(&w);
	spec_release(&s);
	free(yaml);
}

/* The kernel's parameters with defaults, as worker.c gives them: byte sizes as plain numbers. */
static void full_params(const struct kernel_ops *k, const char *text, struct json_obj *out)
{
	const struct param_def *d;
	char err[128], num[64];
	double v;

	if (json_parse_flat(text, out, 0, err, sizeof(err)))
		BUG("bad params %s: %s", text, err);
	for (d = k->params; d->name; d++)
		if (!json_obj_find(out, d->name)) {
			if (d->type == PARAM_BYTES && !parse_bytes(d->def, &v)) {
				snprintf(num, sizeof(num), "%.0f", v);
				json_obj_add(out, d->name, num, JSON_NUM);
			} else {
				json_obj_add(out, d->name, d->def,
					     d->type == PARAM_STR ? JSON_STR : JSON_NUM);
			}
		}
}

/* Overwrite part of the output: flip bit 6 of one byte in the middle (at an odd offset: the high byte of a
 * 16-bit element, so its exponent), or fill every byte with 0x3c. */
static int corrupt(const struct kout *o, int whole)
{
	unsigned char b;
	size_t at = o->bytes / 2 | 1;

	if (whole) {
		unsigned char *junk = malloc(o->bytes);
		int rc;

		memset(junk, 0x3c, o->bytes);
		rc = cudaMemcpy(o->data, junk, o->bytes, cudaMemcpyDefault) != cudaSuccess;
		free(junk);
		return rc ? -1 : 0;
	}
	if (at >= o->bytes)
		at = 0;
	if (cudaMemcpy(&b, (unsigned char *)o->data + at, 1, cudaMemcpyDefault) != cudaSuccess)
		return -1;
	b ^= 0x40;
	return cudaMemcpy((unsigned char *)o->data + at, &b, 1, cudaMemcpyDefault) != cudaSuccess ? -1 : 0;
}

/*
 * Setup, launch, check (must pass); flip one byte, check (must fail where every element is compared;
 * gemm compares a sample, so one byte may escape it: reported, not counted); overwrite all, check (must
 * fail).
 */
static void broken(const char *name, const char *params, int gpu, int every_byte)
{
	const struct kernel_ops *k = kernel_find(name);
	struct spec_timing tm = { .min_samples = 1, .l2_hot = 1 };
	struct json_obj p = JSON_OBJ_INIT, metrics = JSON_OBJ_INIT;
	volatile int cancel = 0;
	struct kctx ctx;
	void *state = NULL;
	int rc;

	memset(&ctx, 0, sizeof(ctx));
	full_params(k, params, &p);
	ctx.params = &p;
	ctx.gpu = gpu;
	ctx.cancel = &cancel;
	ctx.metrics = &metrics;
	if (timer_cuda.init(&ctx, &tm, &state)) {
		REPORT(0, "%s: timer: %s", name, ctx.err);
		goto out;
	}
	if (k->setup(&ctx) || k->launch(&ctx) || cudaStreamSynchronize(ctx.stream) != cudaSuccess) {
		REPORT(0, "%s %s: setup or launch: %s", name, params, ctx.err);
		goto done;
	}
	REPORT(k->check(&ctx) == 0, "%s %s: the good output passes (%s)", name, params, ctx.err);
	ctx.err[0] = '\0';
	if (corrupt(ctx.priv, 0)) {
		REPORT(0, "%s: cannot corrupt the output", name);
		goto done;
	}
	rc = k->check(&ctx);
	if (every_byte)
		REPORT(rc == -1, "%s: one flipped byte is caught: '%s'", name, ctx.err);
	else
		printf("# %s: one flipped byte %s (a sampled check): '%s'\n", name,
		       rc ? "caught" : "not sampled", ctx.err);
	ctx.err[0] = '\0';
	if (corrupt(ctx.priv, 1)) {
		REPORT(0, "%s: cannot corrupt the output", name);
		goto done;
	}
	REPORT(k->check(&ctx) == -1, "%s: an overwritten output is caught: '%s'", name, ctx.err);
done:
	if (k->teardown)
		k->teardown(&ctx);
	timer_cuda.fini(state);
out:
	json_obj_release(&p);
	json_obj_release(&metrics);
}

int main(int argc, char **argv)
{
	int ngpu = hostinfo_gpu_count(), gpu = argc > 1 ? atoi(argv[1]) : 0, i;
	int small = argc > 2 && !strcmp(argv[2], "small");
	struct json_obj facts = JSON_OBJ_INIT;
	struct strbuf sb = STRBUF_INIT;

	printf("# %d GPU(s)\n", ngpu);
	for (i = 0; i < ngpu; i++) {
		json_obj_release(&facts);
		REPORT(hostinfo_gpu(&facts, i) == 0 && json_obj_get(&facts, "gpu_uuid"), "facts of GPU %d",
		       i);
		sb_reset(&sb);
		json_obj_write(&sb, &facts);
		printf("# gpu %d: %s\n", i, sb.buf);
	}
	REPORT(hostinfo_gpu(&facts, ngpu) == -1, "no facts for GPU %d, which does not exist", ngpu);
	for (i = 0; i < (ngpu > 0 ? ngpu : 1); i++) {
		REPORT(topo_bind(ngpu > 0 ? i : -1, i, ngpu > 0 ? ngpu : 1, &sb) == 0,
		       "rank %d of %d near GPU %d: %s", i, ngpu > 0 ? ngpu : 1, ngpu > 0 ? i : -1, sb.buf);
	}
	topo_bind(-1, 0, 1, &sb);
	if (argc > 2 && !strcmp(argv[2], "cells")) {
		/* The timing the sweeps/ specs ask for, on the cells given. */
		timing = "{min_samples: 20, min_time: 0.2, max_noise: 0.01, timeout: 10}";
		for (i = 3; i + 1 < argc; i += 2) {
			struct cell c = { argv[i], argv[i + 1], NULL, 0 };

			run_cell(&c, gpu, ngpu > 0);
		}
	} else if (ngpu == 0) {
		/* No GPU: every CUDA cell is an error result, with the worker's gpu -1 or a made-up 0. */
		for (i = 0; i < (int)ARRAY_SIZE(cells); i++) {
			run_cell(&cells[i], -1, 0);
			run_cell(&cells[i], 0, 0);
		}
	} else {
		for (i = 0; i < (int)ARRAY_SIZE(cells); i++)
			if (!small || !cells[i].big)
				run_cell(&cells[i], gpu, 1);
		broken("copy", "{\"bytes\": 1048579}", gpu, 1);
		broken("copy", "{\"bytes\": 1048579, \"method\": \"kernel\"}", gpu, 1);
		broken("copy", "{\"bytes\": 1048579, \"method\": \"bulk\"}", gpu, 1);
		broken("h2d", "{\"bytes\": 1048579}", gpu, 1);
		broken("d2h", "{\"bytes\": 1048579}", gpu, 1);
		broken("gemm", "{\"M\": 512, \"N\": 512, \"K\": 512}", gpu, 0);
		broken("gemm", "{\"M\": 512, \"N\": 256, \"K\": 1024, \"dtype\": \"fp8\", \"ta\": \"t\"}",
		       gpu, 0);
		broken("decode_attn", "{\"batch\": 2, \"heads\": 4, \"kv_heads\": 1, \"kv_len\": 4000}", gpu,
		       1);
		broken("decode_attn",
		       "{\"batch\": 1, \"heads\": 8, \"kv_heads\": 4, \"kv_len\": 999, \"dtype\": \"f16\"}",
		       gpu, 1);
		/* 128 heads, the flipped byte in the 65th: a check of a sample of heads (the first and the
		 * last kv head's) lets it pass. */
		broken("decode_attn", "{\"batch\": 4, \"heads\": 32, \"kv_heads\": 8, \"kv_len\": 3000}", gpu,
		       1);
	}
	json_obj_release(&facts);
	sb_release(&sb);
	printf("%s: %d failure(s)\n", failures ? "FAILED" : "PASSED", failures);
	return failures ? 1 : 0;
}
