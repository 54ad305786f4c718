/* sleep.c: a kernel that only waits: tests the timing loop, and ms = 0 benchmarks dispatch overhead. */
#include <stdlib.h>
#include "kernel.h"

struct sleep_state {
	double ms, jitter;
	uint64_t rng;
};

static const struct param_def sleep_params[] = {
	{ .name = "ms", .type = PARAM_FLOAT, .def = "1", .doc = "milliseconds per launch" },
	{ .name = "jitter", .type = PARAM_FLOAT, .def = "0",
	  .doc = "extra milliseconds per launch, uniform in [0, jitter)" },
	{ .name = NULL }
};

static int sleep_setup(struct kctx *ctx)
{
	struct sleep_state *s = xcalloc(1, sizeof(*s));

	ctx->priv = s;
	s->ms = kparam_double(ctx, "ms");
	s->jitter = kparam_double(ctx, "jitter");
	s->rng = 0x5eed;
	if (s->ms < 0 || s->jitter < 0)
		return kfail(ctx, "ms and jitter must not be negative");
	return 0;
}

/* ms = 0 without jitter must cost only a call: the dispatch benchmarks time exactly this path. */
static int sleep_launch(struct kctx *ctx)
{
	struct sleep_state *s = ctx->priv;
	double ms = s->ms;

	if (s->jitter > 0)
		ms += s->jitter * (double)(krand(&s->rng) >> 11) * 0x1p-53;
	if (ms <= 0)
		return 0;
	if (ksleep(ctx, ms))
		return kfail(ctx, "cancelled during a %g ms sleep", ms);
	return 0;
}

static void sleep_teardown(struct kctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}

const struct kernel_ops kernel_sleep = {
	.name = "sleep",
	.doc = "sleep ms (+ random jitter) milliseconds per launch",
	.params = sleep_params,
	.place = KERNEL_CPU,
	.gpus = 1,
	.setup = sleep_setup,
	.launch = sleep_launch,
	.teardown = sleep_teardown,
};
