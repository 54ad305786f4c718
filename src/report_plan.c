/* report_plan.c: what a report's options resolve to against its context, once, before its statement: the
 * metric, the row keys (the parameters a report may not hide), the compared arms, the excluded hosts. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_print.h"
#include "report_query.h"

/* Whether one of the n keys (NULL ones skipped) is item. */
static int item_in(const struct report_ctx *c, const char *const *keys, int n)
{
	for (int i = 0; i < n; i++)
		if (report_expr_is_item(c, keys[i]))
			return 1;
	return 0;
}

void report_plan_init(struct report_plan *p, const struct report_opts *o, const struct report_ctx *c)
{
	const char *const one[] = { o->summary_by, o->x, o->series, o->facet };

	memset(p, 0, sizeof(*p));
	p->c = c;
	p->mode = o->mode;
	p->out = (struct report_out){ o->fmt, o->digits, o->out, o->db, o->base_db };
	p->pooled = report_print_pooled(o->pool, o->npool);
	p->pool = o->pool;
	p->npool = o->npool;
	p->metric = o->metric;
	p->stat = o->stat;
	p->where = o->where;
	p->limit = o->limit;
	p->strict = o->strict;
	p->asked = o->rows;
	p->nasked = o->nrows;
	p->cols = o->cols;
	p->ncols = o->ncols;
	p->summary = o->summary;
	p->summary_by = o->summary_by;
	p->unit_asked = o->unit;
	p->arms = (struct report_arms){ o->cmp_key, o->cmp_a, o->cmp_b };
	p->paired_by = o->paired_by ? o->paired_by : "item";
	p->boot = (struct report_boot){ o->ci, o->boot, o->seed, o->interval };
	p->threshold = o->threshold;
	p->fail_above = o->fail_above;
	p->bar = o->bar;
	p->better = o->better;
	p->pair_params = o->pair_params;
	p->drop_first = o->drop_first;
	p->conditions = o->conditions;
	p->ledger = o->ledger;
	p->figure = o->figure;
	p->look = (struct report_look){ o->x, o->series, o->facet, o->title, o->xlabel, o->ylabel, o->logx, o->logy,
				       o->errors, o->spread };
	p->metric_scale = 1;
	p->rows = xcalloc((size_t)o->nrows + 1, sizeof(*p->rows));
	for (int i = 0; i < o->nrows; i++)
		p->rows[p->nrows++] = xstrdup(o->rows[i]);
	/* a report keyed by item shows each item's values: the statements read them in place of the
	 * results' values (a result's value of a metric is the mean over its items) */
	p->items = item_in(c, (const char *const *)o->rows, o->nrows) ||
		   item_in(c, (const char *const *)o->cols, o->ncols) || item_in(c, one, 4);
}

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void report_plan_release(struct report_plan *p)
{
	free(p->metric_base);
	free(p->pooled);
	free_list(p->rows, (size_t)p->nrows);
	free_list(p->excluded, p->nexcluded);
	free(p->cand);
	memset(p, 0, sizeof(*p));
}

/* Figures of the results themselves, reported as if they were stored metrics: the samples' noise, and
 * how well the median is known (the relative half-width of its 95 % interval, what precision asks). */
static const struct {
	const char *name, *sql;
} own_metrics[] = {
	{ "noise", "noise" },
	{ "precision", "ci_rel(ci_lo, ci_hi, median)" },
};

int report_plan_metric(struct report_plan *p)
{
	const struct report_ctx *c = p->c;
	const char *name = p->metric, *near, *base;
	struct strbuf sb = STRBUF_INIT;

	if (report_expr_metric_lookup(c, name, &base, &p->metric_scale)) {
		p->metric_base = xstrdup(base);
		return FAIL_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(own_metrics); i++) {
		if (strcmp(name, own_metrics[i].name))
			continue;
		if (p->items)
			return fail_usage("--metric %s is a figure of a result: it has no per-item values to key by "
					  "item", name);
		p->metric_base = xstrdup(name);
		p->metric_own = own_metrics[i].sql;
		return FAIL_OK;
	}
	report_ctx_join(&sb, c->metrics, c->nmetrics);
	near = c->nmetrics ? closest_name(name, (const char *const *)c->metrics) : NULL;
	if (near)
		error("no metric '%s' in the results of sweep '%s' (did you mean '%s'? it has: %s)", name,
		      c->sweep, near, sb.buf);
	else
		error("no metric '%s' in the results of sweep '%s' (it has: %s)", name, c->sweep, sb.buf);
	sb_release(&sb);
	return FAIL_USAGE;
}

/* Whether s is one of the n keys, or param.s. */
static int in_keys(const char *const *v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (v[i] && (!strcmp(v[i], s) || (!strncmp(v[i], "param.", 6) && !strcmp(v[i] + 6, s))))
			return 1;
	return 0;
}

/* The parameters (spec order; a list of the context's names, owned) that may vary inside a group of keys:
 * those neither keys nor --pool's, after checking that each --pool key is one. */
static int candidates(const struct report_plan *p, const char *const *keys, int nkeys, const char ***cand,
		      int *ncand)
{
	int ret;

	*cand = xcalloc(p->c->nparams + 1, sizeof(**cand));
	*ncand = 0;
	/* a --pool key must be one: said before anything is aggregated over it */
	for (int i = 0; i < p->npool; i++) {
		struct report_query scratch = REPORT_QUERY_INIT;

		ret = report_expr_key(p->c, &scratch, p->pool[i]);
		report_query_release(&scratch);
		if (ret)
			return ret;
	}
	for (size_t i = 0; p->c->spec_order[i]; i++)
		if (!in_keys(keys, nkeys, p->c->spec_order[i]) &&
		    !in_keys((const char *const *)p->pool, p->npool, p->c->spec_order[i]))
			(*cand)[(*ncand)++] = p->c->spec_order[i];
	return FAIL_OK;
}

/* The parameters (spec order, owned list) that vary inside a group of keys, less --pool's. */
static int varying(const struct report_plan *p, const char *const *keys, int nkeys, char ***out, int *nout)
{
	struct report_query q = REPORT_QUERY_INIT;
	struct report_rows max;
	const char **cand;
	int ncand, ret;

	*out = NULL;
	*nout = 0;
	report_rows_init(&max);
	if ((ret = candidates(p, keys, nkeys, &cand, &ncand)) || !ncand)
		goto out;
	if ((ret = report_query_varying(p, keys, nkeys, cand, ncand, &q)) ||
	    (report_query_trim(&q), ret = report_rows_fetch(p->c, &q, &max)))
		goto out;
	*out = report_agg_varying(&max, cand, ncand, nout);
out:
	report_rows_release(&max);
	report_query_release(&q);
	free(cand);
	return ret;
}

/* The keys a report groups by: the row keys, the column keys and the extra ones (owned array). */
static const char **group_keys(const struct report_plan *p, const char *const *extra, int nextra, int *nk)
{
	const char **keys;

	*nk = p->nrows + p->ncols + nextra;
	keys = xcalloc((size_t)*nk + 1, sizeof(*keys));
	for (int i = 0; i < p->nrows; i++)
		keys[i] = p->rows[i];
	for (int i = 0; i < p->ncols; i++)
		keys[p->nrows + i] = p->cols[i];
	for (int i = 0; i < nextra; i++)
		keys[p->nrows + p->ncols + i] = extra[i];
	return keys;
}

/* The nv parameters of v (owned, taken) become row keys, with the note that says so. */
static void split(struct report_plan *p, char **v, int nv)
{
	struct strbuf sb = STRBUF_INIT;

	p->rows = xrealloc(p->rows, (size_t)(p->nrows + nv + 1) * sizeof(*p->rows));
	for (int i = 0; i < nv; i++) {
		sb_addf(&sb, "%s%s", i ? "," : "", v[i]);
		p->rows[p->nrows++] = v[i];
	}
	p->rows[p->nrows] = NULL;
	report_note("rows also split by %s, which %s inside a row (--rows names it; --pool %s "
		    "aggregates over it)", sb.buf, nv > 1 ? "vary" : "varies", sb.buf);
	free(v);
	sb_release(&sb);
}

int report_plan_rows(struct report_plan *p, const char *const *extra, int nextra)
{
	int nk, nv, ret;
	const char **keys = group_keys(p, extra, nextra, &nk);
	char **v;

	ret = varying(p, keys, nk, &v, &nv);
	free(keys);
	if (ret || !nv) {
		free(v);
		return ret;
	}
	split(p, v, nv);
	return FAIL_OK;
}

int report_plan_rows_later(struct report_plan *p, const char *const *extra, int nextra)
{
	int nk, ret;
	const char **keys = group_keys(p, extra, nextra, &nk);

	free(p->cand);
	ret = candidates(p, keys, nk, &p->cand, &p->ncand);
	free(keys);
	return ret;
}

int report_plan_split(struct report_plan *p, struct report_rows *in)
{
	int base = in->ncol - p->ncand, nv = 0;
	char **v = xcalloc((size_t)p->ncand + 1, sizeof(*v));

	for (int i = 0; base >= 0 && i < p->ncand; i++)
		for (size_t j = 0; j < in->n; j++)
			if (report_rows_num(in, j, base + i) > 1) {
				v[nv++] = xstrdup(p->cand[i]);
				break;
			}
	if (in->ncol >= p->ncand)       /* a statement without rows may have no columns */
		report_rows_drop(in, p->ncand);
	free(p->cand);
	p->cand = NULL;
	p->ncand = 0;
	if (!nv) {
		free(v);
		return 0;
	}
	split(p, v, nv);
	return 1;
}

int report_plan_points(struct report_plan *p)
{
	const char *keys[] = { p->look.x, p->look.series, p->look.facet };
	struct strbuf sb = STRBUF_INIT;
	char **v;
	int nv, ret;

	if ((ret = varying(p, keys, 3, &v, &nv)))
		return ret;
	for (int i = 0; i < nv; i++) {
		sb_addf(&sb, "%s%s", i ? "," : "", v[i]);
		free(v[i]);
	}
	free(v);
	if (nv)
		ret = fail_usage("%s %s inside a point of the plot: give %s as --series or --facet, or aggregate "
				 "over %s with --pool %s", sb.buf, nv > 1 ? "vary" : "varies", nv > 1 ? "them" : "it",
				 nv > 1 ? "them" : "it", sb.buf);
	sb_release(&sb);
	return ret;
}

int report_plan_query(const struct report_plan *p,
		      int (*build)(const struct report_plan *, struct report_query *), struct report_rows *rows)
{
	struct report_query q = REPORT_QUERY_INIT;
	int ret;

	report_rows_init(rows);
	if (!(ret = build(p, &q))) {
		report_query_trim(&q);
		ret = report_rows_fetch(p->c, &q, rows);
	}
	report_query_release(&q);
	return ret;
}

int report_plan_arms(const struct report_plan *p)
{
	struct strbuf known = STRBUF_INIT;
	struct report_rows vals;
	int ret, found_a = 0, found_b = 0;

	if (report_expr_is_item(p->c, p->arms.key))
		return fail_usage("--compare %s=%s/%s: items are what is paired, not arms: compare a parameter "
				  "(--rows item gives the ratio of each item)", p->arms.key, p->arms.a, p->arms.b);
	/* both arms found (the usual case) without reading every result; else each value for the message */
	if ((ret = report_plan_query(p, report_query_arms_found, &vals)) ||
	    (vals.n && report_rows_num(&vals, 0, 0) == 1 && report_rows_num(&vals, 0, 1) == 1))
		goto out;
	report_rows_release(&vals);
	if ((ret = report_plan_query(p, report_query_arms, &vals)))
		goto out;
	for (size_t i = 0; i < vals.n; i++) {
		const char *v = report_rows_text(&vals, i, 0) ? report_rows_text(&vals, i, 0) : "NULL";

		found_a |= !strcmp(v, p->arms.a);
		found_b |= !strcmp(v, p->arms.b);
		sb_addf(&known, "%s%s", i ? ", " : "", v);
	}
	if (!found_a || !found_b)
		ret = fail_usage("no ok results with %s=%s in sweep '%s' (%s takes: %s)", p->arms.key,
				 found_a ? p->arms.b : p->arms.a, p->c->sweep, p->arms.key,
				 vals.n ? known.buf : "no value");
out:
	report_rows_release(&vals);
	sb_release(&known);
	return ret;
}

int report_plan_exclude(struct report_plan *p)
{
	struct report_rows ctl, w;
	int ret;

	if ((ret = report_plan_query(p, report_query_drift, &ctl))) {
		report_rows_release(&ctl);
		return ret;
	}
	report_agg_drift(&ctl, p->drop_first, &w);
	if (!w.n)
		report_note("sweep '%s' has no control cells: no host can be judged, none is excluded "
			    "(add control: to the spec)", p->c->sweep);
	for (size_t i = 0; i < w.n; i++) {
		char *why = report_agg_unstable(&w, i, p->threshold);
		const char *host = report_rows_text(&w, i, 0);
		int seen = 0;

		for (size_t k = 0; k < p->nexcluded; k++)
			seen |= !strcmp(p->excluded[k], host);
		if (why && !seen) {
			p->excluded = xrealloc(p->excluded, (p->nexcluded + 1) * sizeof(*p->excluded));
			p->excluded[p->nexcluded++] = xstrdup(host);
			report_note("excluding unstable host %s (run %s, worker %s: %s)", host,
				    report_rows_text(&w, i, 1), report_rows_text(&w, i, 2), why);
		}
		free(why);
	}
	report_rows_release(&w);
	report_rows_release(&ctl);
	return FAIL_OK;
}

int report_plan_unit(struct report_plan *p)
{
	const char *given = p->unit_asked;
	struct strbuf sb = STRBUF_INIT;

	p->unit = NULL;
	for (int i = 0; i < p->nrows; i++) {
		if (given ? !strcmp(p->rows[i], given) : !strcmp(p->rows[i], "host"))
			p->unit = p->rows[i];
		if (!given && !p->unit && !strcmp(p->rows[i], "replica"))
			p->unit = p->rows[i];
	}
	if (!given || p->unit || !strcmp(given, "row"))
		return FAIL_OK;
	report_ctx_join(&sb, p->rows, (size_t)p->nrows);
	error("--unit %s: a summary's unit is a row key, so that each row belongs to one (the row keys: %s); "
	      "add it to --rows, or --unit row for each row", given, sb.buf);
	sb_release(&sb);
	return FAIL_USAGE;
}
