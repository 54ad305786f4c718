/* report_pair.c: --compare's pairing, pure: per row, the units of arm A and arm B paired by name, and the
 * ratio of their means with a percentile bootstrap interval resampling the pairs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_int.h"
#include "stats.h"

/* The columns of report_query_compare after the nkey keys (and group). */
enum { U_IN_A, U_IN_B, U_UNIT, U_VALUE, U_MARKED };

static int same_key(const struct report_rows *in, size_t a, size_t b, int nkey)
{
	for (int k = 0; k < nkey; k++) {
		const char *x = report_rows_text(in, a, k), *y = report_rows_text(in, b, k);

		if (!(!x && !y) && !(x && y && !strcmp(x, y)))
			return 0;
	}
	return 1;
}

static const char *unit_of(const struct report_rows *in, size_t j, int nkey)
{
	const char *u = report_rows_text(in, j, nkey + U_UNIT);

	return u ? u : "";
}

/* "host=a model=m" for notes about row j, or "all". Owned. */
static char *row_name(const struct report_pairing *pp, const struct report_rows *in, size_t j)
{
	struct strbuf sb = STRBUF_INIT;

	for (int k = 0; k < pp->nkey; k++) {
		const char *v = report_rows_text(in, j, k);

		sb_addf(&sb, "%s%s=%s", k ? " " : "", pp->keys[k], v ? v : "-");
	}
	if (!pp->nkey)
		sb_adds(&sb, "all");
	return sb_detach(&sb);
}

/* One row key's units, paired: the values of the pairs, the units in one arm only and which. */
struct pairs {
	double *a, *b;
	size_t n;
	const char **only;     /* units without a partner (in's strings) */
	int *only_b;           /* ... that are in arm B */
	size_t nonly;
	size_t seen_a, seen_b; /* units in each arm */
	int marked_a, marked_b;
};

/* The units of the row key of in's rows [j, end), which come ordered by unit: a unit's arms are adjacent. */
static void pair_units(const struct report_rows *in, size_t j, size_t end, int nkey, struct pairs *pr)
{
	for (size_t e = j, u; e < end; e = u) {
		double va = NAN, vb = NAN;
		int has_a = 0, has_b = 0;

		for (u = e; u < end && !strcmp(unit_of(in, u, nkey), unit_of(in, e, nkey)); u++) {
			int marked = report_rows_num(in, u, nkey + U_MARKED) > 0;

			if (report_rows_num(in, u, nkey + U_IN_A) == 1) {
				has_a = 1;
				va = report_rows_num(in, u, nkey + U_VALUE);
				pr->marked_a |= marked;
			}
			if (report_rows_num(in, u, nkey + U_IN_B) == 1) {
				has_b = 1;
				vb = report_rows_num(in, u, nkey + U_VALUE);
				pr->marked_b |= marked;
			}
		}
		pr->seen_a += has_a;
		pr->seen_b += has_b;
		if (has_a && has_b && !isnan(va) && !isnan(vb)) {
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

/* The columns of the comparison: keys, [group], n, the metric of each arm, the ratio and its bounds. */
static int pair_cols(const struct report_pairing *pp, struct report_rows *out)
{
	char *name;
	int v0, c;

	report_rows_init(out);
	for (int k = 0; k < pp->nkey; k++)
		report_rows_col(out, pp->keys[k], RCOL_KEY);
	if (pp->group)
		report_rows_group(out, pp->group);
	v0 = report_rows_col(out, "n", RCOL_NUM);
	out->col[v0].sig = 0;
	out->col[v0].nosum = 1;
	for (int arm = 0; arm < 2; arm++) {
		name = xasprintf("%s_%s", pp->metric, arm ? pp->b : pp->a);
		c = report_rows_col(out, name, RCOL_NUM);
		out->col[c].align = 1;
		free(name);
	}
	c = report_rows_col(out, "ratio", RCOL_NUM);
	out->col[c].ci = 1;
	report_rows_col(out, "ci_lo", RCOL_NUM);
	report_rows_col(out, "ci_hi", RCOL_NUM);
	for (; c < out->ncol; c++)
		out->col[c].sig = 3;
	out->ci_head = xasprintf("%s/%s [%g%% CI]", pp->a, pp->b, pp->ci * 100);
	return v0;
}

void report_pair(const struct report_rows *in, const struct report_pairing *pp, struct report_rows *out,
		 struct report_notes *nt)
{
	int nkey = pp->nkey + (pp->group ? 1 : 0), v0 = pair_cols(pp, out);
	struct pairs pr;

	pr.a = xmalloc((in->n + 1) * sizeof(*pr.a));
	pr.b = xmalloc((in->n + 1) * sizeof(*pr.b));
	pr.only = xmalloc((in->n + 1) * sizeof(*pr.only));
	pr.only_b = xmalloc((in->n + 1) * sizeof(*pr.only_b));
	for (size_t j = 0, end; j < in->n; j = end) {
		size_t at = report_rows_add(out);
		double ratio, lo, hi;

		for (end = j + 1; end < in->n && same_key(in, j, end, nkey); end++)
			;
		pr.n = pr.nonly = pr.seen_a = pr.seen_b = 0;
		pr.marked_a = pr.marked_b = 0;
		pair_units(in, j, end, nkey, &pr);
		note_row(pp, in, j, &pr, nt);
		for (int k = 0; k < pp->nkey; k++)
			report_rows_set_text(out, at, k, report_rows_text(in, j, k));
		if (out->group >= pp->nkey)    /* a group that is not a row key: its own column */
			report_rows_set_text(out, at, out->group, report_rows_text(in, j, pp->nkey));
		report_rows_set_num(out, at, v0, (double)pr.n);
		if (pr.n) {
			report_rows_set_num(out, at, v0 + 1, stats_mean(pr.a, pr.n));
			report_rows_set_num(out, at, v0 + 2, stats_mean(pr.b, pr.n));
			if (stats_ratio_ci(pr.a, pr.b, pr.n, pp->ci, pp->boot, pp->seed, &ratio, &lo, &hi)) {
				char *name = row_name(pp, in, j);

				report_notes_add(nt, "%s: the mean of %s=%s is 0: no ratio", name, pp->key, pp->b);
				free(name);
			}
			report_rows_set_num(out, at, v0 + 3, ratio);
			report_rows_set_num(out, at, v0 + 4, lo);
			report_rows_set_num(out, at, v0 + 5, hi);
		}
		if (pr.marked_a)
			report_rows_mark(out, at, v0 + 1);
		if (pr.marked_b)
			report_rows_mark(out, at, v0 + 2);
		if (pr.marked_a || pr.marked_b)
			report_rows_mark(out, at, v0 + 3);     /* the ratio rests on them */
	}
	free(pr.a);
	free(pr.b);
	free(pr.only);
	free(pr.only_b);
}
