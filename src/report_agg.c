/* report_agg.c: the pure aggregation of reports: rows in, rows out, no SQL and no printing. The tables,
 * what varies inside a row, summaries, limits, drift, scores and a plot's points. (Pairing is in
 * report_pair.c.) The statistic of a group of results itself is SQL's (store_functions.c's median and the
 * like), in the statements of report_query.c. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "report_agg.h"
#include "stats.h"

static int key_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* ---- tables ---- */

/* The key columns of a table, then its --summary group: at = where each goes in out. */
static void key_cols(struct report_rows *out, const char *const *keys, int nkey, const char *group)
{
	for (int i = 0; i < nkey; i++)
		report_rows_col(out, keys[i], RCOL_KEY);
	if (group)
		report_rows_group(out, group);
}

/* A number column: sig significant digits, align group; a count (sig 0) is left out of summaries. */
static int num_col(struct report_rows *out, const char *name, int sig, int align)
{
	int c = report_rows_col(out, name, RCOL_NUM);

	out->col[c].sig = sig;
	out->col[c].nosum = !sig;
	out->col[c].align = align;
	return c;
}

/* Row i's keys (and, in a column of its own, its group at in's column g) into a new row of out. */
static size_t add_keyed(struct report_rows *out, const struct report_rows *in, size_t i, int nkey, int g)
{
	size_t at = report_rows_add(out);

	for (int k = 0; k < nkey; k++)
		report_rows_set_text(out, at, k, report_rows_text(in, i, k));
	if (out->group >= nkey)
		report_rows_set_text(out, at, out->group, report_rows_text(in, i, g));
	return at;
}

/* A column of the pivot: the values of the column keys, typed so they sort as SQLite sorts them. */
struct pcol {
	char **text;           /* NULL for NULL */
	double *num;           /* NaN for text and NULL */
	size_t *rank;          /* text: its place in its key's spec order (report_order), past the end if none */
};

/* The place of text v in key's order among the rows' orders (the collation's order in SQL). */
static size_t text_rank(const struct report_rows *in, const char *key, const char *v)
{
	for (size_t i = 0; v && i < in->norders; i++)
		if (!strcmp(in->orders[i].param, key)) {
			size_t r = 0;

			while (r < in->orders[i].n && strcmp(in->orders[i].values[r], v))
				r++;
			return r;
		}
	return SIZE_MAX;
}

/* SQLite's order: NULL, then numbers by value, then text by its spec order (the collation) and bytes. */
static int pcol_cmp_n;
static int pcol_cmp(const void *pa, const void *pb)
{
	const struct pcol *a = pa, *b = pb;

	for (int k = 0; k < pcol_cmp_n; k++) {
		int ta = !a->text[k] ? 0 : isnan(a->num[k]) ? 2 : 1;
		int tb = !b->text[k] ? 0 : isnan(b->num[k]) ? 2 : 1;
		int c;

		if (ta != tb)
			return ta - tb;
		if (ta == 1 && a->num[k] != b->num[k])
			return a->num[k] < b->num[k] ? -1 : 1;
		if (ta == 2 && a->rank[k] != b->rank[k])
			return a->rank[k] < b->rank[k] ? -1 : 1;
		if (ta == 2 && (c = strcmp(a->text[k], b->text[k])))
			return c;
	}
	return 0;
}

/* The pivot's columns in order of first appearance (col[i] of each row in *of), then sorted: *where maps
 * a first-appearance index to its sorted place. Returns the sorted columns (the caller frees each text
 * and num, then the array). */
static struct pcol *pivot_cols(const struct report_rows *in, int at, const char *const *colkeys, int nc,
			       size_t **of, size_t **where, size_t *ncol)
{
	struct pcol *col = NULL, *sorted;
	size_t n = 0;

	*of = xmalloc((in->n + 1) * sizeof(**of));
	for (size_t j = 0; j < in->n; j++) {
		size_t i;

		for (i = 0; i < n; i++) {
			int same = 1;

			for (int k = 0; k < nc && same; k++)
				same = key_eq(col[i].text[k], report_rows_text(in, j, at + k));
			if (same)
				break;
		}
		if (i == n) {
			col = xrealloc(col, (n + 1) * sizeof(*col));
			col[n].text = xcalloc((size_t)nc + 1, sizeof(char *));
			col[n].num = xcalloc((size_t)nc + 1, sizeof(double));
			col[n].rank = xcalloc((size_t)nc + 1, sizeof(size_t));
			for (int k = 0; k < nc; k++) {
				const char *s = report_rows_text(in, j, at + k);

				col[n].text[k] = s ? xstrdup(s) : NULL;
				col[n].num[k] = report_rows_num(in, j, at + k);
				col[n].rank[k] = text_rank(in, colkeys[k], s);
			}
			n++;
		}
		(*of)[j] = i;
	}
	sorted = xmalloc((n + 1) * sizeof(*sorted));
	if (n)
		memcpy(sorted, col, n * sizeof(*sorted));
	pcol_cmp_n = nc;
	qsort(sorted, n, sizeof(*sorted), pcol_cmp);
	*where = xmalloc((n + 1) * sizeof(**where));
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < n; k++)
			if (sorted[i].text == col[k].text)
				(*where)[k] = i;
	free(col);
	*ncol = n;
	return sorted;
}

/* Header of a pivot column: "N=256", "N=256 K=256". */
static char *pcol_name(const char *const *colkeys, int nc, const struct pcol *c)
{
	struct strbuf sb = STRBUF_INIT;

	for (int k = 0; k < nc; k++) {
		char *v = c->text[k] ? report_rows_quote(c->text[k]) : xstrdup("-");

		sb_addf(&sb, "%s%s=%s", k ? " " : "", colkeys[k], v);
		free(v);
	}
	return sb_detach(&sb);
}

/* With column keys: one row per row key (and group), its values laid out under the sorted columns. */
static void pivot(const struct report_rows *in, int nr, const char *const *colkeys, int nc, int ng,
		  struct report_rows *out)
{
	size_t *of, *where, ncol, first;
	struct pcol *col = pivot_cols(in, nr, colkeys, nc, &of, &where, &ncol);
	int v0 = out->ncol;

	for (size_t i = 0; i < ncol; i++) {
		char *name = pcol_name(colkeys, nc, &col[i]);

		num_col(out, name, 4, 1);
		free(name);
	}
	for (size_t j = 0; j < in->n; j = first) {
		size_t at = add_keyed(out, in, j, nr, nr + nc + 2);

		for (first = j; first < in->n; first++) {
			int same = 1, c = v0 + (int)where[of[first]];

			for (int k = 0; k < nr && same; k++)
				same = key_eq(report_rows_text(in, j, k), report_rows_text(in, first, k));
			if (ng && same)
				same = key_eq(report_rows_text(in, j, nr + nc + 2),
					      report_rows_text(in, first, nr + nc + 2));
			if (!same)
				break;
			report_rows_set_num(out, at, c, report_rows_num(in, first, nr + nc));
			if (report_rows_num(in, first, nr + nc + 2 + ng) > 0)
				report_rows_mark(out, at, c, MARK_IMPRECISE);
		}
	}
	for (size_t i = 0; i < ncol; i++) {
		for (int k = 0; k < nc; k++)
			free(col[i].text[k]);
		free(col[i].text);
		free(col[i].num);
		free(col[i].rank);
	}
	free(col);
	free(of);
	free(where);
}

void report_agg_table(const struct report_rows *in, const char *const *keys, int nkey,
		      const char *const *colkeys, int ncolkey, const char *group, const char *metric,
		      struct report_rows *out)
{
	int ng = group ? 1 : 0, at = nkey + ncolkey;

	report_rows_init(out);
	key_cols(out, keys, nkey, group);
	if (ncolkey) {
		pivot(in, nkey, colkeys, ncolkey, ng, out);
		return;
	}
	num_col(out, "n", 0, 0);
	num_col(out, metric, 4, 0);
	for (size_t j = 0; j < in->n; j++) {
		size_t row = add_keyed(out, in, j, nkey, at + 2);

		report_rows_set_num(out, row, out->ncol - 2, report_rows_num(in, j, at + 1));
		report_rows_set_num(out, row, out->ncol - 1, report_rows_num(in, j, at));
		if (report_rows_num(in, j, at + 2 + ng) > 0)
			report_rows_mark(out, row, out->ncol - 1, MARK_IMPRECISE);
	}
}

long report_agg_marked(const struct report_rows *in)
{
	long n = 0;

	for (size_t j = 0; j < in->n; j++)
		n += (long)report_rows_num(in, j, in->ncol - 1);
	return n;
}

char **report_agg_varying(const struct report_rows *in, const char *const *cand, int ncand, int *n)
{
	char **v = xcalloc((size_t)ncand + 1, sizeof(*v));

	*n = 0;
	for (int i = 0; in->n && i < ncand; i++) {
		double max = report_rows_num(in, 0, i);

		if (!isnan(max) && (int)max > 1)
			v[(*n)++] = xstrdup(cand[i]);
	}
	return v;
}

/* ---- summaries ---- */

const char *const report_sum_name[NSUM] = { "median", "min", "max", "mean", "ci95 lo", "ci95 hi", "n" };

/* A summary has fewer units than this: its interval is marked and warned of. */
#define FEW_UNITS 5

static int cmp_num(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The unit of each row: uid[j] numbers the distinct values of column u (unknown is one value) in the order
 * they sort; each row its own unit when u < 0. Returns the number of units. */
static const struct report_rows *unit_rows;
static int unit_col;
static int unit_cmp(const void *pa, const void *pb)
{
	const char *a = report_rows_text(unit_rows, *(const size_t *)pa, unit_col);
	const char *b = report_rows_text(unit_rows, *(const size_t *)pb, unit_col);

	return !a || !b ? !!a - !!b : strcmp(a, b);
}

static size_t unit_ids(const struct report_rows *in, int u, size_t *uid)
{
	size_t *order = xmalloc((in->n + 1) * sizeof(*order)), n = 0;

	for (size_t j = 0; j < in->n; j++)
		order[j] = uid[j] = j;
	if (u < 0) {
		free(order);
		return in->n;
	}
	unit_rows = in;
	unit_col = u;
	qsort(order, in->n, sizeof(*order), unit_cmp);
	for (size_t k = 0; k < in->n; k++) {
		if (k && unit_cmp(&order[k - 1], &order[k]))
			n++;
		uid[order[k]] = n;
	}
	free(order);
	return in->n ? n + 1 : 0;
}

/* One summary's work space: per unit the sum and count of its rows' values in a column. */
struct units {
	const size_t *uid;
	size_t nunit;
	double *sum, *x;
	size_t *cnt;
};

/* The statistics over the units of group g (every row when g is NULL) of column c into st[SUM_...]: a
 * unit's value is the mean of its rows' values; units without one are left out. */
static void summary_of(const struct report_rows *in, int c, const char *g, struct units *u, double *st)
{
	size_t n = 0;

	memset(u->sum, 0, u->nunit * sizeof(*u->sum));
	memset(u->cnt, 0, u->nunit * sizeof(*u->cnt));
	for (size_t j = 0; j < in->n; j++) {
		const char *gj = in->group >= 0 ? report_rows_text(in, j, in->group) : NULL;
		double v = report_rows_num(in, j, c);

		if ((!g || (gj && !strcmp(gj, g))) && !isnan(v)) {
			u->sum[u->uid[j]] += v;
			u->cnt[u->uid[j]]++;
		}
	}
	for (size_t k = 0; k < u->nunit; k++)
		if (u->cnt[k])
			u->x[n++] = u->sum[k] / (double)u->cnt[k];
	qsort(u->x, n, sizeof(*u->x), cmp_num);
	st[SUM_MEDIAN] = n ? stats_quantile_sorted(u->x, n, 0.5) : NAN;
	st[SUM_MIN] = n ? u->x[0] : NAN;
	st[SUM_MAX] = n ? u->x[n - 1] : NAN;
	st[SUM_MEAN] = stats_mean(u->x, n);
	stats_mean_ci(u->x, n, 0.95, &(double){ 0 }, &st[SUM_LO], &st[SUM_HI]);
	st[SUM_N] = (double)n;
}

/* The summary rows of group g (NULL: all rows); an interval over fewer than FEW_UNITS units is marked (one
 * unit has none: "-"), and the group's fewest units said. */
static void summary_group(const struct report_rows *in, const char *g, const char *unit, struct units *u,
			  struct report_rows *out, struct report_notes *nt)
{
	size_t first = out->n, fewest = SIZE_MAX;
	double st[NSUM];

	for (int k = 0; k < NSUM; k++) {
		size_t at = report_rows_add(out);

		report_rows_set_text(out, at, 0, report_sum_name[k]);
		report_rows_set_text(out, at, 1, g);
	}
	for (int c = 0, oc = 2; c < in->ncol; c++) {
		if (in->col[c].kind != RCOL_NUM)
			continue;
		if (!in->col[c].nosum) {
			summary_of(in, c, g, u, st);
			for (int k = 0; k < NSUM; k++)
				report_rows_set_num(out, first + (size_t)k, oc, st[k]);
			if (st[SUM_N] < FEW_UNITS && !isnan(st[SUM_LO])) {
				report_rows_mark(out, first + SUM_LO, oc, MARK_CAVEAT);
				report_rows_mark(out, first + SUM_HI, oc, MARK_CAVEAT);
			}
			if (st[SUM_N] > 0 && (size_t)st[SUM_N] < fewest)
				fewest = (size_t)st[SUM_N];
		}
		oc++;
	}
	if (fewest < FEW_UNITS) {
		report_notes_warn(nt, "the summary%s%s%s rests on %zu %s (n, one value per %s), fewer than %d: its "
				  "95%% interval is rough or missing (marked)", g ? " of '" : "", g ? g : "",
				  g ? "'" : "", fewest, fewest == 1 ? "unit" : "units", unit ? unit : "row",
				  FEW_UNITS);
		report_notes_caveat(nt, "a summary's interval rests on fewer than 5 units");
	}
}

void report_agg_summary(const struct report_rows *in, const char *unit, struct report_rows *out,
			struct report_notes *nt)
{
	int u = -1;
	size_t *uid = xmalloc((in->n + 1) * sizeof(*uid));
	struct units us;

	report_rows_init(out);
	report_rows_col(out, "stat", RCOL_TEXT);
	report_rows_col(out, "group", RCOL_TEXT);
	for (int c = 0; c < in->ncol; c++) {
		if (unit && in->col[c].kind == RCOL_KEY && !strcmp(in->col[c].name, unit))
			u = c;
		if (in->col[c].kind == RCOL_NUM) {
			int oc = report_rows_col(out, in->col[c].name, RCOL_NUM);

			out->col[oc] = (struct report_col){ out->col[oc].name, RCOL_NUM, in->col[c].sig,
							    in->col[c].nosum, in->col[c].align, in->col[c].ci };
		}
	}
	if (unit && u < 0)
		BUG("report_agg_summary: the unit '%s' is no key of the rows", unit);
	us.uid = uid;
	us.nunit = unit_ids(in, u, uid);
	us.sum = xcalloc(us.nunit + 1, sizeof(*us.sum));
	us.x = xcalloc(us.nunit + 1, sizeof(*us.x));
	us.cnt = xcalloc(us.nunit + 1, sizeof(*us.cnt));
	if (in->group < 0)
		summary_group(in, NULL, unit, &us, out, nt);
	for (size_t j = 0; in->group >= 0 && j < in->n; j++) {
		const char *g = report_rows_text(in, j, in->group);
		const char *prev = j ? report_rows_text(in, j - 1, in->group) : NULL;

		if (g && (!j || !prev || strcmp(g, prev)))
			summary_group(in, g, unit, &us, out, nt);
	}
	free(us.sum);
	free(us.x);
	free(us.cnt);
	free(uid);
}

/* ---- limits ---- */

static void add_host(char ***v, size_t *n, const char *s, size_t len)
{
	for (size_t i = 0; i < *n; i++)
		if (strlen((*v)[i]) == len && !strncmp((*v)[i], s, len))
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrndup(s, len);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The hosts of in's column c (comma-separated lists: a hostname holds no comma), sorted, as a note. */
static void note_missing(const struct report_rows *in, int c, const char *probe, struct report_notes *nt)
{
	struct strbuf sb = STRBUF_INIT;
	char **host = NULL;
	size_t n = 0;

	for (size_t j = 0; j < in->n; j++)
		for (const char *s = report_rows_text(in, j, c); s && *s;) {
			size_t len = strcspn(s, ",");

			add_host(&host, &n, s, len);
			s += len + (s[len] == ',');
		}
	if (n) {
		qsort(host, n, sizeof(*host), cmp_str);
		for (size_t k = 0; k < n; k++)
			sb_addf(&sb, "%s%s", k ? ", " : "", host[k]);
		report_notes_add(nt, "no probe '%s' for %s %s: the limit and share of %s rows are '-'", probe,
				 n == 1 ? "host" : "hosts", sb.buf, n == 1 ? "its" : "their");
	}
	for (size_t k = 0; k < n; k++)
		free(host[k]);
	free(host);
	sb_release(&sb);
}

void report_agg_limit(const struct report_rows *in, const char *const *keys, int nkey, const char *group,
		      const char *metric, const char *const *joined, size_t njoined, struct report_rows *out,
		      struct report_notes *nt)
{
	int at = nkey + (group ? 1 : 0), v0;

	report_rows_init(out);
	key_cols(out, keys, nkey, group);
	v0 = num_col(out, "n", 0, 0);
	num_col(out, metric, 4, 1);        /* the metric and its limit have one unit */
	num_col(out, "limit", 4, 1);
	num_col(out, "share", 3, 0);
	for (size_t j = 0; j < in->n; j++) {
		size_t row = add_keyed(out, in, j, nkey, nkey);
		double lim = report_rows_num(in, j, at + 4);

		for (int k = 0; k < 3; k++)
			report_rows_set_num(out, row, v0 + k, report_rows_num(in, j, at + k));
		/* the share: the statistic of the metric over that of the limit, both over the results that
		 * have the two (the one rule of a share, which the title states) */
		report_rows_set_num(out, row, v0 + 3, lim != 0 ? report_rows_num(in, j, at + 3) / lim : NAN);
		if (report_rows_num(in, j, at + 5 + (int)njoined) > 0) {
			/* the metric, and the share that rests on it */
			report_rows_mark(out, row, v0 + 1, MARK_IMPRECISE);
			report_rows_mark(out, row, v0 + 3, MARK_IMPRECISE);
		}
	}
	for (size_t i = 0; i < njoined; i++)
		note_missing(in, at + 5 + (int)i, joined[i], nt);
}

/* ---- drift ---- */

/* The worker rows of report_agg_drift. */
enum { W_HOST, W_RUN, W_RANK, W_GPU, W_N, W_MEDIANS, W_REF, W_DRIFT, W_NOISE };

static const char *or_default(const char *s, const char *def)
{
	return s ? s : def;
}

/* Whether control row j starts another worker than the one before it (rows come by worker). */
static int drift_new_worker(const struct report_rows *in, size_t j)
{
	static const char *const def[] = { "(unknown)", "-", "-", "-", "" };

	if (!j)
		return 1;
	for (int k = 0; k < 5; k++)
		if (k != 3 && strcmp(or_default(report_rows_text(in, j, k), def[k]),
				     or_default(report_rows_text(in, j - 1, k), def[k])))
			return 1;
	return 0;
}

/*
 * Worker row at, of the control rows [first, end) (the first of them left out when drop_first and there
 * are more). The reference is the median of the runs' medians, so no single run (a slow first one) sets
 * it; the drift is the largest |median / reference - 1|. The noise is the largest a run stored; a
 * command's control run of one sample stores none, so then it is the spread of the runs themselves (their
 * relative standard deviation, from 2 runs).
 */
static void drift_worker(const struct report_rows *in, size_t first, size_t end, int drop_first,
			 struct report_rows *out, size_t at)
{
	static const char *const def[] = { "(unknown)", "-", "-", "-" };
	double *median = xmalloc((end - first) * sizeof(*median)), ref, drift = 0, noise = NAN;
	size_t n;

	for (int k = 0; k < 4; k++)
		report_rows_set_text(out, at, k, or_default(report_rows_text(in, first, k), def[k]));
	first += drop_first && end - first > 1;
	n = end - first;
	for (size_t k = 0; k < n; k++) {
		double nk = report_rows_num(in, first + k, 6);

		median[k] = report_rows_num(in, first + k, 5);
		if (!isnan(nk) && (isnan(noise) || nk > noise))
			noise = nk;
	}
	ref = stats_median(median, n);
	for (size_t k = 0; k < n; k++)
		if (fabs(median[k] / ref - 1) > drift)
			drift = fabs(median[k] / ref - 1);
	if (isnan(noise) && n > 1)
		noise = stats_stdev(median, n) / stats_mean(median, n);
	report_rows_set_num(out, at, W_N, (double)n);
	report_rows_set_series(out, at, W_MEDIANS, median, n);
	report_rows_set_num(out, at, W_REF, ref);
	report_rows_set_num(out, at, W_DRIFT, drift);
	report_rows_set_num(out, at, W_NOISE, noise);
	free(median);
}

void report_agg_drift(const struct report_rows *in, int drop_first, struct report_rows *out)
{
	static const char *const names[] = {
		"host", "run", "worker", "gpu", "n", "medians", "reference", "drift", "noise",
	};

	report_rows_init(out);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		report_rows_col(out, names[i], i < W_N ? RCOL_TEXT : i == W_MEDIANS ? RCOL_SERIES : RCOL_NUM);
	for (size_t j = 0, end; j < in->n; j = end) {
		for (end = j + 1; end < in->n && !drift_new_worker(in, end); end++)
			;
		drift_worker(in, j, end, drop_first, out, report_rows_add(out));
	}
}

char *report_agg_unstable(const struct report_rows *workers, size_t row, double threshold)
{
	double drift = report_rows_num(workers, row, W_DRIFT), noise = report_rows_num(workers, row, W_NOISE);

	if (drift > threshold)
		return xasprintf("drift %.1f%% > %g%%", drift * 100, threshold * 100);
	if (!isnan(noise) && noise > threshold)
		return xasprintf("noise %.1f%% > %g%%", noise * 100, threshold * 100);
	return NULL;
}

/* Up to 8 ratios to the reference, spread evenly over the run, first and last included. */
static void drift_path(const double *median, size_t n, double ref, double *ratio, size_t *nratio)
{
	size_t shown = n < 8 ? n : 8;

	for (size_t i = 0; i < shown; i++) {
		double at = shown == 1 ? 0 : (double)i * (double)(n - 1) / (double)(shown - 1);

		ratio[i] = median[(size_t)llround(at)] / ref;
	}
	*nratio = shown;
}

void report_agg_drift_table(const struct report_rows *workers, double threshold, struct report_rows *out,
			    int *nunstable)
{
	static const char *const names[] = {
		"host", "run", "worker", "gpu", "n", "median_s", "ratio_over_time", "max_drift_%", "noise_%",
		"status",
	};
	static const int sig[] = { 0, 0, 0, 0, 0, 4, 4, 2, 2, 0 };

	report_rows_init(out);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++) {
		int c = report_rows_col(out, names[i], i < 4 || i == 9 ? RCOL_TEXT : i == 6 ? RCOL_SERIES : RCOL_NUM);

		out->col[c].sig = sig[i];
		out->col[c].align = -1;
	}
	*nunstable = 0;
	for (size_t j = 0; j < workers->n; j++) {
		size_t at = report_rows_add(out), n, nratio;
		double *median = report_rows_series(workers, j, W_MEDIANS, &n), ratio[8];
		double ref = report_rows_num(workers, j, W_REF);
		char *why = report_agg_unstable(workers, j, threshold);
		char *status = why ? xasprintf("UNSTABLE: %s", why) : xstrdup("stable");

		for (int k = 0; k < 4; k++)
			report_rows_set_text(out, at, k, report_rows_text(workers, j, k));
		report_rows_set_num(out, at, 4, (double)n);
		report_rows_set_num(out, at, 5, ref);
		drift_path(median, n, ref, ratio, &nratio);
		report_rows_set_series(out, at, 6, ratio, nratio);
		report_rows_set_num(out, at, 7, report_rows_num(workers, j, W_DRIFT) * 100);
		report_rows_set_num(out, at, 8, report_rows_num(workers, j, W_NOISE) * 100);
		report_rows_set_text(out, at, 9, status);
		*nunstable += !!why;
		free(median);
		free(why);
		free(status);
	}
}

/* ---- scores ---- */

void report_agg_score(const struct report_rows *in, const char *const *keys, int nkey, double bar,
		      struct report_rows *out, struct report_score_counts *counts)
{
	int c;

	report_rows_init(out);
	for (int k = 0; k < nkey; k++)
		report_rows_col(out, keys[k], RCOL_TEXT);
	report_rows_col(out, "metric", RCOL_TEXT);
	report_rows_col(out, "predictions", RCOL_TEXT);
	num_col(out, "n", 0, -1);
	num_col(out, "rms_err_%", 3, -1);
	num_col(out, "mean_err_%", 3, -1);
	if (!isnan(bar))
		report_rows_col(out, "bar", RCOL_TEXT);
	memset(counts, 0, sizeof(*counts));
	for (size_t j = 0; j < in->n; j++) {
		double n = report_rows_num(in, j, nkey + 2), rms = sqrt(report_rows_num(in, j, nkey + 3));
		size_t at;

		counts->pending += (int)report_rows_num(in, j, nkey + 5);
		if (!(n > 0))
			continue;
		at = report_rows_add(out);
		for (c = 0; c <= nkey; c++)
			report_rows_set_text(out, at, c, report_rows_text(in, j, c));
		report_rows_set_text(out, at, c++, report_rows_num(in, j, nkey + 1) == 1 ? "blind" : "late");
		report_rows_set_num(out, at, c++, n);
		report_rows_set_num(out, at, c++, rms);
		report_rows_set_num(out, at, c++, report_rows_num(in, j, nkey + 4));
		if (!isnan(bar)) {
			report_rows_set_text(out, at, c, rms <= bar ? "met" : "missed");
			counts->groups++;
			counts->met += rms <= bar;
		}
	}
}

/* ---- plots ---- */

void report_agg_points(const struct report_rows *in, struct report_rows *out)
{
	static const char *const names[] = { "facet", "series", "x", "y", "n", "lo", "hi" };

	report_rows_init(out);
	for (size_t i = 0; i < ARRAY_SIZE(names); i++)
		report_rows_col(out, names[i], i < 3 ? RCOL_TEXT : RCOL_NUM);
	for (size_t j = 0; j < in->n; j++) {
		size_t at;

		if (!report_rows_text(in, j, 2) || isnan(report_rows_num(in, j, 3)))
			continue;
		at = report_rows_add(out);
		for (int c = 0; c < (int)ARRAY_SIZE(names); c++) {
			report_rows_set_text(out, at, c, report_rows_text(in, j, c));
			report_rows_set_num(out, at, c, report_rows_num(in, j, c));
		}
	}
}
