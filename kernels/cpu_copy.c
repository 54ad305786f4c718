/* cpu_copy.c: host memory copy bandwidth (memcpy between two buffers), counted as bytes read + written. */
#include <stdlib.h>
#include <string.h>
#include "kernel.h"

struct copy_state {
	struct kout out;       /* first: the destination, for tests (kernel.h) */
	void *src;
	size_t bytes;
};

static const struct param_def copy_params[] = {
	{ .name = "bytes", .type = PARAM_BYTES, .def = "64M", .doc = "bytes copied per launch" },
	{ .name = NULL }
};

/* Buffers come from posix_memalign, not xmalloc: a size too big for this host is the cell's error, not
 * a reason to kill the worker. */
static int copy_setup(struct kctx *ctx)
{
	struct copy_state *s = xcalloc(1, sizeof(*s));
	long bytes = kparam_long(ctx, "bytes");

	ctx->priv = s;
	if (bytes <= 0)
		return kfail(ctx, "bytes must be positive, not %ld", bytes);
	s->bytes = bytes;
	if (posix_memalign(&s->src, 64, s->bytes) || posix_memalign(&s->out.data, 64, s->bytes))
		return kfail(ctx, "cannot allocate 2 x %zu bytes", s->bytes);
	s->out.bytes = s->bytes;
	kfill_random(s->src, s->bytes, 1);
	/* Touch the destination so the first launch does not time page faults. */
	memset(s->out.data, 0, s->bytes);
	return 0;
}

static int copy_launch(struct kctx *ctx)
{
	struct copy_state *s = ctx->priv;

	memcpy(s->out.data, s->src, s->bytes);
	return 0;
}

static int copy_check(struct kctx *ctx)
{
	struct copy_state *s = ctx->priv;
	const unsigned char *a = s->out.data, *b = s->src;
	size_t i;

	if (!memcmp(a, b, s->bytes))
		return 0;
	for (i = 0; i < s->bytes && a[i] == b[i]; i++)
		;
	return kfail(ctx, "copy differs at byte %zu: 0x%02x, want 0x%02x", i, a[i], b[i]);
}

static void copy_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct copy_state *s = ctx->priv;

	*flops = 0;
	*bytes = 2.0 * s->bytes;
}

static void copy_teardown(struct kctx *ctx)
{
	struct copy_state *s = ctx->priv;

	if (s) {
		free(s->src);
		free(s->out.data);
		free(s);
	}
	ctx->priv = NULL;
}

const struct kernel_ops kernel_cpu_copy = {
	.name = "cpu.copy",
	.doc = "host memory copy bandwidth: memcpy, bytes read plus written",
	.params = copy_params,
	.place = KERNEL_CPU,
	.gpus = 1,
	.setup = copy_setup,
	.launch = copy_launch,
	.check = copy_check,
	.counts = copy_counts,
	.teardown = copy_teardown,
};
