/* cpu_read.c: host memory read bandwidth: a vectorisable sum of 64-bit words. */
#include <stdlib.h>
#include "kernel.h"

struct read_state {
	struct kout out;       /* first: the sum, for tests (kernel.h) */
	uint64_t sum, ref;
	uint64_t *buf;
	size_t words;
};

static const struct param_def read_params[] = {
	{ .name = "bytes", .type = PARAM_BYTES, .def = "256M",
	  .doc = "bytes read per launch (whole 8-byte words)" },
	{ .name = NULL }
};

static int read_setup(struct kctx *ctx)
{
	struct read_state *s = xcalloc(1, sizeof(*s));
	long bytes = kparam_long(ctx, "bytes");
	uint64_t ref = 0;
	size_t i;

	ctx->priv = s;
	s->out.data = &s->sum;
	s->out.bytes = sizeof(s->sum);
	if (bytes < 8)
		return kfail(ctx, "bytes must be at least 8, not %ld", bytes);
	s->words = (size_t)bytes / 8;
	if (posix_memalign((void **)&s->buf, 64, s->words * 8))
		return kfail(ctx, "cannot allocate %zu bytes", s->words * 8);
	kfill_random(s->buf, s->words * 8, 2);
	/* The reference is a plain serial sum: unsigned addition wraps the same in any order. */
	for (i = 0; i < s->words; i++)
		ref += s->buf[i];
	s->ref = ref;
	return 0;
}

/* Four independent sums let the compiler use vector adds without reassociation concerns (integers);
 * the result goes to priv, which outlives the call, so the loop cannot be dropped. */
static int read_launch(struct kctx *ctx)
{
	struct read_state *s = ctx->priv;
	const uint64_t *restrict p = s->buf;
	uint64_t a = 0, b = 0, c = 0, d = 0;
	size_t i, n = s->words;

	for (i = 0; i + 4 <= n; i += 4) {
		a += p[i];
		b += p[i + 1];
		c += p[i + 2];
		d += p[i + 3];
	}
	for (; i < n; i++)
		a += p[i];
	s->sum = a + b + c + d;
	__asm__ volatile("" : : "r"(s->sum) : "memory");
	return 0;
}

static int read_check(struct kctx *ctx)
{
	struct read_state *s = ctx->priv;

	if (s->sum != s->ref)
		return kfail(ctx, "sum 0x%016llx, want 0x%016llx", (unsigned long long)s->sum,
			     (unsigned long long)s->ref);
	return 0;
}

static void read_counts(const struct kctx *ctx, double *flops, double *bytes)
{
	const struct read_state *s = ctx->priv;

	*flops = 0;
	*bytes = 8.0 * s->words;
}

static void read_teardown(struct kctx *ctx)
{
	struct read_state *s = ctx->priv;

	if (s) {
		free(s->buf);
		free(s);
	}
	ctx->priv = NULL;
}

const struct kernel_ops kernel_cpu_read = {
	.name = "cpu.read",
	.doc = "host memory read bandwidth: sum of 64-bit words",
	.params = read_params,
	.place = KERNEL_CPU,
	.gpus = 1,
	.setup = read_setup,
	.launch = read_launch,
	.check = read_check,
	.counts = read_counts,
	.teardown = read_teardown,
};
