/* result.c: the task a worker receives and the result it fills: lifecycle and the few setters. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "result.h"

const char *const result_status_name[] = { "ok", "error", "timeout", "error" };
const char *const stop_rule_name[] = {
	NULL, "precision", "noise", "converged", "timeout", "max_samples", "count"
};

void task_release(struct task *t)
{
	free(t->key);
	free(t->params);
	free(t->replica);
	free(t->gang_ranks);
	memset(t, 0, sizeof(*t));
}

void result_init(struct result *r)
{
	memset(r, 0, sizeof(*r));
	r->status = RESULT_OK;
	stats_summary(NULL, 0, &r->sum);   /* every field NaN until measured: stored as NULL */
	r->warmup = NAN;
	r->settled = -1;
}

void result_release(struct result *r)
{
	size_t i;

	free(r->error);
	free(r->samples);
	free(r->clocks);
	free(r->usage);
	json_obj_release(&r->metrics);
	for (i = 0; i < r->nitems; i++) {
		free(r->items[i].item);
		free(r->items[i].metric);
	}
	free(r->items);
	free(r->out);
	free(r->err);
	free(r->note);
	result_init(r);
}

void result_add_sample(struct result *r, double seconds, double clock_mhz)
{
	/* samples, clocks and usage (once there is one) grow together: alloc_samples counts them all. */
	size_t alloc = r->alloc_samples;

	ALLOC_GROW(r->samples, r->nsamples + 1, r->alloc_samples);
	if (alloc != r->alloc_samples) {
		r->clocks = xrealloc(r->clocks, r->alloc_samples * sizeof(*r->clocks));
		if (r->usage)
			r->usage = xrealloc(r->usage, r->alloc_samples * sizeof(*r->usage));
	}
	if (r->usage)
		memset(&r->usage[r->nsamples], 0, sizeof(*r->usage));
	r->samples[r->nsamples] = seconds;
	r->clocks[r->nsamples] = clock_mhz;
	r->nsamples++;
}

void result_regroup(struct result *r, int k)
{
	int i, j, n = r->nsamples / k;

	for (i = 0; i < n; i++) {   /* reads i*k.. before writing i <= i*k */
		double sec = 0, clk = 0;

		for (j = 0; j < k; j++) {
			sec += r->samples[i * k + j];
			clk += r->clocks[i * k + j];
		}
		r->samples[i] = sec / k;
		r->clocks[i] = clk / k;
	}
	r->nsamples = n;
}

void result_set_usage(struct result *r, const struct run_usage *u)
{
	if (!r->nsamples)
		BUG("result_set_usage before any sample");
	if (!r->usage)
		r->usage = xcalloc(r->alloc_samples, sizeof(*r->usage));
	r->usage[r->nsamples - 1] = *u;
}

void result_add_item(struct result *r, const char *item, const char *metric, double value)
{
	struct item_value *iv;

	ALLOC_GROW(r->items, r->nitems + 1, r->alloc_items);
	iv = &r->items[r->nitems++];
	iv->item = xstrdup(item);
	iv->metric = xstrdup(metric);
	iv->value = value;
}

/* A metric that is not finite (a median of nothing, a division by zero) is left out: JSON and the
 * metrics table hold numbers only. Setting a name again replaces its value. */
void result_set_metric(struct result *r, const char *name, double value)
{
	char buf[64];
	size_t i;

	if (!isfinite(value))
		return;
	snprintf(buf, sizeof(buf), "%.17g", value);
	for (i = 0; i < r->metrics.n; i++) {
		if (!strcmp(r->metrics.v[i].key, name)) {
			free(r->metrics.v[i].val);
			r->metrics.v[i].val = xstrdup(buf);
			r->metrics.v[i].type = JSON_NUM;
			return;
		}
	}
	json_obj_add(&r->metrics, name, buf, JSON_NUM);
}

int result_fail(struct result *r, enum result_status st, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	free(r->error);
	r->error = sb_detach(&sb);
	r->status = st;
	return -1;
}

void result_summarize(struct result *r, double target, double precision)
{
	stats_summary(r->samples, (size_t)r->nsamples, &r->sum);
	r->noise_ok = r->sum.noise <= target || isinf(target);
	r->precise = isnan(precision) || stats_ci_rel(r->sum.ci_lo, r->sum.ci_hi, r->sum.median) <= precision;
}
