/* report_verdict.c: sweep compare's pairing and verdict, pure: the cells of two databases paired by their
 * keys, the units of a cell paired by name, the ratio NEW/BASE with a paired bootstrap interval, and the
 * rule that calls a row faster, slower, unchanged or inconclusive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "stats.h"

/* The columns of report_query_baseline after the keys. */
enum { B_UNIT, B_VALUE, B_MARKED };

/* How much slower NEW is than BASE (above 1: slower), and its interval: the ratio for a metric where lower
 * is better, its inverse where higher is. */
static void slowdown(double ratio, double lo, double hi, int better, double *s, double *slo, double *shi)
{
	if (better == BETTER_LOWER) {
		*s = ratio;
		*slo = lo;
		*shi = hi;
	} else {
		*s = 1 / ratio;
		*slo = 1 / hi;
		*shi = 1 / lo;
	}
}

const char *report_verdict(double ratio, double lo, double hi, int better, double threshold)
{
	double s, slo, shi;

	if (better == BETTER_UNKNOWN || isnan(ratio) || isnan(lo) || isnan(hi))
		return NULL;
	slowdown(ratio, lo, hi, better, &s, &slo, &shi);
	if (slo > 1 + threshold)
		return "slower";
	if (shi < 1 / (1 + threshold))
		return "faster";
	if (slo >= 1 / (1 + threshold) && shi <= 1 + threshold)
		return "unchanged";
	return "inconclusive";
}

int report_verdict_worse(double ratio, double lo, double hi, int better, double above)
{
	double s, slo, shi;

	if (better == BETTER_UNKNOWN || isnan(ratio) || isnan(lo) || isnan(hi) || isnan(above))
		return 0;
	slowdown(ratio, lo, hi, better, &s, &slo, &shi);
	return slo > 1 + above;
}

static const char *unit_of(const struct report_rows *r, size_t j, int nkey)
{
	const char *u = report_rows_text(r, j, nkey + B_UNIT);

	return u ? u : "";
}

/* "N=1 host=a" for row j of r. Owned. */
static char *cell_name(const struct report_baseline *bl, const struct report_rows *r, size_t j)
{
	return report_rows_name(r, j, bl->keys, bl->nkey);
}

/* The end of the group of rows starting at j (rows of one cell are adjacent: the statement orders them). */
static size_t group_end(const struct report_rows *r, size_t j, int nkey)
{
	size_t e = j + 1;

	while (e < r->n && report_rows_same_keys(r, j, r, e, nkey))
		e++;
	return e;
}

/* The first row of base's cell with the keys of nw's row j, or base->n: looked for from the group at next
 * on, then from the start (both sides are ordered by the same keys, so the next group is the usual match). */
static size_t find_cell(const struct report_rows *base, const struct report_rows *nw, size_t j, int nkey,
			size_t next)
{
	for (int round = 0; round < 2; round++)
		for (size_t b = round ? 0 : next; b < (round ? next : base->n); b = group_end(base, b, nkey))
			if (report_rows_same_keys(base, b, nw, j, nkey))
				return b;
	return base->n;
}

/* One cell of both sides: its units paired by name into a (NEW) and b (BASE); *unpaired counts the rest. */
static size_t pair_cell(const struct report_rows *base, size_t b0, size_t b1, const struct report_rows *nw,
			size_t n0, size_t n1, int nkey, double *a, double *b, size_t *unpaired, int *marked)
{
	size_t n = 0, hint = b0, matched = 0;

	for (size_t j = n0; j < n1; j++) {
		const char *u = unit_of(nw, j, nkey);
		size_t i = hint < b1 && !strcmp(unit_of(base, hint, nkey), u) ? hint : b1;

		/* both sides list units in the same order, so the hint is the match unless one is missing */
		for (size_t k = b0; i == b1 && k < b1; k++)
			if (!strcmp(unit_of(base, k, nkey), u))
				i = k;
		if (i == b1)
			continue;
		hint = i + 1;
		matched++;
		*marked |= report_rows_num(nw, j, nkey + B_MARKED) > 0 ||
			   report_rows_num(base, i, nkey + B_MARKED) > 0;
		a[n] = report_rows_num(nw, j, nkey + B_VALUE);
		b[n] = report_rows_num(base, i, nkey + B_VALUE);
		if (!isnan(a[n]) && !isnan(b[n]))
			n++;
	}
	*unpaired = (n1 - n0 - matched) + (b1 - b0 - matched);
	return n;
}

/* The columns: keys, pairs (not "n", which a parameter may be called), the metric of each side, the ratio
 * NEW/BASE and its bounds, the verdict. */
static void baseline_cols(const struct report_baseline *bl, struct report_rows *out)
{
	report_rows_init(out);
	for (int k = 0; k < bl->nkey; k++)
		report_rows_col(out, bl->keys[k], RCOL_KEY);
	report_pair_cols(out, "pairs", bl->metric, "base", "new", bl->ci);
	free(out->ci_head);
	out->ci_head = xasprintf("new/base [%g%% CI]", bl->ci * 100);
	report_rows_col(out, "verdict", RCOL_LABEL);
}

/* A row of out for the cell nw[n0, n1) and base[b0, b1). */
static void baseline_row(const struct report_baseline *bl, const struct report_rows *base, size_t b0, size_t b1,
			 const struct report_rows *nw, size_t n0, size_t n1, struct report_rows *out,
			 struct report_baseline_counts *counts, struct report_notes *nt, double *a, double *b)
{
	int nkey = bl->nkey, v0 = nkey, marked = 0;
	size_t at = report_rows_add(out), unpaired, n;
	double ratio = NAN, lo = NAN, hi = NAN;
	const char *verdict;

	n = pair_cell(base, b0, b1, nw, n0, n1, nkey, a, b, &unpaired, &marked);
	for (int k = 0; k < nkey; k++)
		report_rows_set_text(out, at, k, report_rows_text(nw, n0, k));
	report_rows_set_num(out, at, v0, (double)n);
	if (unpaired || n < 2) {
		char *name = cell_name(bl, nw, n0);

		if (unpaired)
			report_notes_add(nt, "%s: %zu %s without a partner on the other side, left out of the ratio",
					 name, unpaired, unpaired == 1 ? "unit" : "units");
		if (n < 2)
			report_notes_add(nt, "%s: %zu %s: no interval, no verdict", name, n,
					 n == 1 ? "pair" : "pairs");
		free(name);
	}
	if (n) {
		report_rows_set_num(out, at, v0 + 2, stats_mean(a, n));
		report_rows_set_num(out, at, v0 + 1, stats_mean(b, n));
		/* NEW over BASE, resampling the pairs (the same indices for both sides) */
		stats_ratio_ci(a, b, n, bl->ci, n < 2 ? 0 : bl->boot, bl->seed, &ratio, &lo, &hi);
		report_rows_set_num(out, at, v0 + 3, ratio);
		report_rows_set_num(out, at, v0 + 4, lo);
		report_rows_set_num(out, at, v0 + 5, hi);
	}
	if ((verdict = report_verdict(ratio, lo, hi, bl->better, bl->threshold)))
		report_rows_set_text(out, at, v0 + 6, verdict);
	if (report_verdict_worse(ratio, lo, hi, bl->better, bl->fail_above))
		counts->worse++;
	if (marked)
		report_rows_mark(out, at, v0 + 3, MARK_IMPRECISE);
}

/* A cell on one side only, said with its keys and value: never dropped silently. */
static void note_alone(const struct report_baseline *bl, const struct report_rows *r, size_t j, size_t end,
		       const char *side, struct report_notes *nt)
{
	char *name = cell_name(bl, r, j);
	double sum = 0;
	size_t n = 0;

	for (size_t i = j; i < end; i++)
		if (!isnan(report_rows_num(r, i, bl->nkey + B_VALUE))) {
			sum += report_rows_num(r, i, bl->nkey + B_VALUE);
			n++;
		}
	report_notes_add(nt, "only in %s: %s (%s %.6g over %zu %s)", side, name, bl->metric, n ? sum / n : NAN,
			 n, n == 1 ? "unit" : "units");
	free(name);
}

void report_baseline(const struct report_rows *base, const struct report_rows *nw,
		     const struct report_baseline *bl, struct report_rows *out, struct report_baseline_counts *counts,
		     struct report_notes *nt)
{
	size_t nmax = (base->n > nw->n ? base->n : nw->n) + 1;
	unsigned char *used = xcalloc(base->n + 1, 1);
	double *a = xmalloc(nmax * sizeof(*a)), *b = xmalloc(nmax * sizeof(*b));

	memset(counts, 0, sizeof(*counts));
	baseline_cols(bl, out);
	for (size_t j = 0, end, next = 0; j < nw->n; j = end) {
		size_t b0 = find_cell(base, nw, j, bl->nkey, next), b1;

		end = group_end(nw, j, bl->nkey);
		if (b0 == base->n) {
			note_alone(bl, nw, j, end, "new", nt);
			counts->only_new++;
			continue;
		}
		next = b1 = group_end(base, b0, bl->nkey);
		memset(used + b0, 1, b1 - b0);
		baseline_row(bl, base, b0, b1, nw, j, end, out, counts, nt, a, b);
	}
	for (size_t j = 0, end; j < base->n; j = end) {
		end = group_end(base, j, bl->nkey);
		if (!used[j]) {
			note_alone(bl, base, j, end, "base", nt);
			counts->only_base++;
		}
	}
	free(used);
	free(a);
	free(b);
}
