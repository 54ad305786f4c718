/* report_drift.c: --drift: each worker's control cell over time, and hosts flagged unstable. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* The control reruns of one worker (and one set of control parameters), in time order. */
struct drift_worker {
	char *host, *run, *rank, *gpu, *params;
	double *median, *noise;
	size_t n, alloc_m, alloc_n;
	double drift, max_noise;   /* max |median / first - 1|, max noise (fractions; NaN when unknown) */
};

struct drift {
	struct drift_worker *w;
	size_t n, alloc;
};

static char *dup_or(const char *s, const char *def)
{
	return xstrdup(s ? s : def);
}

static int drift_row(const struct store_row *row, void *data)
{
	struct drift *d = data;
	struct drift_worker *w = d->n ? &d->w[d->n - 1] : NULL;

	/* rows arrive ordered by worker row id and parameters, then time */
	if (!w || strcmp(w->run, row->text[1] ? row->text[1] : "-") ||
	    strcmp(w->rank, row->text[2] ? row->text[2] : "-") || strcmp(w->params, row->text[4]) ||
	    strcmp(w->host, row->text[0] ? row->text[0] : "(unknown)")) {
		ALLOC_GROW(d->w, d->n + 1, d->alloc);
		w = &d->w[d->n++];
		memset(w, 0, sizeof(*w));
		w->host = dup_or(row->text[0], "(unknown)");
		w->run = dup_or(row->text[1], "-");
		w->rank = dup_or(row->text[2], "-");
		w->gpu = dup_or(row->text[3], "-");
		w->params = dup_or(row->text[4], "");
		w->max_noise = NAN;
	}
	ALLOC_GROW(w->median, w->n + 1, w->alloc_m);
	ALLOC_GROW(w->noise, w->n + 1, w->alloc_n);
	w->median[w->n] = row->num[5];
	w->noise[w->n] = row->num[6];
	w->n++;
	return 0;
}

static void drift_release(struct drift *d)
{
	for (size_t i = 0; i < d->n; i++) {
		free(d->w[i].host);
		free(d->w[i].run);
		free(d->w[i].rank);
		free(d->w[i].gpu);
		free(d->w[i].params);
		free(d->w[i].median);
		free(d->w[i].noise);
	}
	free(d->w);
}

static int drift_load(struct report *r, struct drift *d)
{
	const char *bind[] = { r->sweep };

	memset(d, 0, sizeof(*d));
	if (store_query(r->st, "SELECT h.hostname, w.run, w.rank, w.gpu, ctl.params, ctl.median, ctl.noise"
			" FROM controls ctl LEFT JOIN workers w ON w.id = ctl.worker"
			" LEFT JOIN hosts h ON h.id = w.host"
			" WHERE ctl.sweep = ?1 AND ctl.error IS NULL AND ctl.median > 0"
			" ORDER BY h.hostname, w.run, w.rank, ctl.params, ctl.started, ctl.id",
			bind, 1, 1, drift_row, d))
		return -1;
	for (size_t i = 0; i < d->n; i++) {
		struct drift_worker *w = &d->w[i];

		w->drift = 0;
		for (size_t k = 0; k < w->n; k++) {
			double dev = fabs(w->median[k] / w->median[0] - 1);

			if (dev > w->drift)
				w->drift = dev;
			if (!isnan(w->noise[k]) && (isnan(w->max_noise) || w->noise[k] > w->max_noise))
				w->max_noise = w->noise[k];
		}
	}
	return 0;
}

/* Why a worker is unstable ("drift 4.1% > 3%"), or NULL. Owned by the caller. */
static char *drift_reason(const struct report *r, const struct drift_worker *w)
{
	if (w->drift > r->threshold)
		return xasprintf("drift %.1f%% > %g%%", w->drift * 100, r->threshold * 100);
	if (!isnan(w->max_noise) && w->max_noise > r->threshold)
		return xasprintf("noise %.1f%% > %g%%", w->max_noise * 100, r->threshold * 100);
	return NULL;
}

int report_unstable_hosts(struct report *r)
{
	struct drift d;

	if (drift_load(r, &d))
		return -1;
	if (!d.n)
		report_note("sweep '%s' has no control cells: no host can be judged, none is excluded "
			    "(add control: to the spec)", r->sweep);
	for (size_t i = 0; i < d.n; i++) {
		char *why = drift_reason(r, &d.w[i]);
		int seen = 0;

		for (size_t k = 0; k < r->nexcluded; k++)
			seen |= !strcmp(r->excluded[k], d.w[i].host);
		if (why && !seen) {
			ALLOC_GROW(r->excluded, r->nexcluded + 1, r->alloc_excluded);
			r->excluded[r->nexcluded++] = xstrdup(d.w[i].host);
			report_note("excluding unstable host %s (run %s, worker %s: %s)", d.w[i].host,
				    d.w[i].run, d.w[i].rank, why);
		}
		free(why);
	}
	drift_release(&d);
	return 0;
}

/* Up to 8 ratios to the first value, spread evenly over the run, first and last included. */
static char *drift_path(const struct report *r, const struct drift_worker *w)
{
	struct strbuf sb = STRBUF_INIT;
	size_t shown = w->n < 8 ? w->n : 8;

	for (size_t i = 0; i < shown; i++) {
		double at = shown == 1 ? 0 : (double)i * (double)(w->n - 1) / (double)(shown - 1);
		size_t k = (size_t)llround(at);
		char buf[40];

		report_num(r, w->median[k] / w->median[0], 4, buf, sizeof(buf));
		sb_addf(&sb, "%s%s", i ? " " : "", buf);
	}
	return sb_detach(&sb);
}

int report_drift(struct report *r)
{
	static const char *const head[] = {
		"host", "run", "worker", "gpu", "n", "first_s", "ratio_over_time", "max_drift_%",
		"max_noise_%", "status",
	};
	struct drift d;
	struct table t;
	FILE *f;
	int ret = -1, nunstable = 0;

	if (drift_load(r, &d))
		return -1;
	if (!d.n) {
		error("sweep '%s' has no control results: add 'control:' to its spec to measure drift",
		      r->sweep);
		goto out;
	}
	table_init(&t, (int)ARRAY_SIZE(head), head);
	for (size_t i = 0; i < d.n; i++) {
		struct drift_worker *w = &d.w[i];
		char n[24], first[40], dr[40], no[40], *path = drift_path(r, w), *why = drift_reason(r, w);
		char *status = why ? xasprintf("UNSTABLE: %s", why) : xstrdup("stable");
		const char *row[ARRAY_SIZE(head)] = {
			w->host, w->run, w->rank, w->gpu, n, first, path, dr, no, status,
		};

		snprintf(n, sizeof(n), "%zu", w->n);
		report_num(r, w->median[0], 4, first, sizeof(first));
		report_num(r, w->drift * 100, 2, dr, sizeof(dr));
		report_num(r, w->max_noise * 100, 2, no, sizeof(no));
		table_add(&t, row);
		nunstable += !!why;
		free(path);
		free(why);
		free(status);
	}
	if (!report_out_open(r, &f)) {
		if (r->fmt->heading) {
			char *h = xasprintf("control cell of sweep %s per worker: median time as a ratio to its "
					    "first run; unstable when drift or noise passes %g%%", r->sweep,
					    r->threshold * 100);

			r->fmt->heading(h, f);
			free(h);
		}
		table_print(&t, f, r->fmt);
		ret = report_out_close(r, f);
	}
	table_release(&t);
	if (!ret && nunstable)
		report_note("%d of %zu workers unstable; 'sweep report --exclude-unstable' leaves their "
			    "hosts out", nunstable, d.n);
out:
	drift_release(&d);
	return ret;
}
