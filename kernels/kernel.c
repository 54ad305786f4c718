/* kernel.c: what every kernel uses: typed access to a cell's parameters, failures, random data, sleeps. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include "kernel.h"

const struct param_def *kernel_param(const struct kernel_ops *k, const char *name)
{
	const struct param_def *p;

	for (p = k->params; p && p->name; p++)
		if (!strcmp(p->name, name))
			return p;
	return NULL;
}

int kernel_gang_size(const struct kernel_ops *k, const struct json_obj *params)
{
	const char *v = kernel_param(k, "gpus") ? json_obj_get(params, "gpus") : NULL;
	const struct param_def *d = kernel_param(k, "gpus");
	long n;

	if (!v && d)
		v = d->def;
	if (v && !parse_long(v, &n))
		return n > 1 ? (int)n : 1;
	return k->gpus > 1 ? k->gpus : 1;
}

static const char *kparam_text(const struct kctx *ctx, const char *name)
{
	const char *v = json_obj_get(ctx->params, name);

	if (!v)
		BUG("kernel parameter '%s' missing from the cell", name);
	return v;
}

/* An integer written as "1e6" or "256.0" is accepted: YAML and JSON writers disagree on how to
 * print whole numbers, and the value is still exact. */
long kparam_long(const struct kctx *ctx, const char *name)
{
	const char *v = kparam_text(ctx, name);
	double d;
	long l;

	if (!parse_long(v, &l))
		return l;
	if (!parse_double(v, &d) && d == floor(d) && fabs(d) < 9.2e18)
		return (long)d;
	BUG("kernel parameter '%s' is not an integer: '%s'", name, v);
}

double kparam_double(const struct kctx *ctx, const char *name)
{
	const char *v = kparam_text(ctx, name);
	double d;

	if (parse_double(v, &d))
		BUG("kernel parameter '%s' is not a number: '%s'", name, v);
	return d;
}

const char *kparam_str(const struct kctx *ctx, const char *name)
{
	return kparam_text(ctx, name);
}

int kfail(struct kctx *ctx, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(ctx->err, sizeof(ctx->err), fmt, ap);
	va_end(ap);
	return -1;
}

uint64_t krand(uint64_t *state)
{
	uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void kfill_random(void *p, size_t n, uint64_t seed)
{
	unsigned char *b = p;
	uint64_t s = seed, x;
	size_t i;

	for (i = 0; i + 8 <= n; i += 8) {
		x = krand(&s);
		memcpy(b + i, &x, 8);
	}
	if (i < n) {
		x = krand(&s);
		memcpy(b + i, &x, n - i);
	}
}

/* Absolute deadlines on CLOCK_MONOTONIC: a sleep cut short by a signal resumes toward the same end,
 * and slices do not add up rounding errors. */
int ksleep(const struct kctx *ctx, double ms)
{
	struct timespec now, end, next;
	double sec;

	if (!(ms > 0))
		return 0;
	clock_gettime(CLOCK_MONOTONIC, &now);
	sec = ms / 1e3;
	end.tv_sec = now.tv_sec + (time_t)sec;
	end.tv_nsec = now.tv_nsec + (long)((sec - floor(sec)) * 1e9);
	if (end.tv_nsec >= 1000000000L) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000L;
	}
	for (;;) {
		if (ctx->cancel && *ctx->cancel)
			return -1;
		next = now;
		next.tv_nsec += 10000000L;
		if (next.tv_nsec >= 1000000000L) {
			next.tv_sec++;
			next.tv_nsec -= 1000000000L;
		}
		if (next.tv_sec > end.tv_sec || (next.tv_sec == end.tv_sec && next.tv_nsec >= end.tv_nsec))
			next = end;
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;   /* a signal: sleep on toward the same deadline */
		if (next.tv_sec == end.tv_sec && next.tv_nsec == end.tv_nsec)
			return 0;
		clock_gettime(CLOCK_MONOTONIC, &now);
	}
}
