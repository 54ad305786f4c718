/* report_table.c: the table a report builds, printed for reading or for programs; the plain and pivot
 * tables of `sweep report`. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report.h"
#include "stats.h"

static void free_strings(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

/* ---- the table a report builds, and printing it ---- */

/* A key's value for reading: an empty or blank value, or one with space at an end, in double quotes,
 * so that "" and " " are not both an empty cell (or an empty "v=" heading). */
static char *shown_key(const char *s)
{
	size_t n = strlen(s);

	if (!n || s[0] == ' ' || s[n - 1] == ' ' || s[0] == '\t' || s[n - 1] == '\t')
		return xasprintf("\"%s\"", s);
	return xstrdup(s);
}

void rtab_init(struct rtab *t, int nkeys, const char *const *keyname, int nvals,
	       const char *const *valname)
{
	memset(t, 0, sizeof(*t));
	t->nkeys = nkeys;
	t->nvals = nvals;
	t->keyname = xcalloc((size_t)nkeys + 1, sizeof(*t->keyname));
	t->valname = xcalloc((size_t)nvals + 1, sizeof(*t->valname));
	t->sig = xcalloc((size_t)nvals + 1, sizeof(*t->sig));
	t->nosum = xcalloc((size_t)nvals + 1, sizeof(*t->nosum));
	t->dgroup = xcalloc((size_t)nvals + 1, sizeof(*t->dgroup));
	for (int i = 0; i < nkeys; i++)
		t->keyname[i] = xstrdup(keyname[i]);
	for (int i = 0; i < nvals; i++) {
		t->valname[i] = xstrdup(valname[i]);
		t->sig[i] = 4;
	}
	t->ci_at = -1;
}

void rtab_add(struct rtab *t, const char *const *key, const double *val, const char *group)
{
	ALLOC_GROW(t->key, (t->n + 1) * (size_t)t->nkeys, t->alloc_key);
	ALLOC_GROW(t->val, (t->n + 1) * (size_t)t->nvals, t->alloc_val);
	ALLOC_GROW(t->group, t->n + 1, t->alloc_group);
	ALLOC_GROW(t->noisy, (t->n + 1) * (size_t)t->nvals + 1, t->alloc_noisy);
	memset(t->noisy + t->n * (size_t)t->nvals, 0, (size_t)t->nvals);
	for (int i = 0; i < t->nkeys; i++)
		t->key[t->n * (size_t)t->nkeys + (size_t)i] = key[i] ? xstrdup(key[i]) : NULL;
	for (int i = 0; i < t->nvals; i++)
		t->val[t->n * (size_t)t->nvals + (size_t)i] = val[i];
	t->group[t->n] = group ? xstrdup(group) : NULL;
	t->n++;
}

void rtab_noisy(struct rtab *t, int col)
{
	if (!t->n || col < 0 || col >= t->nvals)
		BUG("rtab_noisy: no value %d in the last row", col);
	t->noisy[(t->n - 1) * (size_t)t->nvals + (size_t)col] = 1;
}

void rtab_release(struct rtab *t)
{
	free(t->noisy);
	for (size_t i = 0; i < t->n * (size_t)t->nkeys; i++)
		free(t->key[i]);
	for (size_t i = 0; i < t->n; i++)
		free(t->group[i]);
	free_strings(t->keyname, (size_t)t->nkeys);
	free_strings(t->valname, (size_t)t->nvals);
	free(t->key);
	free(t->val);
	free(t->group);
	free(t->sig);
	free(t->nosum);
	free(t->dgroup);
	memset(t, 0, sizeof(*t));
}

int report_out_check(const struct report *r)
{
	struct stat so, sd;
	char head[16];
	FILE *f;
	size_t n;

	if (!r->out || stat(r->out, &so))
		return 0;      /* stdout, or a new file */
	if (r->db && !stat(r->db, &sd) && so.st_dev == sd.st_dev && so.st_ino == sd.st_ino)
		return error("--out '%s' is the database being read: not overwriting it", r->out);
	if (!S_ISREG(so.st_mode))
		return 0;      /* /dev/stdout, a pipe */
	if (!(f = fopen(r->out, "rb")))
		return error("cannot read '%s' to check it before overwriting: %m", r->out);
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (n == sizeof(head) && !memcmp(head, "SQLite format 3", 16))
		return error("--out '%s' is an SQLite database: not overwriting it with a report", r->out);
	return 0;
}

int report_out_open(struct report *r, FILE **f)
{
	*f = stdout;
	if (report_out_check(r))
		return -1;
	if (r->out && !(*f = fopen(r->out, "w")))
		return error("cannot write '%s': %m", r->out);
	return 0;
}

int report_out_close(struct report *r, FILE *f)
{
	if (f == stdout)
		return fflush(f) ? error("cannot write the report: %m") : 0;
	if (ferror(f) | fclose(f))
		return error("cannot write '%s': %m", r->out);
	return 0;
}

static int human(const struct report *r)
{
	return r->fmt == TABLE_TEXT || r->fmt == TABLE_MD || r->fmt == TABLE_LATEX;
}

/*
 * Decimals for a column printed for reading: enough for the largest value to show its significant digits,
 * the same for every row so the column lines up (12.50 and 7.50, not 12.50 and 7.500). -1: each value
 * with its own significant digits (machine formats, counts, an empty column, a wide range).
 */
static int column_decimals(const struct report *r, const struct rtab *t, int col)
{
	int sig = r->digits ? r->digits : t->sig[col], d;
	double max = 0, min = INFINITY;

	if (!human(r) || !t->sig[col])
		return -1;
	for (int c = 0; c < t->nvals; c++) {
		if (c != col && (!t->dgroup[col] || t->dgroup[c] != t->dgroup[col]))
			continue;
		for (size_t j = 0; j < t->n; j++)
			for (int k = 0; k < (c == t->ci_at ? 3 : 1); k++) {
				double v = fabs(t->val[j * (size_t)t->nvals + (size_t)(c + k)]);

				if (isfinite(v) && v > max)
					max = v;
				if (isfinite(v) && v > 0 && v < min)
					min = v;
			}
	}
	if (!(max > 0))
		return -1;
	/* A column spanning orders of magnitude (times from 64 to 8192) keeps significant digits, except
	 * in LaTeX, whose right-aligned columns line up only with equal decimals: the smallest value's. */
	if (max / min > 100 && r->fmt != TABLE_LATEX)
		return -1;
	d = sig - 1 - (int)floor(log10(max / min > 100 ? min : max));
	return d < 0 ? 0 : d > 15 ? 15 : d;
}

/* v with dec decimals, unless that leaves it fewer than two significant digits (a column spanning
 * orders of magnitude): then with its own significant digits. */
static void format_num(const struct report *r, double v, int sig, int dec, char *buf, size_t n)
{
	if (dec >= 0 && isfinite(v) && (v == 0 || floor(log10(fabs(v))) + dec + 1 >= 2))
		snprintf(buf, n, "%.*f", dec, v == 0 ? 0.0 : v);
	else
		report_num(r, v, sig, buf, n);
}

/* One row of values into text cells, the interval merged into one cell for reading. */
static void format_values(const struct report *r, const struct rtab *t, const int *dec, const double *val,
			  char **cells, int *nc)
{
	char buf[128], lo[40], hi[40];

	*nc = 0;
	for (int i = 0; i < t->nvals; i++) {
		if (human(r) && i == t->ci_at) {
			format_num(r, val[i], t->sig[i], dec[i], buf, sizeof(buf));
			if (!isnan(val[i + 1])) {
				format_num(r, val[i + 1], t->sig[i], dec[i], lo, sizeof(lo));
				format_num(r, val[i + 2], t->sig[i], dec[i], hi, sizeof(hi));
				snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " [%s, %s]", lo, hi);
			}
			cells[(*nc)++] = xstrdup(buf);
			i += 2;
			continue;
		}
		format_num(r, val[i], t->sig[i], dec[i], buf, sizeof(buf));
		cells[(*nc)++] = xstrdup(buf);
	}
}

static int cmp_num(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The statistics of the --summary rows, in their order: SUM_LO and SUM_HI bound the mean's 95 % t
 * interval, as rows of their own (numbers in every format, so columns stay numeric). */
enum { SUM_MEDIAN, SUM_MIN, SUM_MAX, SUM_MEAN, SUM_LO, SUM_HI, SUM_N, NSUM };

/* Statistic k of the n sorted values x of value column v, as text into a. */
static void summary_cell(const struct report *r, const struct rtab *t, const int *dec, int v, int k,
			 const double *x, size_t n, char *a, size_t size)
{
	double mean, lo, hi, s;

	if (k == SUM_N) {
		snprintf(a, size, "%zu", n);
		return;
	}
	mean = lo = hi = NAN;
	if (k == SUM_LO || k == SUM_HI)
		stats_mean_ci(x, n, 0.95, &mean, &lo, &hi);   /* the t quantile costs some 30 us */
	else if (k == SUM_MEAN)
		mean = stats_mean(x, n);
	s = k == SUM_MEDIAN ? (n ? stats_quantile_sorted(x, n, 0.5) : NAN) : k == SUM_MIN ? (n ? x[0] : NAN) :
	    k == SUM_MAX ? (n ? x[n - 1] : NAN) : k == SUM_LO ? lo : k == SUM_HI ? hi : mean;
	format_num(r, s, t->sig[v], dec[v], a, size);
}

/*
 * The --summary rows of one group (NULL: every row): for each value column the median, min and max, the
 * mean with its 95 % Student t interval (over the rows: the rows are the sample, as machines are in a
 * table of machines) and n, the rows with a value.
 */
static void summary_rows(const struct report *r, const struct rtab *t, const int *dec, int show_group,
			 const char *group, struct table *out)
{
	static const char *const what[NSUM] = { "median", "min", "max", "mean", "ci95 lo", "ci95 hi", "n" };
	int ncell = t->nkeys + show_group + t->nvals;
	char **row = xcalloc((size_t)ncell, sizeof(*row));
	double *x = xmalloc((t->n + 1) * sizeof(*x));

	for (int k = 0; k < NSUM; k++) {
		int c = 0;

		row[c++] = group ? xasprintf("%s (%s)", what[k], group) : xstrdup(what[k]);
		while (c < t->nkeys + show_group)
			row[c++] = xstrdup("");
		for (int v = 0; v < t->nvals; v++) {
			char a[40];
			size_t n = 0;

			for (size_t j = 0; j < t->n; j++)
				if ((!group || (t->group[j] && !strcmp(t->group[j], group))) &&
				    !isnan(t->val[j * (size_t)t->nvals + (size_t)v]))
					x[n++] = t->val[j * (size_t)t->nvals + (size_t)v];
			qsort(x, n, sizeof(*x), cmp_num);
			if (t->nosum[v]) {
				row[c++] = xstrdup("");
			} else {
				summary_cell(r, t, dec, v, k, x, n, a, sizeof(a));
				row[c++] = xstrdup(a);
			}
			if (human(r) && v == t->ci_at)
				v += 2;    /* the interval columns are merged into the ratio's */
		}
		table_add(out, (const char *const *)row);
		for (int i = 0; i < c; i++)
			free(row[i]);
	}
	free(row);
	free(x);
}

/* What the mark means (STORE_IMPRECISE), in its footnote. */
#define REPORT_MARK_MEANS "holds medians not known to the precision asked"

/* The footnote of the mark: what it means and how to leave those results out. */
static void print_noise_note(const struct report *r, FILE *f)
{
	char n[40] = "";

	if (r->noisy > 0)
		snprintf(n, sizeof(n), " (%ld result%s)", r->noisy, r->noisy == 1 ? "" : "s");
	if (r->fmt == TABLE_LATEX)
		fprintf(f, "%% $^\\dagger$: %s%s; --strict leaves them out\n"
			"\\par{\\footnotesize $^\\dagger$ %s%s.}\n", REPORT_MARK_MEANS, n, REPORT_MARK_MEANS, n);
	else
		fprintf(f, "\n" TABLE_MARK " %s%s; --strict leaves them out\n", REPORT_MARK_MEANS, n);
}

static const struct rtab *sort_tab;

/* By summary group, then in the order the rows came (qsort is not stable, so the index decides ties). */
static int cmp_group(const void *pa, const void *pb)
{
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	const char *ga = sort_tab->group[a], *gb = sort_tab->group[b];
	int c = !ga || !gb ? (!!ga - !!gb) : strcmp(ga, gb);

	return c ? c : (a > b) - (a < b);
}

int report_print(struct report *r, const struct rtab *t, const char *caption)
{
	int show_group = 0, ncell, nh = 0, nc, ret, any_noisy = 0;
	const char **head;
	char **row;
	size_t *order = xmalloc((t->n + 1) * sizeof(*order));
	int *dec = xcalloc((size_t)t->nvals + 1, sizeof(*dec));
	struct table out;
	FILE *f;

	/* The summary key is shown as a column when it is not a row key already. */
	if (r->summary_by) {
		show_group = 1;
		for (int i = 0; i < t->nkeys; i++)
			show_group &= strcmp(t->keyname[i], r->summary_by) != 0;
	}
	ncell = t->nkeys + show_group + t->nvals;
	head = xcalloc((size_t)ncell + 2, sizeof(*head));
	row = xcalloc((size_t)ncell + 2, sizeof(*row));
	for (int i = 0; i < t->nkeys; i++)
		head[nh++] = t->keyname[i];
	if (show_group)
		head[nh++] = r->summary_by;
	for (int i = 0; i < t->nvals; i++) {
		if (human(r) && i == t->ci_at) {
			head[nh++] = t->ci_head;
			i += 2;
		} else {
			head[nh++] = t->valname[i];
		}
	}
	for (size_t j = 0; j < t->n * (size_t)t->nvals; j++)
		any_noisy |= t->noisy[j];
	/* for programs, a row's verdict as a column of its own (only where some value missed) */
	if (any_noisy && !human(r))
		head[nh++] = "precise";
	for (size_t j = 0; j < t->n; j++)
		order[j] = j;
	for (int i = 0; i < t->nvals; i++)
		dec[i] = column_decimals(r, t, i);
	if (r->summary_by) {
		sort_tab = t;
		qsort(order, t->n, sizeof(*order), cmp_group);
	}
	table_init(&out, nh, head);
	for (size_t o = 0; o < t->n; o++) {
		size_t j = order[o];
		int k = 0;

		for (int i = 0; i < t->nkeys; i++) {
			const char *key = t->key[j * (size_t)t->nkeys + (size_t)i];

			/* unknown: "-" for reading, empty (JSON null) for programs */
			row[k++] = key ? (human(r) ? shown_key(key) : xstrdup(key)) : human(r) ? xstrdup("-") : NULL;
		}
		if (show_group)
			row[k++] = t->group[j] ? xstrdup(t->group[j]) : human(r) ? xstrdup("-") : NULL;
		format_values(r, t, dec, &t->val[j * (size_t)t->nvals], row + k, &nc);
		if (any_noisy && !human(r)) {
			int ok = 1;

			for (int i = 0; i < t->nvals; i++)
				ok &= !t->noisy[j * (size_t)t->nvals + (size_t)i];
			row[k + nc++] = xstrdup(ok ? "1" : "0");
		}
		table_add(&out, (const char *const *)row);
		for (int i = 0, c = k; human(r) && i < t->nvals; i++, c++) {
			if (t->noisy[j * (size_t)t->nvals + (size_t)i])
				table_mark(&out, c);
			if (i == t->ci_at)
				i += 2;    /* the interval is printed in the ratio's cell */
		}
		for (int i = 0; i < k + nc; i++)
			free(row[i]);
	}
	if (r->summary && t->n) {
		/* summary rows have no precise cell: made apart, then copied with an empty one */
		int extra = any_noisy && !human(r);
		struct table sum, *to = &out;

		if (extra) {
			table_init(&sum, nh - 1, head);
			to = &sum;
		}
		if (!r->summary_by)
			summary_rows(r, t, dec, show_group, NULL, to);
		for (size_t o = 0; r->summary_by && o < t->n; o++) {
			const char *g = t->group[order[o]];

			if (g && (!o || !t->group[order[o - 1]] || strcmp(g, t->group[order[o - 1]])))
				summary_rows(r, t, dec, show_group, g, to);
		}
		for (size_t j = 0; extra && j < sum.nrows; j++) {
			for (int i = 0; i < nh - 1; i++)
				row[i] = sum.cell[j * (size_t)(nh - 1) + (size_t)i];
			row[nh - 1] = NULL;
			table_add(&out, (const char *const *)row);
		}
		if (extra)
			table_release(&sum);
	}
	ret = report_out_open(r, &f);
	if (!ret) {
		if (caption && (r->fmt == TABLE_MD || r->fmt == TABLE_TEXT))
			fprintf(f, "%s\n\n", caption);
		if (caption && r->fmt == TABLE_LATEX) {
			/* the method travels with the table: statistic, interval, resamples, seed */
			struct strbuf sb = STRBUF_INIT;

			sb_add(&sb, "", 0);
			table_add_safe(&sb, caption);
			fprintf(f, "%% %s\n", sb.buf);
			sb_release(&sb);
		}
		table_print(&out, f, r->fmt);
		if (any_noisy && human(r))
			print_noise_note(r, f);
		ret = report_out_close(r, f);
	}
	table_release(&out);
	free(head);
	free(row);
	free(order);
	free(dec);
	return ret;
}

/* ---- the plain and pivoted tables ---- */

/* A column of the pivot: the values of the column keys, typed so they sort as SQLite sorts them. */
struct pcol {
	char **text;           /* ncols, NULL for NULL */
	double *num;           /* NaN for text and NULL */
};

struct pivot {
	struct report *r;
	struct pcol *col;
	size_t ncol, alloc_col;
	/* the rows in SQL order: row keys, column index, value, count */
	char **rowkey;
	size_t nrow, alloc_rowkey;
	size_t *colidx;
	double *val, *count;
	unsigned char *miss;   /* the value holds a result above its noise target */
	size_t alloc_colidx, alloc_val, alloc_count, alloc_miss;
	long nmiss;            /* results above their noise target, over every row */
};

static int key_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

static size_t pivot_col(struct pivot *p, const struct store_row *row, int at)
{
	int nc = p->r->ncols;

	for (size_t i = 0; i < p->ncol; i++) {
		int same = 1;

		for (int k = 0; k < nc && same; k++)
			same = key_eq(p->col[i].text[k], row->text[at + k]);
		if (same)
			return i;
	}
	ALLOC_GROW(p->col, p->ncol + 1, p->alloc_col);
	p->col[p->ncol].text = xcalloc((size_t)nc + 1, sizeof(char *));
	p->col[p->ncol].num = xcalloc((size_t)nc + 1, sizeof(double));
	for (int k = 0; k < nc; k++) {
		p->col[p->ncol].text[k] = row->text[at + k] ? xstrdup(row->text[at + k]) : NULL;
		p->col[p->ncol].num[k] = row->num[at + k];
	}
	return p->ncol++;
}

static int pivot_row(const struct store_row *row, void *data)
{
	struct pivot *p = data;
	int nr = p->r->nrows, nc = p->r->ncols;

	ALLOC_GROW(p->rowkey, (p->nrow + 1) * (size_t)(nr + 1), p->alloc_rowkey);
	for (int k = 0; k < nr; k++) {
		const char *s = row->text[k];

		p->rowkey[p->nrow * (size_t)(nr + 1) + (size_t)k] = s ? xstrdup(s) : NULL;
	}
	ALLOC_GROW(p->colidx, p->nrow + 1, p->alloc_colidx);
	ALLOC_GROW(p->val, p->nrow + 1, p->alloc_val);
	ALLOC_GROW(p->count, p->nrow + 1, p->alloc_count);
	p->colidx[p->nrow] = nc ? pivot_col(p, row, nr) : 0;
	p->val[p->nrow] = row->num[nr + nc];
	p->count[p->nrow] = row->num[nr + nc + 1];
	ALLOC_GROW(p->miss, p->nrow + 1, p->alloc_miss);
	p->miss[p->nrow] = row->num[nr + nc + 2 + !!p->r->summary_by] > 0;
	p->nmiss += (long)row->num[nr + nc + 2 + !!p->r->summary_by];
	/* the summary group rides in the slot after the row keys */
	p->rowkey[p->nrow * (size_t)(nr + 1) + (size_t)nr] =
		p->r->summary_by && row->text[nr + nc + 2] ? xstrdup(row->text[nr + nc + 2]) : NULL;
	p->nrow++;
	return 0;
}

/* SQLite's order: NULL, then numbers by value, then text by bytes. */
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
		if (ta == 2 && (c = strcmp(a->text[k], b->text[k])))
			return c;
	}
	return 0;
}

/* Header of a pivot column: "N=256", "N=256 K=256". */
static char *pcol_name(struct report *r, const struct pcol *c)
{
	struct strbuf sb = STRBUF_INIT;

	for (int k = 0; k < r->ncols; k++) {
		char *v = c->text[k] ? shown_key(c->text[k]) : xstrdup("-");

		sb_addf(&sb, "%s%s=%s", k ? " " : "", r->cols[k], v);
		free(v);
	}
	return sb_detach(&sb);
}

int report_table(struct report *r)
{
	struct strbuf sql = STRBUF_INIT;
	struct pivot p = { .r = r };
	struct rtab t;
	int nr = r->nrows, nc = r->ncols, ret = -1, ng = 0;
	size_t *where = NULL;
	const char **names = NULL;
	unsigned char *miss = NULL;

	if (report_metric(r, r->metric) ||
	    report_unpooled(r, (const char *const[]){ r->summary_by }, r->summary_by ? 1 : 0))
		goto out;
	nr = r->nrows;
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < nr + nc; i++) {
		if (report_key_sql(r, i < nr ? r->rows[i] : r->cols[i - nr], &sql))
			goto out;
		sb_adds(&sql, ", ");
	}
	sb_addf(&sql, "%s(", report_stat_sql(r->stat));
	report_metric_value(r, &sql);
	sb_adds(&sql, "), count(m.value)");
	if (r->summary_by) {
		sb_adds(&sql, ", ");
		if (report_key_sql(r, r->summary_by, &sql))
			goto out;
		ng = 1;
	}
	sb_adds(&sql, ", sum(" STORE_IMPRECISE("r") ")");
	if (report_from(r, &sql, JOIN_METRIC))
		goto out;
	if (nr + nc + ng) {
		sb_adds(&sql, " GROUP BY ");
		for (int i = 0; i < nr + nc + ng; i++)
			sb_addf(&sql, "%s%d", i ? ", " : "", i < nr + nc ? i + 1 : nr + nc + 3);
		/* a row's cells (row keys and summary group) come together, its columns after */
		sb_adds(&sql, " ORDER BY ");
		for (int i = 0; i < nr; i++)
			sb_addf(&sql, "%d, ", i + 1);
		if (ng)
			sb_addf(&sql, "%d, ", nr + nc + 3);
		for (int i = nr; i < nr + nc; i++)
			sb_addf(&sql, "%d, ", i + 1);
		sql.len -= 2;
		sql.buf[sql.len] = '\0';
	}
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, pivot_row, &p))
		goto out;
	if (!p.nrow || (!nr && !nc && isnan(p.val[0]))) {
		if (!report_strict_emptied(r))
			error("no ok results of sweep '%s' with metric '%s'%s", r->sweep, r->metric,
			      r->where || r->nexcluded ? " that pass the filters" : "");
		goto out;
	}

	if (!nc) {
		const char *vn[] = { "n", r->metric };

		rtab_init(&t, nr, (const char *const *)r->rows, 2, vn);
		t.sig[0] = 0;
		t.nosum[0] = 1;
		for (size_t j = 0; j < p.nrow; j++) {
			double v[2] = { p.count[j], p.val[j] };

			rtab_add(&t, (const char *const *)&p.rowkey[j * (size_t)(nr + 1)], v,
				 p.rowkey[j * (size_t)(nr + 1) + (size_t)nr]);
			if (p.miss[j])
				rtab_noisy(&t, 1);
		}
	} else {
		/* Sort the columns, then lay each row's values out in column order. */
		double *v;

		where = xmalloc(p.ncol * sizeof(*where));
		names = xcalloc(p.ncol + 1, sizeof(*names));
		{
			struct pcol *sorted = xmalloc(p.ncol * sizeof(*sorted));

			memcpy(sorted, p.col, p.ncol * sizeof(*sorted));
			pcol_cmp_n = nc;
			qsort(sorted, p.ncol, sizeof(*sorted), pcol_cmp);
			for (size_t i = 0; i < p.ncol; i++)
				for (size_t k = 0; k < p.ncol; k++)
					if (sorted[i].text == p.col[k].text)
						where[k] = i;
			for (size_t i = 0; i < p.ncol; i++)
				names[i] = pcol_name(r, &sorted[i]);
			free(sorted);
		}
		rtab_init(&t, nr, (const char *const *)r->rows, (int)p.ncol, names);
		for (size_t i = 0; i < p.ncol; i++)
			t.dgroup[i] = 1;
		v = xmalloc(p.ncol * sizeof(*v));
		miss = xmalloc(p.ncol + 1);
		for (size_t j = 0; j < p.nrow;) {
			size_t e = j;
			char **rk = &p.rowkey[j * (size_t)(nr + 1)];

			for (size_t i = 0; i < p.ncol; i++) {
				v[i] = NAN;
				miss[i] = 0;
			}
			for (; e < p.nrow; e++) {
				int same = 1;

				for (int k = 0; k < nr + ng && same; k++)
					same = key_eq(rk[k], p.rowkey[e * (size_t)(nr + 1) + (size_t)k]);
				if (!same)
					break;
				v[where[p.colidx[e]]] = p.val[e];
				miss[where[p.colidx[e]]] = p.miss[e];
			}
			rtab_add(&t, (const char *const *)rk, v, rk[nr]);
			for (size_t i = 0; i < p.ncol; i++)
				if (miss[i])
					rtab_noisy(&t, (int)i);
			j = e;
		}
		free(v);
		free(miss);
	}
	/* the rows hold every result the report reads, unless --strict took some out: then count those */
	r->noisy = p.nmiss;
	if (r->strict && report_count_noisy(r))
		goto out_tab;
	{
		char *cap = xasprintf("%s of %s%s over passes%s, sweep %s%s%s", r->stat, r->metric,
				      r->metric_scale != 1 ? " (derived)" : "", report_pooled(r), r->sweep,
				      r->where ? ", where " : "", r->where ? r->where : "");

		ret = report_print(r, &t, cap);
		free(cap);
	}
out_tab:
	rtab_release(&t);
out:
	for (size_t j = 0; j < p.nrow; j++)
		for (int k = 0; k <= nr; k++)
			free(p.rowkey[j * (size_t)(nr + 1) + (size_t)k]);
	free(p.rowkey);
	free(p.colidx);
	free(p.val);
	free(p.count);
	free(p.miss);
	for (size_t i = 0; i < p.ncol; i++) {
		for (int k = 0; k < nc; k++)
			free(p.col[i].text[k]);
		free(p.col[i].text);
		free(p.col[i].num);
		free((char *)(names ? names[i] : NULL));
	}
	free(p.col);
	free(names);
	free(where);
	sb_release(&sql);
	return ret;
}
