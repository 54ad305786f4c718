/* report_run.c: a report from its options to its output, one way: the context, the plan, the statement and
 * its rows, the aggregation, the printer; one function per mode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_conditions.h"
#include "report_plan.h"
#include "report_print.h"
#include "report_query.h"
#include "states.h"

/* Among the results the report reads without --strict: the marked ones into n[0] (STORE_IMPRECISE), all of
 * them into n[1]. */
static int count_results(const struct report_plan *p, long n[2])
{
	struct report_rows r;
	int ret = report_plan_query(p, report_query_marked, &r);

	n[0] = n[1] = 0;
	for (int c = 0; !ret && r.n && c < 2; c++)
		n[c] = isnan(report_rows_num(&r, 0, c)) ? 0 : (long)report_rows_num(&r, 0, c);
	report_rows_release(&r);
	return ret;
}

/* With --strict, when it left out every result there was: FAIL_USAGE after error() saying so (else a report
 * would find nothing and say "no ok results"); FAIL_OK when it did not, or without --strict. */
static int strict_emptied(const struct report_plan *p)
{
	long n[2];
	int ret;

	if (!p->strict)
		return FAIL_OK;
	if ((ret = count_results(p, n)))
		return ret;
	if (!n[1] || n[0] < n[1])
		return FAIL_OK;
	return fail_usage("--strict left out all %ld results of sweep '%s'%s: no median is known to the precision "
			  "asked (report without --strict to see them, marked)", n[1], p->c->sweep,
			  p->where || p->nexcluded ? " that pass the filters" : "");
}

/* "no ok results ..." for a statement that found nothing (or what --strict left out, strict_emptied). */
static int nothing(const struct report_plan *p)
{
	const char *filters = p->where || p->nexcluded ? " that pass the filters" : "";
	int ret = strict_emptied(p);

	if (ret)
		return ret;
	if (p->items)
		return fail_usage("no per-item values of metric '%s' in sweep '%s'%s: the key item needs a command "
				  "whose metric lines name their item ({\"item\": ...})", p->metric, p->c->sweep,
				  filters);
	return fail_usage("no ok results of sweep '%s' with metric '%s'%s", p->c->sweep, p->metric, filters);
}

/* With no unit, a note when rows of one summary group share a host: n then counts rows, not machines. */
static int note_shared(const struct report_plan *p)
{
	struct report_rows n;
	int ret = report_plan_query(p, report_query_shared, &n);

	if (!ret && n.n && report_rows_num(&n, 0, 0) > report_rows_num(&n, 0, 1))
		report_note("the summary takes each row as a unit, and rows share a host: its n counts rows, which "
			    "are not independent (--unit KEY, with KEY in --rows, takes one value per KEY)");
	report_rows_release(&n);
	return ret;
}

/* The caption's words for a summary: what it is over, and what n counts. Owned. */
static char *summary_caption(const struct report_plan *p)
{
	const char *by = p->summary_by, *u = p->unit;

	if (!u)
		return xasprintf("; summary%s%s over the rows (n counts them): median, min, max, mean and its 95%% "
				 "Student t interval", by ? " per " : "", by ? by : "");
	return xasprintf("; summary%s%s over %s: one value per %s, the mean of its rows (n counts them): median, "
			 "min, max, mean and its 95%% Student t interval", by ? " per " : "", by ? by : "", u, u);
}

/* "K of N cells measured; the others: ..." when some cells of the sweep are not ok (states.c), else NULL:
 * a table of the measured cells alone must say it is not the whole sweep. Owned. */
static char *measured(const struct report_plan *p)
{
	struct states s = STATES_INIT;
	struct strbuf sb = STRBUF_INIT;

	if (!states_of(p->c->st, p->c->sweep, &s))
		states_words(&s, NULL, &sb);
	states_release(&s);
	return sb.len ? sb_detach(&sb) : (sb_release(&sb), NULL);
}

/* A report's output: its table, or the table as a figure (sweep plot --compare, --limit), or a page (HTML:
 * the table, its figure, the method and the conditions). */
static int emit(const struct report_plan *p, const struct report_doc *d)
{
	int ret;

	if (p->figure) {
		ret = report_figure_print(p, d, p->out.path, 1);
		return ret == 2 ? fail_usage("nothing to plot: no row of the table has a value") :
		       ret < 0 ? ret : FAIL_OK;
	}
	if (p->out.fmt->page) {
		/* the page's conditions are queried now: its printer only prints */
		struct report_doc page = *d;
		char *conditions = NULL;

		if (!(ret = report_conditions_page(p, &conditions))) {
			page.conditions = conditions;
			ret = report_html_page(p, &page);
		}
		free(conditions);
		return ret;
	}
	return report_print(&p->out, d);
}

/* What the results of the table say of themselves (results.note), each with the count of results that
 * say it, at most three, into *said (NULL: none said anything; the caller frees it). */
#define SAID_SHOWN 3
static int results_said(const struct report_plan *p, char **said)
{
	struct strbuf sb = STRBUF_INIT;
	struct report_rows r;
	/* results_noted drives the statement: a table without a note costs no pass over its results */
	int ret = report_plan_query(p, report_query_notes, &r);

	for (size_t j = 0; !ret && j < r.n && j < SAID_SHOWN; j++) {
		long n = (long)report_rows_num(&r, j, 1);

		sb_addf(&sb, "%s%s (%ld result%s)", j ? "; " : "", report_rows_text(&r, j, 0), n, n == 1 ? "" : "s");
	}
	if (!ret && r.n > SAID_SHOWN)
		sb_addf(&sb, "; and %zu more notes (sweep sql: SELECT note FROM v_results)", r.n - SAID_SHOWN);
	*said = sb.len ? sb_detach(&sb) : NULL;
	sb_release(&sb);
	report_rows_release(&r);
	return ret;
}

/* Print a table of rows under the caption of its method, with the --summary rows (which order the rows by
 * their group) and what the stage said in nt: marked counts the results behind the marks (-1: not
 * counted). */
static int print_rows(const struct report_plan *p, struct report_rows *rows, const char *caption, long marked,
		      struct report_notes *nt)
{
	struct report_rows sum;
	struct report_doc d = { rows, NULL, caption, 1, marked, NULL, 0, NULL, NULL, NULL, NULL };
	char *cap = NULL, *words, *caveat, *part = measured(p), *full = NULL, *said = NULL;
	int ret = results_said(p, &said);

	/* in the caption (text, Markdown, LaTeX's comment, the page) and among the notes (stderr, the page) */
	if (part) {
		report_notes_add(nt, "%s", part);
		d.caption = caption = full = xasprintf("%s; %s", caption, part);
	}

	if (p->summary_by)
		report_rows_sort_group(rows);
	if (p->summary && rows->n) {
		report_agg_summary(rows, p->unit, &sum, nt);
		d.summary = &sum;
		words = summary_caption(p);
		d.caption = cap = xasprintf("%s%s", caption, words);
		free(words);
		if (!ret && !p->unit)
			ret = note_shared(p);
	}
	report_notes_print(nt);
	d.caveat = caveat = report_notes_caveats(nt);
	d.notes = nt;
	d.said = said;
	if (!ret)
		ret = emit(p, &d);
	if (d.summary)
		report_rows_release(&sum);
	free(caveat);
	free(said);
	free(cap);
	free(full);
	free(part);
	return ret;
}

/* The marked results (STORE_IMPRECISE): with --strict, those left out, said on stderr (how many of how
 * many); else those the table holds. */
static int count_marked(const struct report_plan *p, long *marked)
{
	long n[2];
	int ret = count_results(p, n);

	if (!ret) {
		*marked = n[0];
		if (n[0] > 0 && p->strict)
			report_note("--strict left out %ld of %ld results: %s median not known to the precision asked",
				    n[0], n[1], n[0] == 1 ? "its" : "their");
	}
	return ret;
}

/* The plain and pivoted tables. */
static int table(struct report_plan *p)
{
	struct report_notes nt = { 0 };
	struct report_rows in, out;
	char *cap;
	long marked;
	int ret;

	if ((ret = report_plan_metric(p)) ||
	    (ret = report_plan_rows_later(p, &p->summary_by, p->summary_by ? 1 : 0)))
		return ret;
	/* one pass, unless a parameter varies inside a row: then again, split by it */
	if (!(ret = report_plan_query(p, report_query_table, &in)) && report_plan_split(p, &in)) {
		report_rows_release(&in);
		ret = report_plan_query(p, report_query_table, &in);
	}
	if (!ret)
		ret = report_plan_unit(p);
	if (!ret && (!in.n || (!p->nrows && !p->ncols && isnan(report_rows_num(&in, 0, 0)))))
		ret = nothing(p);
	if (ret) {
		report_rows_release(&in);
		return ret;
	}
	report_agg_table(&in, (const char *const *)p->rows, p->nrows, (const char *const *)p->cols, p->ncols,
			 p->summary_by, p->metric, &out);
	/* the rows hold every result the report reads once, unless --strict took some out or each item's
	 * row holds its result: then count them in SQL */
	marked = report_agg_marked(&in);
	report_rows_release(&in);
	if ((!p->strict && !p->items) || !(ret = count_marked(p, &marked))) {
		cap = xasprintf("%s of %s%s over passes%s, sweep %s%s%s", p->stat, p->metric,
				p->metric_scale != 1 ? " (derived)" : "", p->pooled, p->c->sweep,
				p->where ? ", where " : "", p->where ? p->where : "");
		ret = print_rows(p, &out, cap, marked, &nt);
		if (!ret && (p->conditions || p->ledger))
			ret = report_conditions(p);
		free(cap);
	}
	report_rows_release(&out);
	report_notes_release(&nt);
	return ret;
}

/* "n = 30 pairs a row" or "n = 3 to 4 pairs a row": the pairs of out's rows (column c). Owned. */
static char *pairs_caption(const struct report_rows *out, int c)
{
	double lo = INFINITY, hi = 0;

	for (size_t j = 0; j < out->n; j++) {
		double n = report_rows_num(out, j, c);

		if (n > 0) {
			lo = n < lo ? n : lo;
			hi = n > hi ? n : hi;
		}
	}
	if (!(hi > 0))
		return xstrdup("n = 0 pairs");
	return lo == hi ? xasprintf("n = %.0f %s a row", hi, hi == 1 ? "pair" : "pairs") :
			  xasprintf("n = %.0f to %.0f pairs a row", lo, hi);
}

/* --compare KEY=A/B: per row, a ratio of means (or the geometric mean of ratios) over paired units with a
 * bootstrap interval. */
static int compare(struct report_plan *p)
{
	const char *paired = p->paired_by;
	int by_item = !strcmp(paired, "item"), geo = !strcmp(p->stat, "geomean"), ret;
	const char *extra[] = { p->arms.key, by_item ? NULL : paired, p->summary_by };
	struct report_pairing pp = {
		.group = p->summary_by, .key = p->arms.key, .a = p->arms.a, .b = p->arms.b, .metric = p->metric,
		.ci = p->boot.ci, .boot = p->boot.resamples, .seed = p->boot.seed,
		.stat = geo ? STATS_GEOMEAN_RATIO : STATS_RATIO_OF_MEANS, .interval = p->boot.interval,
	};
	struct report_notes nt = { 0 };
	struct report_rows in, out;
	char *cap, *n;

	if ((ret = report_plan_metric(p)) || (ret = report_plan_arms(p)) || (ret = report_plan_rows(p, extra, 3)) ||
	    (ret = report_plan_unit(p)))
		return ret;
	ret = report_plan_query(p, report_query_compare, &in);
	if (!ret && !in.n && p->items)
		ret = nothing(p);
	else if (!ret && !in.n && !(ret = strict_emptied(p)))
		ret = by_item ? fail_usage("no per-item values of '%s' for %s=%s or %s=%s in sweep '%s' (pair by a "
					   "parameter with --paired-by KEY)", p->metric, p->arms.key, p->arms.a,
					   p->arms.key, p->arms.b, p->c->sweep)
			      : fail_usage("no ok results of '%s' for %s=%s or %s=%s in sweep '%s'", p->metric,
					   p->arms.key, p->arms.a, p->arms.key, p->arms.b, p->c->sweep);
	if (ret) {
		report_rows_release(&in);
		return ret;
	}
	pp.keys = (const char *const *)p->rows;
	pp.nkey = p->nrows;
	report_pair(&in, &pp, &out, &nt);
	report_rows_release(&in);
	n = pairs_caption(&out, p->nrows + (out.group >= p->nrows ? 1 : 0));
	cap = xasprintf("%s of %s=%s over %s=%s%s, paired by %s: %s%s (%s; %g%% %s bootstrap interval of %d "
			"resamples, seed %llu), sweep %s", p->metric, p->arms.key, p->arms.a, p->arms.key, p->arms.b,
			p->pooled, paired, geo ? "geometric mean of the ratios of each " : "ratio of means",
			geo ? paired : "", n, p->boot.ci * 100, p->boot.interval == STATS_BCA ? "BCa" : "percentile",
			p->boot.resamples, (unsigned long long)p->boot.seed, p->c->sweep);
	ret = print_rows(p, &out, cap, -1, &nt);
	free(cap);
	free(n);
	report_rows_release(&out);
	report_notes_release(&nt);
	return ret;
}

/* --limit EXPR: a limit per row from parameters, metrics and probes, and the share of it. */
static int limit(struct report_plan *p)
{
	struct report_query q = REPORT_QUERY_INIT;
	struct report_notes nt = { 0 };
	struct report_rows in, out;
	char *cap;
	int ret;

	if ((ret = report_plan_metric(p)) || (ret = report_plan_rows(p, &p->summary_by, p->summary_by ? 1 : 0)) ||
	    (ret = report_plan_unit(p)))
		return ret;
	/* the statement is kept: it names the probes the limit joins, for the notes */
	report_rows_init(&in);
	if ((ret = report_query_limit(p, &q)) || (report_query_trim(&q), ret = report_rows_fetch(p->c, &q, &in)))
		goto out;
	report_agg_limit(&in, (const char *const *)p->rows, p->nrows, p->summary_by, p->metric,
			 (const char *const *)q.joined, q.njoined, &out, &nt);
	if (!out.n || (!p->nrows && report_rows_num(&out, 0, out.ncol - 4) == 0)) {
		ret = nothing(p);
	} else {
		cap = xasprintf("%s of %s over passes%s, limit = %s, share = %s(%s) / %s(limit) of the results with "
				"both, sweep %s", p->stat, p->metric, p->pooled, p->limit, p->stat, p->metric, p->stat,
				p->c->sweep);
		ret = print_rows(p, &out, cap, -1, &nt);
		free(cap);
	}
	report_rows_release(&out);
	report_notes_release(&nt);
out:
	report_rows_release(&in);
	report_query_release(&q);
	return ret;
}

/* --drift: each worker's control cell over time, and the hosts it finds unstable. */
static int drift(struct report_plan *p)
{
	struct report_rows ctl, w, out;
	struct report_doc d = { &out, NULL, NULL, 0, -1, NULL, 0, NULL, NULL, NULL, NULL };
	char *cap;
	int ret, nunstable;

	if ((ret = report_plan_query(p, report_query_drift, &ctl))) {
		report_rows_release(&ctl);
		return ret;
	}
	report_agg_drift(&ctl, p->drop_first, &w);
	report_rows_release(&ctl);
	if (!w.n) {
		report_rows_release(&w);
		return fail_usage("sweep '%s' has no control results: add 'control:' to its spec to measure drift",
				  p->c->sweep);
	}
	report_agg_drift_table(&w, p->threshold, &out, &nunstable);
	d.caption = cap = xasprintf("control cell of sweep %s per worker: median time as a ratio to the median of "
				    "its runs%s; noise: the largest of a run, or for runs of one sample their spread; "
				    "unstable when drift or noise passes %g%%", p->c->sweep,
				    p->drop_first ? " (the first left out)" : "", p->threshold * 100);
	if (!(ret = emit(p, &d)) && nunstable)
		report_note("%d of %zu workers unstable; 'sweep report --exclude-unstable' leaves their hosts out",
			    nunstable, w.n);
	free(cap);
	report_rows_release(&out);
	report_rows_release(&w);
	return ret;
}

/* --score: predictions registered with `sweep predict` against the results. */
static int score(struct report_plan *p)
{
	struct report_score_counts n;
	struct report_rows in, out, pairs = { 0 };
	struct report_doc d = { &out, NULL, NULL, 0, -1, NULL, 0, NULL, NULL, NULL, NULL };
	char bar[64] = "", *cap;
	int ret;

	if (p->items)
		return fail_usage("--score scores the predictions of cells, which have no items: item is no key "
				  "of a score");
	if ((ret = report_plan_query(p, report_query_score, &in))) {
		report_rows_release(&in);
		return ret;
	}
	report_agg_score(&in, (const char *const *)p->asked, p->nasked, p->bar, &out, &n);
	report_rows_release(&in);
	if (!out.n) {
		ret = fail_usage("no predictions of sweep '%s'%s%s have a measured result%s", p->c->sweep,
				 p->metric ? " for " : "", p->metric ? p->metric : "",
				 n.pending ? " yet" : " (register them with 'sweep predict')");
		report_rows_release(&out);
		return ret;
	}
	if (!isnan(p->bar))
		snprintf(bar, sizeof(bar), "; bar: rms error <= %g%%", p->bar);
	d.caption = cap = xasprintf("predictions of sweep %s: error = 100 (measured - predicted) / predicted%s",
				    p->c->sweep, bar);
	/* a figure (sweep plot --score, a page) draws each prediction with its measure: read before printing */
	if ((p->figure || p->out.fmt->page) && !(ret = report_plan_query(p, report_query_score_pairs, &pairs)))
		d.pairs = &pairs;
	if (!ret)
		ret = emit(p, &d);
	report_rows_release(&pairs);
	if (n.pending)
		report_note("%d predicted %s not measured yet", n.pending,
			    n.pending == 1 ? "result is" : "results are");
	if (!ret && !isnan(p->bar))
		report_note("bar %g%%: met by %d of %d groups", p->bar, n.met, n.groups);
	/* a CI job gates on the bar: a group that missed it is a failure of its own kind */
	if (!ret && !isnan(p->bar) && n.met < n.groups)
		ret = FAIL_WORSE;
	free(cap);
	report_rows_release(&out);
	return ret;
}

/* sweep plot: the metric against a key, through gnuplot. */
static int plot(struct report_plan *p)
{
	struct report_rows in, points;
	char *words = NULL;
	int ret;

	if ((ret = report_plan_metric(p)) || (ret = report_plan_points(p)))
		return ret;
	if ((ret = report_plan_query(p, report_query_plot, &in))) {
		report_rows_release(&in);
		return ret;
	}
	report_agg_points(&in, &points);
	report_rows_release(&in);
	if (!points.n && p->items)
		ret = nothing(p);
	else if (!points.n)
		ret = fail_usage("nothing to plot: no ok results of sweep '%s' with metric '%s'%s", p->c->sweep,
				 p->metric, p->where ? " that pass --where" : "");
	else if (!(ret = report_plot_print(p, &points)) && (words = measured(p)))
		report_note("%s", words);   /* after what was written: the figure shows the measured cells */
	report_rows_release(&points);
	free(words);
	return ret;
}

int report_run(const struct report_opts *o)
{
	static int (*const mode[])(struct report_plan *) = {
		[REPORT_TABLE] = table, [REPORT_COMPARE] = compare, [REPORT_LIMIT] = limit,
		[REPORT_DRIFT] = drift, [REPORT_SCORE] = score, [REPORT_PLOT] = plot,
	};
	struct report_ctx c;
	struct report_plan p;
	int ret;

	if (!(ret = report_ctx_open(&c, o->db, o->sweep))) {
		report_plan_init(&p, o, &c);
		if (!o->exclude_unstable || !(ret = report_plan_exclude(&p)))
			ret = mode[o->mode](&p);
		report_plan_release(&p);
	}
	report_ctx_release(&c);
	return ret;
}
