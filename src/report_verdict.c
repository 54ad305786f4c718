/* report_verdict.c: sweep compare's pairing and verdict, pure: the cells of two databases paired by their
 * keys, the units of a cell paired by name, the ratio NEW/BASE with a paired bootstrap interval, and the
 * rule that calls a row faster, slower, unchanged or inconclusive. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_agg.h"
#include "stats.h"

/* The columns of report_query_baseline after the keys. */
enum { B_UNIT, B_VALUE, B_MARKED, B_REP };


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

/* Row j's replicate ("pass/run"; "" where the rows have none). */
static const char *rep_of(const struct report_rows *r, size_t j, int nkey)
{
	const char *u = nkey + B_REP < r->ncol ? report_rows_text(r, j, nkey + B_REP) : NULL;

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

/* The end of the rows of the unit at j, before end: a row per replicate. */
static size_t unit_end(const struct report_rows *r, size_t j, size_t end, int nkey)
{
	size_t e = j + 1;

	while (e < end && !strcmp(unit_of(r, e, nkey), unit_of(r, j, nkey)))
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

/* One side of a cell, its values by replicate: what the variation between replicates is read from. */
struct reps {
	double *v;
	size_t *rep, *unit, n;
	const char **name;     /* the replicates (the rows' strings) */
	size_t nrep;
};

/* A cell of both sides, paired: the pairs' values (a: NEW, b: BASE), each side's replicates (0: BASE,
 * 1: NEW), and what makes the interval one to read with care. Buffers sized for a side's rows. */
struct cell {
	double *a, *b;
	struct reps r[2];
	size_t n, unpaired;
	int marked;
	size_t nunequal;       /* pairs whose units have unequal replicates, the first's name and counts */
	const char *unequal;
	size_t unequal_b, unequal_n;
	const char *nonpos;    /* the first pair with a value <= 0, its side and value */
	int nonpos_new;
	double nonpos_v;
};

static size_t rep_index(struct reps *s, const char *name)
{
	for (size_t i = 0; i < s->nrep; i++)
		if (!strcmp(s->name[i], name))
			return i;
	s->name[s->nrep] = name;
	return s->nrep++;
}

/* The mean over its replicates of the unit at rows [j, e) of r (NaN without a value), each value kept in
 * s as pair k. */
static double unit_mean(const struct report_rows *r, size_t j, size_t e, int nkey, size_t k, struct reps *s,
			int *marked)
{
	double sum = 0;
	size_t n = 0;

	for (size_t i = j; i < e; i++) {
		double v = report_rows_num(r, i, nkey + B_VALUE);

		*marked |= report_rows_num(r, i, nkey + B_MARKED) > 0;
		if (isnan(v))
			continue;
		sum += v;
		n++;
		s->v[s->n] = v;
		s->unit[s->n] = k;
		s->rep[s->n++] = rep_index(s, rep_of(r, i, nkey));
	}
	return n ? sum / (double)n : NAN;
}

/* One pair kept: what it says of unequal replicates and values <= 0. */
static void pair_caveats(struct cell *c, const char *unit, size_t reps_b, size_t reps_n)
{
	double va = c->a[c->n], vb = c->b[c->n];

	if (reps_b != reps_n && !c->nunequal++) {
		c->unequal = unit;
		c->unequal_b = reps_b;
		c->unequal_n = reps_n;
	}
	if (!c->nonpos && (!(va > 0) || !(vb > 0))) {
		c->nonpos = unit;
		c->nonpos_new = !(va > 0);
		c->nonpos_v = !(va > 0) ? va : vb;
	}
}

/* One cell of both sides: its units paired by name into c (its rows [b0, b1) of base, [n0, n1) of nw). */
static void pair_cell(const struct report_rows *base, size_t b0, size_t b1, const struct report_rows *nw,
		      size_t n0, size_t n1, int nkey, struct cell *c)
{
	size_t hint = b0, matched = 0, units_b = 0, units_n = 0;

	c->n = c->nunequal = c->r[0].n = c->r[1].n = c->r[0].nrep = c->r[1].nrep = 0;
	c->marked = 0;
	c->nonpos = NULL;
	for (size_t i = b0; i < b1; i = unit_end(base, i, b1, nkey))
		units_b++;
	for (size_t j = n0, je; j < n1; j = je) {
		const char *u = unit_of(nw, j, nkey);
		size_t i = hint < b1 && !strcmp(unit_of(base, hint, nkey), u) ? hint : b1, ie, keep[2];

		je = unit_end(nw, j, n1, nkey);
		units_n++;
		/* both sides list units in the same order, so the hint is the match unless one is missing */
		for (size_t k = b0; i == b1 && k < b1; k = unit_end(base, k, b1, nkey))
			if (!strcmp(unit_of(base, k, nkey), u))
				i = k;
		if (i == b1)
			continue;
		ie = hint = unit_end(base, i, b1, nkey);
		matched++;
		keep[0] = c->r[0].n;
		keep[1] = c->r[1].n;
		c->a[c->n] = unit_mean(nw, j, je, nkey, c->n, &c->r[1], &c->marked);
		c->b[c->n] = unit_mean(base, i, ie, nkey, c->n, &c->r[0], &c->marked);
		if (isnan(c->a[c->n]) || isnan(c->b[c->n])) {
			c->r[0].n = keep[0];   /* no pair: its values stay out of the replicates' too */
			c->r[1].n = keep[1];
			continue;
		}
		pair_caveats(c, u, ie - i, je - j);
		c->n++;
	}
	c->unpaired = (units_n - matched) + (units_b - matched);
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
	report_rows_col(out, "caveat", RCOL_NOTE);
}

/* What a comparison warns of, row by row. */
struct caveats {
	struct report_warned few, nonpos, unequal, one;
};

/* The variation between a side's replicates (stats_between_var) over the n pairs; NaN under 2. */
static double between(const struct reps *s, size_t n)
{
	return s->nrep < 2 ? NAN : stats_between_var(s->v, s->rep, s->unit, s->n, s->nrep, n);
}

/* Row at of out, from cell c of nw's row j: whatever makes its interval one to read with care is marked
 * and kept for the warnings. */
static void caveat_row(const struct report_baseline *bl, const struct report_rows *nw, size_t j,
		       const struct cell *c, struct report_rows *out, size_t at, struct caveats *cv)
{
	char *name = cell_name(bl, nw, j);
	int one_b = c->r[0].nrep < 2, one_n = c->r[1].nrep < 2;
	struct strbuf why = STRBUF_INIT;   /* the row's own caveats, for the caveat column */

	if (c->n < REPORT_FEW_PAIRS) {
		report_warned_add(&cv->few, "%s (n = %zu)", name, c->n);
		sb_addf(&why, "; fewer than %d pairs (%zu)", REPORT_FEW_PAIRS, c->n);
	}
	if (c->nonpos) {
		report_warned_add(&cv->nonpos, "%s (%s in %s: %g)", name, c->nonpos, c->nonpos_new ? "new" : "base",
				  c->nonpos_v);
		sb_addf(&why, "; a value <= 0 in %s", c->nonpos_new ? "new" : "base");
	}
	if (c->nunequal) {
		report_warned_add(&cv->unequal, "%s (%zu %s, such as %s: %zu in base, %zu in new)", name,
				  c->nunequal, c->nunequal == 1 ? "unit" : "units", c->unequal, c->unequal_b,
				  c->unequal_n);
		sb_adds(&why, "; unequal passes in base and new");
	}
	if (c->n >= 2 && (one_b || one_n)) {
		report_warned_add(&cv->one, "%s (%s)", name, one_b && one_n ? "one pass a side" :
				  one_b ? "one pass in base" : "one pass in new");
		sb_addf(&why, "; %s: run-to-run variation not measured", one_b && one_n ? "one pass a side" :
			one_b ? "one pass in base" : "one pass in new");
	}
	if (bl->boot > 0 && bl->boot < REPORT_BOOT_FEW && c->n >= 2)
		sb_addf(&why, "; fewer than %d resamples", REPORT_BOOT_FEW);
	if (why.len) {
		report_rows_mark(out, at, bl->nkey + 3, MARK_CAVEAT);
		report_rows_set_text(out, at, out->ncol - 1, why.buf + 2);
	}
	sb_release(&why);
	free(name);
}

/* One warning per kind of caveat, naming its rows, and the caveats for the footnote. */
static void caveat_warn(const struct report_baseline *bl, struct caveats *cv, struct report_notes *nt)
{
	char *v;

	report_warn_few(nt, &cv->few, bl->boot);
	if (cv->nonpos.n) {
		report_notes_warn(nt, "a value <= 0: %s; a ratio of means over values of both signs says little "
				  "(marked)", v = report_warned_list(&cv->nonpos));
		report_notes_caveat(nt, "a side holds a value <= 0");
		free(v);
	}
	if (cv->unequal.n) {
		report_notes_warn(nt, "units with unequal passes in base and new: %s; each side's mean over its "
				  "passes is paired all the same (marked)", v = report_warned_list(&cv->unequal));
		report_notes_caveat(nt, "a unit has unequal passes in base and new");
		free(v);
	}
	if (cv->one.n) {
		report_notes_warn(nt, "one pass: %s; run-to-run variation is not measured, the interval holds the "
				  "units' alone: give the sweep 'repeat: 2' or more to measure it (marked)",
				  v = report_warned_list(&cv->one));
		report_notes_caveat(nt, "one pass a side: run-to-run variation not measured ('repeat: 2' or more "
				    "measures it)");
		free(v);
	}
	for (struct report_warned *w = &cv->few; w <= &cv->one; w++)
		sb_release(&w->sb);
}

/* A row of out for the cell nw[n0, n1) and base[b0, b1). */
static void baseline_row(const struct report_baseline *bl, const struct report_rows *base, size_t b0, size_t b1,
			 const struct report_rows *nw, size_t n0, size_t n1, struct report_rows *out,
			 struct report_baseline_counts *counts, struct report_notes *nt, struct cell *c,
			 struct caveats *cv)
{
	int nkey = bl->nkey, v0 = nkey;
	size_t at = report_rows_add(out), n;
	double ratio = NAN, lo = NAN, hi = NAN, vb, vn;
	const char *verdict;

	pair_cell(base, b0, b1, nw, n0, n1, nkey, c);
	n = c->n;
	for (int k = 0; k < nkey; k++)
		report_rows_set_text(out, at, k, report_rows_text(nw, n0, k));
	report_rows_set_num(out, at, v0, (double)n);
	if (c->unpaired || n < 2) {
		char *name = cell_name(bl, nw, n0);

		if (c->unpaired)
			report_notes_add(nt, "%s: %zu %s without a partner on the other side, left out of the ratio",
					 name, c->unpaired, c->unpaired == 1 ? "unit" : "units");
		if (n < 2)
			report_notes_add(nt, "%s: %zu %s: no interval, no verdict", name, n,
					 n == 1 ? "pair" : "pairs");
		free(name);
	}
	if (n) {
		report_rows_set_num(out, at, v0 + 2, stats_mean(c->a, n));
		report_rows_set_num(out, at, v0 + 1, stats_mean(c->b, n));
		/* NEW over BASE, resampling the pairs (the same indices for both sides); then the shifts that
		 * all units of a pass share, which resampling units cannot see, added for each side */
		stats_ratio_ci(c->a, c->b, n, bl->ci, n < 2 ? 0 : bl->boot, bl->seed, &ratio, &lo, &hi);
		vb = between(&c->r[0], n);
		vn = between(&c->r[1], n);
		stats_widen(ratio, (isnan(vb) ? 0 : vb) + (isnan(vn) ? 0 : vn), bl->ci, &lo, &hi);
		report_rows_set_num(out, at, v0 + 3, ratio);
		report_rows_set_num(out, at, v0 + 4, lo);
		report_rows_set_num(out, at, v0 + 5, hi);
		caveat_row(bl, nw, n0, c, out, at, cv);
	}
	if ((verdict = report_verdict(ratio, lo, hi, bl->better, bl->threshold)))
		report_rows_set_text(out, at, v0 + 6, verdict);
	if (report_verdict_worse(ratio, lo, hi, bl->better, bl->fail_above))
		counts->worse++;
	if (c->marked)
		report_rows_mark(out, at, v0 + 3, MARK_IMPRECISE);
}

/* A cell on one side only, said with its keys and value (the mean of its units'): never dropped silently. */
static void note_alone(const struct report_baseline *bl, const struct report_rows *r, size_t j, size_t end,
		       const char *side, struct report_notes *nt)
{
	char *name = cell_name(bl, r, j);
	double sum = 0;
	size_t n = 0;

	for (size_t i = j, e; i < end; i = e) {
		double us = 0;
		size_t un = 0;

		e = unit_end(r, i, end, bl->nkey);
		for (size_t k = i; k < e; k++)
			if (!isnan(report_rows_num(r, k, bl->nkey + B_VALUE))) {
				us += report_rows_num(r, k, bl->nkey + B_VALUE);
				un++;
			}
		if (un) {
			sum += us / (double)un;
			n++;
		}
	}
	report_notes_add(nt, "only in %s: %s (%s %.6g over %zu %s)", side, name, bl->metric, n ? sum / n : NAN,
			 n, n == 1 ? "unit" : "units");
	free(name);
}

static void cell_init(struct cell *c, size_t nmax)
{
	memset(c, 0, sizeof(*c));
	c->a = xmalloc(nmax * sizeof(*c->a));
	c->b = xmalloc(nmax * sizeof(*c->b));
	for (int i = 0; i < 2; i++) {
		c->r[i].v = xmalloc(nmax * sizeof(*c->r[i].v));
		c->r[i].rep = xmalloc(nmax * sizeof(*c->r[i].rep));
		c->r[i].unit = xmalloc(nmax * sizeof(*c->r[i].unit));
		c->r[i].name = xmalloc(nmax * sizeof(*c->r[i].name));
	}
}

static void cell_release(struct cell *c)
{
	free(c->a);
	free(c->b);
	for (int i = 0; i < 2; i++) {
		free(c->r[i].v);
		free(c->r[i].rep);
		free(c->r[i].unit);
		free(c->r[i].name);
	}
}

void report_baseline(const struct report_rows *base, const struct report_rows *nw,
		     const struct report_baseline *bl, struct report_rows *out, struct report_baseline_counts *counts,
		     struct report_notes *nt)
{
	size_t nmax = (base->n > nw->n ? base->n : nw->n) + 1;
	unsigned char *used = xcalloc(base->n + 1, 1);
	struct caveats cv;
	struct cell c;

	memset(&cv, 0, sizeof(cv));
	memset(counts, 0, sizeof(*counts));
	cell_init(&c, nmax);
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
		baseline_row(bl, base, b0, b1, nw, j, end, out, counts, nt, &c, &cv);
	}
	for (size_t j = 0, end; j < base->n; j = end) {
		end = group_end(base, j, bl->nkey);
		if (!used[j]) {
			note_alone(bl, base, j, end, "base", nt);
			counts->only_base++;
		}
	}
	caveat_warn(bl, &cv, nt);
	cell_release(&c);
	free(used);
}
