/* report_print.c: the one printer of report tables: rows (and their summary) into text cells the way the
 * format's readers need them, printed by table.c's format with its caption and footnote, to --out or
 * stdout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_print.h"
#include "stats.h"

int report_out_check(const char *what, const char *path, const char *db)
{
	return path && store_output_check(what, path, db, 0) ? FAIL_UNSAFE : FAIL_OK;
}

int report_out_open(const struct report_out *out, int append, struct store_out *w)
{
	const char *dbs[] = { out->db, out->base_db, NULL };

	memset(w, 0, sizeof(*w));
	w->f = stdout;
	if (!out->path)
		return FAIL_OK;
	/* a refusal to overwrite (as report_out_check), or a file that cannot be made: both said */
	if (store_out_open(w, "--out", out->path, out->db ? dbs : dbs + 1, append ? STORE_OUT_APPEND : 0))
		return FAIL_UNSAFE;
	return FAIL_OK;
}

int report_out_close(struct store_out *w)
{
	if (w->f == stdout)
		return fflush(stdout) ? error("cannot write the report: %m") : FAIL_OK;
	return store_out_close(w) ? FAIL_IO : FAIL_OK;
}

void report_print_num(const struct table_format *fmt, int digits, double v, int sig, char *buf, size_t n)
{
	/* unknown: "-" for reading, an empty field (null in JSON) for programs */
	if (isnan(v) && !fmt->reading) {
		snprintf(buf, n, "%s", "");
		return;
	}
	if (!sig) {
		if (isnan(v))
			snprintf(buf, n, "-");
		else
			snprintf(buf, n, "%.0f", v);
		return;
	}
	if (digits) {
		sig = digits;
	} else if (!fmt->reading && isfinite(v)) {
		/* for programs: more digits, no trailing zeros */
		snprintf(buf, n, "%.6g", v);
		return;
	}
	stats_format(v, sig, buf, n);
}

char *report_print_pooled(char *const *pool, int npool)
{
	struct strbuf sb = STRBUF_INIT;

	sb_add(&sb, "", 0);
	for (int i = 0; i < npool; i++)
		sb_addf(&sb, "%s%s", i ? ", " : " and ", pool[i]);
	return sb_detach(&sb);
}

/*
 * Decimals for a number column printed for reading: enough for the largest value to show its significant
 * digits, the same for every row (and for the columns of its align group: one unit) so the column lines
 * up (12.50 and 7.50, not 12.50 and 7.500). -1: each value with its own significant digits (programs,
 * counts, an empty column, a wide range, a column aligned by no one).
 */
static int column_decimals(const struct report_out *out, const struct report_rows *r, int col)
{
	const struct report_col *rc = &r->col[col];
	int sig = out->digits ? out->digits : rc->sig, d;
	double max = 0, min = INFINITY;

	if (!out->fmt->reading || !rc->sig || rc->align < 0)
		return -1;
	for (int c = 0; c < r->ncol; c++) {
		if (r->col[c].kind != RCOL_NUM || (c != col && (!rc->align || r->col[c].align != rc->align)))
			continue;
		for (size_t j = 0; j < r->n; j++)
			for (int k = 0; k < (r->col[c].ci ? 3 : 1); k++) {
				double v = fabs(report_rows_num(r, j, c + k));

				if (isfinite(v) && v > max)
					max = v;
				if (isfinite(v) && v > 0 && v < min)
					min = v;
			}
	}
	if (!(max > 0))
		return -1;
	/* A column spanning orders of magnitude (times from 64 to 8192) keeps significant digits, except
	 * where columns line up only with equal decimals (LaTeX's): then the smallest value's. */
	if (max / min > 100 && !out->fmt->equal_decimals)
		return -1;
	d = sig - 1 - (int)floor(log10(max / min > 100 ? min : max));
	return d < 0 ? 0 : d > 15 ? 15 : d;
}

/* How a number column prints: dec decimals (for reading; -1: each value its own significant digits), or
 * sig significant digits. */
struct prec {
	int dec, sig;
};

/* v as its column prints it: with dec decimals, unless that leaves it fewer than two significant digits
 * (a column spanning orders of magnitude): then with sig significant digits. Counts and unknown values as
 * report_print_num prints them. */
static void format_num(const struct report_out *out, double v, struct prec p, char *buf, size_t n)
{
	if (!p.sig || !isfinite(v))
		report_print_num(out->fmt, out->digits, v, p.sig, buf, n);
	else if (p.dec >= 0 && (v == 0 || floor(log10(fabs(v))) + p.dec + 1 >= 2))
		snprintf(buf, n, "%.*f", p.dec, v == 0 ? 0.0 : v);
	else if (!out->fmt->reading && !out->digits)
		snprintf(buf, n, "%.*g", p.sig, v);   /* for programs: no trailing zeros */
	else
		stats_format(v, p.sig, buf, n);
}

/* Whether a and b, different numbers, print differently at p. */
static int told_apart(const struct report_out *out, double a, double b, struct prec p)
{
	char x[40], y[40];

	if (a == b || !isfinite(a) || !isfinite(b))
		return 1;
	format_num(out, a, p, x, sizeof(x));
	format_num(out, b, p, y, sizeof(y));
	return strcmp(x, y) != 0;
}

/* Whether a and b are one number but for rounding (within 1e-9 of each other, relative): the bounds of an
 * interval with nothing to resample, which a sum's rounding moves by 1e-16, need not be told apart. */
static int same_to_rounding(double a, double b)
{
	return fabs(a - b) <= 1e-9 * fmax(fabs(a), fabs(b));
}

/* Whether a and b print apart at p wherever they are apart beyond rounding. */
static int shown_apart(const struct report_out *out, double a, double b, struct prec p)
{
	return same_to_rounding(a, b) || told_apart(out, a, b, p);
}

/*
 * An interval prints what it says: its bounds apart from each other and from 1 wherever the true ones are
 * (an interval of [0.9954, 1.0093] that includes 1 must not print as [1.00, 1.01], nor one of 10,000
 * items as [1.05, 1.05]). p, the column's precision, gains decimals (or digits) until every row of the
 * interval column c (its value, then the bounds at c + 1 and c + 2) tells them apart, or until there are
 * no more to give.
 */
static struct prec interval_prec(const struct report_out *out, const struct report_rows *r, int c, struct prec p)
{
	for (;;) {
		int ok = 1;

		for (size_t j = 0; j < r->n && ok; j++) {
			double lo = report_rows_num(r, j, c + 1), hi = report_rows_num(r, j, c + 2);

			ok = shown_apart(out, lo, hi, p) && shown_apart(out, lo, 1, p) && shown_apart(out, hi, 1, p);
		}
		if (ok || (p.dec >= 0 ? p.dec >= 15 : p.sig >= 17))
			return p;
		if (p.dec >= 0)
			p.dec++;
		else
			p.sig++;
	}
}

/* Every column's precision: pr[c] (an interval's bounds print as its value does). */
static void column_prec(const struct report_out *out, const struct report_rows *r, struct prec *pr)
{
	for (int c = 0; c < r->ncol; c++) {
		pr[c].dec = r->col[c].kind == RCOL_NUM ? column_decimals(out, r, c) : -1;
		pr[c].sig = !r->col[c].sig ? 0 : out->digits ? out->digits : out->fmt->reading ? r->col[c].sig : 6;
	}
	for (int c = 0; c + 2 < r->ncol; c++)
		if (r->col[c].kind == RCOL_NUM && r->col[c].ci && r->col[c].sig)
			pr[c] = pr[c + 1] = pr[c + 2] = interval_prec(out, r, c, pr[c]);
}

/* v at p, or with more decimals (digits) where it differs from 1 but would print as 1 does: a summary's
 * bound of 0.99965 does not print as 1.000, as an interval's bound does not (interval_prec). */
static void format_apart_from_1(const struct report_out *out, double v, struct prec p, char *buf, size_t n)
{
	while (p.sig && !shown_apart(out, v, 1, p) && (p.dec >= 0 ? p.dec < 15 : p.sig < 17)) {
		if (p.dec >= 0)
			p.dec++;
		else
			p.sig++;
	}
	format_num(out, v, p, buf, n);
}

/* A series: each number as the report prints one, separated by spaces. Owned. */
static char *format_series(const struct report_out *out, const struct report_rows *r, size_t j, int c)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n;
	double *v = report_rows_series(r, j, c, &n);
	char buf[40];

	sb_add(&sb, "", 0);
	for (size_t i = 0; i < n; i++) {
		report_print_num(out->fmt, out->digits, v[i], r->col[c].sig, buf, sizeof(buf));
		sb_addf(&sb, "%s%s", i ? " " : "", buf);
	}
	free(v);
	return sb_detach(&sb);
}

/* Cell c of row j as text (owned; NULL for unknown, which a format prints its way). *skip: the columns
 * after c that this cell holds too (an interval's bounds, for reading). */
static char *format_cell(const struct report_out *out, const struct report_rows *r, const struct prec *pr,
			 size_t j, int c, int *skip)
{
	const struct report_col *rc = &r->col[c];
	const char *s = report_rows_text(r, j, c);
	double v = report_rows_num(r, j, c);
	char buf[128], lo[40], hi[40];

	*skip = 0;
	switch (rc->kind) {
	case RCOL_KEY:
	case RCOL_LABEL:
		if (!s)
			return out->fmt->reading ? xstrdup("-") : NULL;
		return out->fmt->reading && rc->kind == RCOL_KEY ? report_rows_quote(s) : xstrdup(s);
	case RCOL_TEXT:
	case RCOL_NOTE:
		return s ? xstrdup(s) : NULL;
	case RCOL_SERIES:
		return format_series(out, r, j, c);
	case RCOL_NUM:
		break;
	}
	format_num(out, v, pr[c], buf, sizeof(buf));
	if (out->fmt->reading && rc->ci) {
		*skip = 2;
		if (!isnan(report_rows_num(r, j, c + 1))) {
			format_num(out, report_rows_num(r, j, c + 1), pr[c], lo, sizeof(lo));
			format_num(out, report_rows_num(r, j, c + 2), pr[c], hi, sizeof(hi));
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " [%s, %s]", lo, hi);
		}
	}
	return xstrdup(buf);
}

/* Whether column c is printed in the format: a note only for programs. */
static int shown(const struct report_out *out, const struct report_col *c)
{
	return !(out->fmt->reading && c->kind == RCOL_NOTE);
}

/* The marks some value of r carries (enum report_mark bits). */
static unsigned any_mark(const struct report_rows *r)
{
	unsigned m = 0;

	for (size_t i = 0; r && i < r->n * (size_t)r->ncol; i++)
		m |= r->mark[i];
	return m;
}

/* A value's marks into the table, for reading: table mark k for enum report_mark bit k. */
static void put_marks(struct table *t, unsigned mark, int cell)
{
	for (int k = 0; k < TABLE_NMARKS; k++)
		if ((mark >> k) & 1)
			table_mark(t, cell, k);
}

/* The cells of a table before its columns, for programs: a stat column when it has a summary. */
static int lead_cells(const struct report_out *out, const struct report_doc *d)
{
	return !out->fmt->reading && d->summary ? 1 : 0;
}

/* The table's heading: for programs a stat column first when there is a summary, then the columns (an
 * interval's bounds in its value's for reading), and for programs a precise column where some value
 * carries MARK_IMPRECISE. Returns the number of cells. */
static int head_cells(const struct report_out *out, const struct report_doc *d, const char **head)
{
	const struct report_rows *r = d->rows;
	int nh = 0;

	if (lead_cells(out, d))
		head[nh++] = "stat";
	for (int c = 0; c < r->ncol; c++) {
		int merged = out->fmt->reading && r->col[c].kind == RCOL_NUM && r->col[c].ci;

		if (!shown(out, &r->col[c]))
			continue;
		head[nh++] = merged ? r->ci_head : r->col[c].name;
		c += merged ? 2 : 0;
	}
	if ((any_mark(r) & MARK_IMPRECISE) && !out->fmt->reading)
		head[nh++] = "precise";
	return nh;
}

/* Row j into the table: its cells, then its marks (for reading) or its precise cell (for programs). */
static void add_row(const struct report_out *out, const struct report_doc *d, const struct prec *pr, size_t j,
		    struct table *t)
{
	const struct report_rows *r = d->rows;
	char **cell = xcalloc((size_t)r->ncol + 3, sizeof(*cell));
	int nc = lead_cells(out, d), ok = 1, skip;

	for (int c = 0; c < r->ncol; c++) {
		if (!shown(out, &r->col[c]))
			continue;
		cell[nc++] = format_cell(out, r, pr, j, c, &skip);
		c += skip;
	}
	for (int c = 0; c < r->ncol; c++)
		ok &= !(r->mark[j * (size_t)r->ncol + (size_t)c] & MARK_IMPRECISE);
	if ((any_mark(r) & MARK_IMPRECISE) && !out->fmt->reading)
		cell[nc++] = xstrdup(ok ? "1" : "0");
	table_add(t, (const char *const *)cell);
	for (int c = 0, k = 0; out->fmt->reading && c < r->ncol; c++, k++) {
		put_marks(t, r->mark[j * (size_t)r->ncol + (size_t)c], k);
		if (r->col[c].kind == RCOL_NUM && r->col[c].ci)
			c += 2;        /* the interval is printed in the value's cell */
	}
	for (int i = 0; i < nc; i++)
		free(cell[i]);
	free(cell);
}

/*
 * The summary rows (report_agg_summary's) under the table, each number column's statistic with the
 * table's precision (a count left empty, n as an integer, an interval's value only for reading) and its
 * marks. For reading the statistic (and group) in the first cell, the keys' cells empty; for programs the
 * statistic in the stat column, the group's value in its column, other keys and precise empty.
 */
static void add_summary(const struct report_out *out, const struct report_doc *d, const struct prec *pr,
			int nh, struct table *t)
{
	const struct report_rows *r = d->rows, *sum = d->summary;
	int lead = 0, prog = !out->fmt->reading;
	char **cell = xcalloc((size_t)nh + 1, sizeof(*cell));

	while (lead < r->ncol && r->col[lead].kind != RCOL_NUM)
		lead++;
	for (size_t j = 0; j < sum->n; j++) {
		const char *stat = report_rows_text(sum, j, 0), *g = report_rows_text(sum, j, 1);
		int nc = 0, sc = 2, first;

		if (prog)
			cell[nc++] = xstrdup(stat);
		else
			cell[nc++] = g ? xasprintf("%s (%s)", stat, g) : xstrdup(stat);
		for (int c = prog ? 0 : 1; c < lead; c++)
			cell[nc++] = !prog ? xstrdup("") : c == r->group && g ? xstrdup(g) : NULL;
		first = nc;
		for (int c = lead; c < r->ncol; c++, sc++) {
			char a[40];

			if (!shown(out, &r->col[c]))
				continue;
			if (r->col[c].kind == RCOL_NOTE)
				a[0] = '\0';
			else if (r->col[c].nosum)
				a[0] = '\0';
			else if (!strcmp(stat, report_sum_name[SUM_N]))
				snprintf(a, sizeof(a), "%zu", (size_t)report_rows_num(sum, j, sc));
			else
				format_apart_from_1(out, report_rows_num(sum, j, sc), pr[c], a, sizeof(a));
			cell[nc++] = prog && !a[0] ? NULL : xstrdup(a);
			if (out->fmt->reading && r->col[c].ci) {
				c += 2;        /* the interval columns are merged into the value's */
				sc += 2;
			}
		}
		while (nc < nh)
			cell[nc++] = NULL;     /* precise */
		table_add(t, (const char *const *)cell);
		for (int c = lead, k = first, s2 = 2; !prog && c < r->ncol; c++, k++, s2++) {
			put_marks(t, sum->mark[j * (size_t)sum->ncol + (size_t)s2], k);
			if (r->col[c].ci) {
				c += 2;
				s2 += 2;
			}
		}
		for (int i = 0; i < nc; i++)
			free(cell[i]);
	}
	free(cell);
}

/* Caption, table and footnotes into f. */
static void print_table(const struct report_out *out, const struct report_doc *d, const struct table *t,
			FILE *f)
{
	unsigned marks = any_mark(d->rows) | any_mark(d->summary);
	char n[40] = "", *meaning;

	/* a blank line ends the table before (Markdown would read a line right after it as a row) */
	if (d->append)
		fputc('\n', f);
	if (d->caption && d->method && out->fmt->method)
		out->fmt->method(d->caption, f);
	if (d->caption && !d->method && out->fmt->heading)
		out->fmt->heading(d->caption, f);
	table_print(t, f, out->fmt);
	if ((marks & MARK_IMPRECISE) && out->fmt->footnote) {
		if (d->marked > 0)
			snprintf(n, sizeof(n), " (%ld result%s)", d->marked, d->marked == 1 ? "" : "s");
		meaning = xasprintf("holds medians not known to the precision asked%s", n);
		out->fmt->footnote(0, meaning, "; --strict leaves them out", f);
		free(meaning);
	}
	if ((marks & MARK_CAVEAT) && out->fmt->footnote)
		out->fmt->footnote(1, d->caveat ? d->caveat : "to read with care", " (see the warnings)", f);
	if (d->said && out->fmt->footnote)
		out->fmt->footnote(TABLE_NOTE, d->said, "", f);
}

void report_print_to(const struct report_out *out, const struct report_doc *d, FILE *f)
{
	const struct report_rows *r = d->rows;
	const char **head = xcalloc((size_t)r->ncol + 3, sizeof(*head));
	struct prec *pr = xcalloc((size_t)r->ncol + 1, sizeof(*pr));
	int nh = head_cells(out, d, head);
	struct table t;

	column_prec(out, r, pr);
	table_init(&t, nh, head);
	for (size_t j = 0; j < r->n; j++)
		add_row(out, d, pr, j, &t);
	if (d->summary)
		add_summary(out, d, pr, nh, &t);
	print_table(out, d, &t, f);
	table_release(&t);
	free(head);
	free(pr);
}

int report_print(const struct report_out *out, const struct report_doc *d)
{
	struct store_out w;
	int ret;

	if ((ret = report_out_open(out, d->append, &w)))
		return ret;
	report_print_to(out, d, w.f);
	return report_out_close(&w);
}
