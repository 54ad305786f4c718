/* cpu_allreduce.c: an all-reduce among a gang of workers over TCP, the CPU twin of the NCCL gangs. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gang_tcp.h"
#include "kernel.h"

/* Once a member is cancelled, how long it waits for the others before it gives the operation up. */
#define GRACE_SECONDS 3.0

struct allreduce {
	void *send, *recv;
	long count;
	int f64;
	enum gang_tcp_op op;
};

static const struct param_def params[] = {
	{ "bytes", PARAM_BYTES, "1M", "bytes reduced per member", NULL },
	{ "dtype", PARAM_STR, "f32", "element type", "f32|f64" },
	{ "op", PARAM_STR, "sum", "reduction", "sum|max|min" },
	{ "gpus", PARAM_INT, "2", "workers one cell uses (the gang's size)", NULL },
	{ "hang", PARAM_INT, "-1", "gang rank that stalls until the cell's timeout (tests timeouts); -1 none", NULL },
	{ "crash", PARAM_INT, "-1", "gang rank whose process dies (SIGSEGV) on its first launch; -1 none", NULL },
	{ NULL, 0, NULL, NULL, NULL },
};

/* Member r's element i: exact in f32 for any sum of a few members, and different on every member. */
static double value(int rank, long i)
{
	return (rank + 1) * 0.5 + (double)(i % 8);
}

static int setup(struct kctx *ctx)
{
	struct allreduce *a = xcalloc(1, sizeof(*a));
	size_t elem;

	ctx->priv = a;
	a->f64 = !strcmp(kparam_str(ctx, "dtype"), "f64");
	a->op = !strcmp(kparam_str(ctx, "op"), "max")   ? GANG_TCP_MAX
		: !strcmp(kparam_str(ctx, "op"), "min") ? GANG_TCP_MIN
							: GANG_TCP_SUM;
	elem = a->f64 ? 8 : 4;
	a->count = kparam_long(ctx, "bytes") / (long)elem;
	if (a->count < 1)
		return kfail(ctx, "bytes must hold at least one element");
	if (ctx->gang_size > 1 && !ctx->gang_comm)
		return kfail(ctx, "cpu.allreduce: the gang has no communicator");
	a->send = xmalloc((size_t)a->count * elem);
	a->recv = xcalloc((size_t)a->count, elem);
	for (long i = 0; i < a->count; i++) {
		if (a->f64)
			((double *)a->send)[i] = value(ctx->gang_rank, i);
		else
			((float *)a->send)[i] = (float)value(ctx->gang_rank, i);
	}
	return 0;
}

static int reduce(struct kctx *ctx, const void *send, void *recv, long count, int f64, enum gang_tcp_op op)
{
	int rc;

	/* A gang of one (gpus: 1) reduces over itself: a copy, so grids can mix sizes. */
	if (ctx->gang_size < 2) {
		memcpy(recv, send, (size_t)count * (f64 ? 8 : 4));
		return 0;
	}
	rc = gang_tcp_allreduce(ctx->gang_comm, send, recv, count, f64, op, ctx->cancel, GRACE_SECONDS);
	if (rc == -2)
		return kfail(ctx, "the all-reduce did not finish: a member never joined");
	return rc ? kfail(ctx, "the all-reduce failed: a member is gone") : 0;
}

static int launch(struct kctx *ctx)
{
	struct allreduce *a = ctx->priv;

	if (ctx->gang_rank == kparam_long(ctx, "crash"))
		raise(SIGSEGV);

	if (ctx->gang_rank == kparam_long(ctx, "hang")) {
		/* Stall until the watchdog cancels this cell, then join so that nobody's call stays pending. */
		while (!*ctx->cancel)
			ksleep(ctx, 50);
		reduce(ctx, a->send, a->recv, a->count, a->f64, a->op);
		return kfail(ctx, "gang rank %d hung until the timeout (hang = %d)", ctx->gang_rank,
			     ctx->gang_rank);
	}
	return reduce(ctx, a->send, a->recv, a->count, a->f64, a->op);
}

static int check(struct kctx *ctx)
{
	struct allreduce *a = ctx->priv;
	int n = ctx->gang_size;
	long wrong = 0;

	for (long i = 0; i < a->count; i++) {
		double want = a->op == GANG_TCP_SUM ? n * (double)(i % 8) + 0.5 * n * (n + 1) / 2.0
			    : a->op == GANG_TCP_MAX ? value(n - 1, i) : value(0, i);
		double got = a->f64 ? ((double *)a->recv)[i] : ((float *)a->recv)[i];

		wrong += got != want;
	}
	json_obj_add(ctx->metrics, "errors", wrong ? "1" : "0", JSON_NUM);
	if (wrong)
		return kfail(ctx, "%ld of %ld elements wrong", wrong, a->count);
	return 0;
}

static void counts(const struct kctx *ctx, double *flops, double *bytes)
{
	*flops = 0;
	*bytes = (double)kparam_long(ctx, "bytes");
}

static void teardown(struct kctx *ctx)
{
	struct allreduce *a = ctx->priv;

	if (a) {
		free(a->send);
		free(a->recv);
	}
	free(a);
	ctx->priv = NULL;
}

static int gang_blob(struct kctx *ctx, void *blob, size_t *len)
{
	return gang_tcp_blob(blob, len, ctx->err, sizeof(ctx->err));
}

static int gang_open(struct kctx *ctx, const void *blob, size_t len, void **comm)
{
	struct gang_tcp *g;

	if (gang_tcp_open(ctx->gang_rank, ctx->gang_size, blob, len, ctx->cancel, &g, ctx->err, sizeof(ctx->err)))
		return -1;
	*comm = g;
	return 0;
}

static void gang_close(void *comm, int abort)
{
	gang_tcp_close(comm);
}

static int gang_max(struct kctx *ctx, double *v)
{
	double in = *v;

	return reduce(ctx, &in, v, 1, 1, GANG_TCP_MAX);
}

/* nccl-tests' all-reduce bus bandwidth: each byte crosses 2(n-1)/n links. */
static void derive(const struct json_obj *params, int n, double seconds, struct json_obj *metrics)
{
	double bytes = 0, alg;
	char buf[64];

	parse_double(json_obj_get(params, "bytes") ? json_obj_get(params, "bytes") : "0", &bytes);
	alg = bytes / seconds / 1e9;
	snprintf(buf, sizeof(buf), "%.17g", alg);
	json_obj_add(metrics, "algbw_gbs", buf, JSON_NUM);
	snprintf(buf, sizeof(buf), "%.17g", alg * 2.0 * (n - 1) / n);
	json_obj_add(metrics, "busbw_gbs", buf, JSON_NUM);
}

const struct kernel_ops kernel_cpu_allreduce = {
	.name = "cpu.allreduce",
	.doc = "all-reduce among a gang of workers over TCP (the CPU twin of nccl.all_reduce)",
	.params = params,
	.place = KERNEL_CPU,
	.gpus = 2,
	.setup = setup,
	.launch = launch,
	.check = check,
	.counts = counts,
	.teardown = teardown,
	.gang_blob = gang_blob,
	.gang_open = gang_open,
	.gang_close = gang_close,
	.gang_max = gang_max,
	.derive = derive,
};
