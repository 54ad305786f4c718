/* debug_fail.c: a kernel that fails on purpose (error, crash, hang, exit) to test retries and quarantine. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "kernel.h"

enum fail_mode { FAIL_ERROR, FAIL_ABORT, FAIL_SEGV, FAIL_HANG, FAIL_EXIT, FAIL_OK, FAIL_STUCK };
static const char *const fail_mode_names[] = { "error", "abort", "segv", "hang", "exit", "ok", "stuck", NULL };

struct fail_state {
	enum fail_mode mode;
	int match;             /* the "on" condition holds for this cell */
	double ms;
};

static const struct param_def fail_params[] = {
	{ .name = "mode", .type = PARAM_STR, .def = "error", .doc = "what a launch does",
	  .choices = "error|abort|segv|hang|exit|ok|stuck" },
	{ .name = "on", .type = PARAM_STR, .def = "",
	  .doc = "fail only in cells where this \"name=value\" holds (\"\": every cell)" },
	{ .name = "i", .type = PARAM_INT, .def = "0", .doc = "a free axis, to make many cells" },
	{ .name = "ms", .type = PARAM_FLOAT, .def = "0", .doc = "milliseconds to sleep before acting" },
	{ .name = NULL }
};

/* "name=value" against the cell's parameters: equal as text, or as numbers ("2" matches 2.0). A name
 * the cell lacks never matches. */
static int fail_match(const struct kctx *ctx, const char *cond)
{
	const char *eq = strchr(cond, '='), *val;
	double a, b;
	char *name;
	int ok;

	if (!*cond)
		return 1;
	if (!eq)
		return -1;
	name = xstrndup(cond, eq - cond);
	val = json_obj_get(ctx->params, name);
	free(name);
	if (!val)
		return 0;
	ok = !strcmp(val, eq + 1) || (!parse_double(val, &a) && !parse_double(eq + 1, &b) && a == b);
	return ok;
}

/* Calls of open in this process, which every cell reports as its metric "opened": 1 when the process was
 * opened once, before its first cell, whatever cells it ran. */
static int fail_opened;

static int fail_open(struct kctx *ctx)
{
	(void)ctx;
	fail_opened++;
	return 0;
}

static int fail_setup(struct kctx *ctx)
{
	struct fail_state *s = xcalloc(1, sizeof(*s));
	const char *mode = kparam_str(ctx, "mode"), *on = kparam_str(ctx, "on");
	char num[16];
	int i;

	ctx->priv = s;
	for (i = 0; fail_mode_names[i]; i++)
		if (!strcmp(mode, fail_mode_names[i]))
			break;
	if (!fail_mode_names[i])
		return kfail(ctx, "unknown mode '%s'", mode);
	s->mode = i;
	s->match = fail_match(ctx, on);
	if (s->match < 0)
		return kfail(ctx, "on: '%s' is not name=value", on);
	s->ms = kparam_double(ctx, "ms");
	snprintf(num, sizeof(num), "%d", fail_opened);
	json_obj_add(ctx->metrics, "opened", num, JSON_NUM);
	return 0;
}

/* A real fault, also in the sanitizer build (which would otherwise report the null write and exit 1). */
__attribute__((no_sanitize("undefined"), no_sanitize_address, noreturn)) static void fail_segv(void)
{
	volatile int *volatile null = NULL;

	*null = 1;
	raise(SIGSEGV);   /* in case the write did not fault */
	abort();
}

static int fail_launch(struct kctx *ctx)
{
	struct fail_state *s = ctx->priv;

	if (ksleep(ctx, s->ms))
		return kfail(ctx, "cancelled during a %g ms sleep", s->ms);
	if (!s->match)
		return 0;
	switch (s->mode) {
	case FAIL_ERROR:
		return kfail(ctx, "debug.fail: failing on purpose");
	case FAIL_ABORT:
		abort();
	case FAIL_SEGV:
		fail_segv();
	case FAIL_HANG:
		while (!*ctx->cancel)
			ksleep(ctx, 10);
		return kfail(ctx, "hung: cancelled after timeout");
	case FAIL_EXIT:
		_exit(7);
	case FAIL_OK:
		return 0;
	case FAIL_STUCK:
		/* Deaf to its cancel flag, like a kernel spinning on the GPU: only a kill ends it. */
		for (;;)
			pause();
	}
	BUG("debug.fail: mode %d", s->mode);
}

static void fail_teardown(struct kctx *ctx)
{
	free(ctx->priv);
	ctx->priv = NULL;
}

const struct kernel_ops kernel_debug_fail = {
	.name = "debug.fail",
	.doc = "fail on purpose: error, abort, segv, hang (until cancelled), stuck (until killed) or exit, in every "
	       "cell or where on= holds",
	.params = fail_params,
	.place = KERNEL_CPU,
	.gpus = 1,
	.setup = fail_setup,
	.launch = fail_launch,
	.teardown = fail_teardown,
	.open = fail_open,
};
