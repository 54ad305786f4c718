/* report_pair.c: --compare's pairing, pure: per row, the units of arm A and arm B paired by name, the ratio
 * of their means (or the geometric mean of their ratios) with a bootstrap interval resampling the pairs,
 * and the warnings such an interval needs (few pairs or resamples, a value <= 0, unequal passes). */
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "report_agg.h"
#include "stats.h"

/* The columns of report_query_compare after the nkey keys (and group). */
enum { U_IN_A, U_IN_B, U_UNIT, U_VALUE, U_PASSES, U_MARKED };


static const char *unit_of(const struct report_rows *in, size_t j, int nkey)
{
	const char *u = report_rows_text(in, j, nkey + U_UNIT);

	return u ? u : "";
}

/* "host=a model=m" for notes about row j, or "all". Owned. */
static char *row_name(const struct report_pairing *pp, const struct report_rows *in, size_t j)
{
	return report_rows_name(in, j, pp->keys, pp->nkey);
}

/* One row key's units, paired: the values of the pairs, the units in one arm only and which, and what
 * makes its statistic one to read with care. */
struct pairs {
	double *a, *b;
	const char **only;     /* units without a partner (in's strings) */
	int *only_b;           /* ... that are in arm B */
	size_t n;              /* from here on: set to 0 for each row */
	size_t nonly;
	size_t seen_a, seen_b; /* units in each arm */
	int marked_a, marked_b;
	const char *unequal;   /* the first pair whose arms have unequal passes (in's string), and how many */
	double passes_a, passes_b;
	size_t nunequal;
	const char *nonpos;    /* the first pair with a value <= 0, its arm and value */
	int nonpos_b;
	double nonpos_v;
};

/* The units of the row key of in's rows [j, end), which come ordered by unit: a unit's arms are adjacent. */
static void pair_units(const struct report_rows *in, size_t j, size_t end, int nkey, struct pairs *pr)
{
	for (size_t e = j, u; e < end; e = u) {
		double va = NAN, vb = NAN, pa = 0, pb = 0;
		int has_a = 0, has_b = 0;

		for (u = e; u < end && !strcmp(unit_of(in, u, nkey), unit_of(in, e, nkey)); u++) {
			int marked = report_rows_num(in, u, nkey + U_MARKED) > 0;

			if (report_rows_num(in, u, nkey + U_IN_A) == 1) {
				has_a = 1;
				va = report_rows_num(in, u, nkey + U_VALUE);
				pa = report_rows_num(in, u, nkey + U_PASSES);
				pr->marked_a |= marked;
			}
			if (report_rows_num(in, u, nkey + U_IN_B) == 1) {
				has_b = 1;
				vb = report_rows_num(in, u, nkey + U_VALUE);
				pb = report_rows_num(in, u, nkey + U_PASSES);
				pr->marked_b |= marked;
			}
		}
		pr->seen_a += has_a;
		pr->seen_b += has_b;
		if (has_a && has_b && !isnan(va) && !isnan(vb)) {
			if (pa != pb && !pr->nunequal++) {
				pr->unequal = unit_of(in, e, nkey);
				pr->passes_a = pa;
				pr->passes_b = pb;
			}
			if (!pr->nonpos && (!(va > 0) || !(vb > 0))) {
				pr->nonpos = unit_of(in, e, nkey);
				pr->nonpos_b = va > 0;
				pr->nonpos_v = va > 0 ? vb : va;
			}
			pr->a[pr->n] = va;
			pr->b[pr->n++] = vb;
		} else if (has_a != has_b) {
			pr->only[pr->nonly] = unit_of(in, e, nkey);
			pr->only_b[pr->nonly++] = has_b;
		}
	}
}

/* Say what the row at j leaves out: an arm without results, or the units without a partner (the first
 * few by name). */
static void note_row(const struct report_pairing *pp, const struct report_rows *in, size_t j,
		     const struct pairs *pr, struct report_notes *nt)
{
	struct strbuf sb = STRBUF_INIT;
	char *name;

	if (pr->seen_a && pr->seen_b && !pr->nonly)
		return;
	name = row_name(pp, in, j);
	if (!pr->seen_a || !pr->seen_b) {
		report_notes_add(nt, "%s: no results for %s=%s: nothing to compare", name, pp->key,
				 pr->seen_a ? pp->b : pp->a);
	} else {
		for (size_t i = 0; i < pr->nonly && i < 10; i++)
			sb_addf(&sb, "%s%s (only %s=%s)", i ? ", " : "", pr->only[i], pp->key,
				pr->only_b[i] ? pp->b : pp->a);
		if (pr->nonly > 10)
			sb_addf(&sb, " and %zu more", pr->nonly - 10);
		report_notes_add(nt, "%s: %zu %s without a partner, left out of the ratio: %s", name, pr->nonly,
				 pr->nonly == 1 ? "unit" : "units", sb.buf);
	}
	free(name);
	sb_release(&sb);
}

void report_warned_add(struct report_warned *w, const char *fmt, ...)
{
	va_list ap;

	if (!w->sb.buf)
		sb_add(&w->sb, "", 0);
	if (w->n++ >= 10)
		return;
	if (w->n > 1)
		sb_adds(&w->sb, "; ");
	va_start(ap, fmt);
	sb_vaddf(&w->sb, fmt, ap);
	va_end(ap);
}

char *report_warned_list(const struct report_warned *w)
{
	const char *s = w->sb.buf ? w->sb.buf : "";

	return w->n > 10 ? xasprintf("%s and %zu more", s, w->n - 10) : xstrdup(s);
}

void report_warn_few(struct report_notes *nt, const struct report_warned *few, int boot)
{
	char *v;

	if (few->n) {
		report_notes_warn(nt, "fewer than %d pairs: %s; an interval of so few is rough, of one missing "
				  "(marked)", REPORT_FEW_PAIRS, v = report_warned_list(few));
		report_notes_caveat(nt, "an interval rests on fewer than 5 pairs");
		free(v);
	}
	if (boot > 0 && boot < REPORT_BOOT_FEW) {
		report_notes_warn(nt, "--boot %d: fewer than %d resamples, the bounds move with --seed (marked)",
				  boot, REPORT_BOOT_FEW);
		report_notes_caveat(nt, "fewer than 1000 resamples");
	}
}

/* What a comparison warns of, row by row. */
struct caveats {
	struct report_warned few, nonpos, unequal, none;
};

/* Row at of out, from the pairs pr of in's row j: whatever makes its ratio one to read with care is
 * marked and kept for the warnings. */
static void caveat_row(const struct report_pairing *pp, const struct report_rows *in, size_t j,
		       const struct pairs *pr, struct report_rows *out, size_t at, int v0, struct caveats *cv)
{
	char *name = row_name(pp, in, j);
	int care = 0;

	if (pr->n < REPORT_FEW_PAIRS) {
		report_warned_add(&cv->few, "%s (n = %zu)", name, pr->n);
		care = 1;
	}
	if (pr->nonpos) {
		report_warned_add(&cv->nonpos, "%s (%s in %s=%s: %g)", name, pr->nonpos, pp->key,
			   pr->nonpos_b ? pp->b : pp->a, pr->nonpos_v);
		care = 1;
	}
	if (pr->nunequal) {
		report_warned_add(&cv->unequal, "%s (%zu %s, such as %s: %g in %s, %g in %s)", name, pr->nunequal,
			   pr->nunequal == 1 ? "unit" : "units", pr->unequal, pr->passes_a, pp->a, pr->passes_b,
			   pp->b);
		care = 1;
	}
	if (pr->n >= 2 && pp->boot > 0 && !isnan(report_rows_num(out, at, v0 + 3)) &&
	    isnan(report_rows_num(out, at, v0 + 4))) {
		report_warned_add(&cv->none, "%s", name);
		care = 1;
	}
	if (care || (pp->boot > 0 && pp->boot < REPORT_BOOT_FEW && pr->n))
		report_rows_mark(out, at, v0 + 3, MARK_CAVEAT);
	free(name);
}

/* One warning per kind of caveat, naming its rows, and the caveats for the footnote. */
static void caveat_warn(const struct report_pairing *pp, struct caveats *cv, struct report_notes *nt)
{
	const char *what = pp->stat == STATS_GEOMEAN_RATIO ? "geometric mean of ratios" : "ratio of means";
	char *v;

	report_warn_few(nt, &cv->few, pp->boot);
	if (cv->nonpos.n) {
		report_notes_warn(nt, "a value <= 0 in an arm: %s; %s (marked)", v = report_warned_list(&cv->nonpos),
				  pp->stat == STATS_GEOMEAN_RATIO ? "the ratios have no geometric mean" :
				  "a ratio of means over values of both signs says little");
		report_notes_caveat(nt, "an arm holds a value <= 0");
		free(v);
	}
	if (cv->unequal.n) {
		report_notes_warn(nt, "units with unequal passes in the two arms: %s; each arm's mean over its "
				  "passes is paired all the same (marked)", v = report_warned_list(&cv->unequal));
		report_notes_caveat(nt, "a unit has unequal passes in the two arms");
		free(v);
	}
	if (cv->none.n) {
		report_notes_warn(nt, "no BCa interval of the %s: %s (the resamples fall on one side of it, or its "
				  "jackknife has no value)", what, v = report_warned_list(&cv->none));
		report_notes_caveat(nt, "an interval is undefined");
		free(v);
	}
	for (struct report_warned *w = &cv->few; w <= &cv->none; w++)
		sb_release(&w->sb);
}

int report_pair_cols(struct report_rows *out, const char *count, const char *metric, const char *a, const char *b,
		     double ci)
{
	char *name;
	int v0, c;

	v0 = report_rows_col(out, count, RCOL_NUM);
	out->col[v0].sig = 0;
	out->col[v0].nosum = 1;
	for (int arm = 0; arm < 2; arm++) {
		name = xasprintf("%s_%s", metric, arm ? b : a);
		c = report_rows_col(out, name, RCOL_NUM);
		out->col[c].align = 1;
		out->col[c].nosum = 1;
		free(name);
	}
	c = report_rows_col(out, "ratio", RCOL_NUM);
	out->col[c].ci = 1;
	report_rows_col(out, "ci_lo", RCOL_NUM);
	report_rows_col(out, "ci_hi", RCOL_NUM);
	for (; c < out->ncol; c++) {
		out->col[c].sig = 3;
		out->col[c].nosum = c > v0 + 3;
	}
	out->ci_head = xasprintf("%s/%s [%g%% CI]", a, b, ci * 100);
	return v0;
}

/* The columns of the comparison: keys, [group], n, each arm's mean (geometric mean for the geometric mean
 * of ratios) and the ratio and its bounds. A summary summarises the ratio only. */
static int pair_cols(const struct report_pairing *pp, struct report_rows *out)
{
	report_rows_init(out);
	for (int k = 0; k < pp->nkey; k++)
		report_rows_col(out, pp->keys[k], RCOL_KEY);
	if (pp->group)
		report_rows_group(out, pp->group);
	return report_pair_cols(out, "n", pp->metric, pp->a, pp->b, pp->ci);
}

/* The arm's value over the pairs: the mean, or the geometric mean for the geometric mean of ratios (so
 * that the ratio of the two is the ratio printed). */
static double arm_value(const struct report_pairing *pp, const double *x, size_t n)
{
	return pp->stat == STATS_GEOMEAN_RATIO ? stats_geomean(x, n) : stats_mean(x, n);
}

void report_pair(const struct report_rows *in, const struct report_pairing *pp, struct report_rows *out,
		 struct report_notes *nt)
{
	int nkey = pp->nkey + (pp->group ? 1 : 0), v0 = pair_cols(pp, out);
	struct stats_boot bs = { pp->ci, pp->boot, pp->seed, pp->interval };
	struct caveats cv;
	struct pairs pr;

	memset(&cv, 0, sizeof(cv));
	for (struct report_warned *w = &cv.few; w <= &cv.none; w++)
		sb_add(&w->sb, "", 0);
	pr.a = xmalloc((in->n + 1) * sizeof(*pr.a));
	pr.b = xmalloc((in->n + 1) * sizeof(*pr.b));
	pr.only = xmalloc((in->n + 1) * sizeof(*pr.only));
	pr.only_b = xmalloc((in->n + 1) * sizeof(*pr.only_b));
	for (size_t j = 0, end; j < in->n; j = end) {
		size_t at = report_rows_add(out);
		double ratio, lo, hi;

		for (end = j + 1; end < in->n && report_rows_same_keys(in, j, in, end, nkey); end++)
			;
		memset(&pr.n, 0, sizeof(pr) - offsetof(struct pairs, n));
		pair_units(in, j, end, nkey, &pr);
		note_row(pp, in, j, &pr, nt);
		for (int k = 0; k < pp->nkey; k++)
			report_rows_set_text(out, at, k, report_rows_text(in, j, k));
		if (out->group >= pp->nkey)    /* a group that is not a row key: its own column */
			report_rows_set_text(out, at, out->group, report_rows_text(in, j, pp->nkey));
		report_rows_set_num(out, at, v0, (double)pr.n);
		if (pr.n) {
			report_rows_set_num(out, at, v0 + 1, arm_value(pp, pr.a, pr.n));
			report_rows_set_num(out, at, v0 + 2, arm_value(pp, pr.b, pr.n));
			if (stats_paired_ci(pr.a, pr.b, pr.n, pp->stat, &bs, &ratio, &lo, &hi) &&
			    pp->stat == STATS_RATIO_OF_MEANS) {
				char *name = row_name(pp, in, j);

				report_notes_add(nt, "%s: the mean of %s=%s is 0: no ratio", name, pp->key, pp->b);
				free(name);
			}
			report_rows_set_num(out, at, v0 + 3, ratio);
			report_rows_set_num(out, at, v0 + 4, lo);
			report_rows_set_num(out, at, v0 + 5, hi);
			caveat_row(pp, in, j, &pr, out, at, v0, &cv);
		}
		if (pr.marked_a)
			report_rows_mark(out, at, v0 + 1, MARK_IMPRECISE);
		if (pr.marked_b)
			report_rows_mark(out, at, v0 + 2, MARK_IMPRECISE);
		if (pr.marked_a || pr.marked_b)
			report_rows_mark(out, at, v0 + 3, MARK_IMPRECISE);     /* the ratio rests on them */
	}
	caveat_warn(pp, &cv, nt);
	free(pr.a);
	free(pr.b);
	free(pr.only);
	free(pr.only_b);
}
