/* report_print.c: the one printer of report tables: rows (and their summary) into text cells the way the
 * format's readers need them, printed by table.c's format with its caption and footnote, to --out or
 * stdout. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "report_int.h"
#include "stats.h"

int report_out_check(const char *out, const char *db)
{
	struct stat so, sd;
	char head[16];
	FILE *f;
	size_t n;

	if (!out || stat(out, &so))
		return FAIL_OK;        /* stdout, or a new file */
	if (db && !stat(db, &sd) && so.st_dev == sd.st_dev && so.st_ino == sd.st_ino) {
		error("--out '%s' is the database being read: not overwriting it", out);
		return FAIL_UNSAFE;
	}
	if (!S_ISREG(so.st_mode))
		return FAIL_OK;        /* /dev/stdout, a pipe */
	if (!(f = fopen(out, "rb")))
		return error("cannot read '%s' to check it before overwriting: %m", out);
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	if (n == sizeof(head) && !memcmp(head, "SQLite format 3", 16)) {
		error("--out '%s' is an SQLite database: not overwriting it with a report", out);
		return FAIL_UNSAFE;
	}
	return FAIL_OK;
}

int report_out_open(const struct report_opts *o, FILE **f)
{
	int ret;

	*f = stdout;
	if ((ret = report_out_check(o->out, o->db)))
		return ret;
	if (o->out && !(*f = fopen(o->out, "w")))
		return error("cannot write '%s': %m", o->out);
	return FAIL_OK;
}

int report_out_close(const struct report_opts *o, FILE *f)
{
	if (f == stdout)
		return fflush(f) ? error("cannot write the report: %m") : FAIL_OK;
	if (ferror(f) | fclose(f))
		return error("cannot write '%s': %m", o->out);
	return FAIL_OK;
}

void report_print_num(const struct report_opts *o, double v, int sig, char *buf, size_t n)
{
	/* unknown: "-" for reading, an empty field (null in JSON) for programs */
	if (isnan(v) && !o->fmt->reading) {
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
	if (o->digits) {
		sig = o->digits;
	} else if (!o->fmt->reading && isfinite(v)) {
		/* for programs: more digits, no trailing zeros */
		snprintf(buf, n, "%.6g", v);
		return;
	}
	stats_format(v, sig, buf, n);
}

char *report_print_pooled(const struct report_opts *o)
{
	struct strbuf sb = STRBUF_INIT;

	sb_add(&sb, "", 0);
	for (int i = 0; i < o->npool; i++)
		sb_addf(&sb, "%s%s", i ? ", " : " and ", o->pool[i]);
	return sb_detach(&sb);
}

/*
 * Decimals for a number column printed for reading: enough for the largest value to show its significant
 * digits, the same for every row (and for the columns of its align group: one unit) so the column lines
 * up (12.50 and 7.50, not 12.50 and 7.500). -1: each value with its own significant digits (programs,
 * counts, an empty column, a wide range, a column aligned by no one).
 */
static int column_decimals(const struct report_opts *o, const struct report_rows *r, int col)
{
	const struct report_col *rc = &r->col[col];
	int sig = o->digits ? o->digits : rc->sig, d;
	double max = 0, min = INFINITY;

	if (!o->fmt->reading || !rc->sig || rc->align < 0)
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
	if (max / min > 100 && !o->fmt->equal_decimals)
		return -1;
	d = sig - 1 - (int)floor(log10(max / min > 100 ? min : max));
	return d < 0 ? 0 : d > 15 ? 15 : d;
}

/* v with dec decimals, unless that leaves it fewer than two significant digits (a column spanning
 * orders of magnitude): then with its own significant digits. */
static void format_num(const struct report_opts *o, double v, int sig, int dec, char *buf, size_t n)
{
	if (dec >= 0 && isfinite(v) && (v == 0 || floor(log10(fabs(v))) + dec + 1 >= 2))
		snprintf(buf, n, "%.*f", dec, v == 0 ? 0.0 : v);
	else
		report_print_num(o, v, sig, buf, n);
}

/* A series: each number as the report prints one, separated by spaces. Owned. */
static char *format_series(const struct report_opts *o, const struct report_rows *r, size_t j, int c)
{
	struct strbuf sb = STRBUF_INIT;
	size_t n;
	double *v = report_rows_series(r, j, c, &n);
	char buf[40];

	sb_add(&sb, "", 0);
	for (size_t i = 0; i < n; i++) {
		report_print_num(o, v[i], r->col[c].sig, buf, sizeof(buf));
		sb_addf(&sb, "%s%s", i ? " " : "", buf);
	}
	free(v);
	return sb_detach(&sb);
}

/* Cell c of row j as text (owned; NULL for unknown, which a format prints its way). *skip: the columns
 * after c that this cell holds too (an interval's bounds, for reading). */
static char *format_cell(const struct report_opts *o, const struct report_rows *r, const int *dec, size_t j,
			 int c, int *skip)
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
			return o->fmt->reading ? xstrdup("-") : NULL;
		return o->fmt->reading && rc->kind == RCOL_KEY ? report_rows_quote(s) : xstrdup(s);
	case RCOL_TEXT:
		return s ? xstrdup(s) : NULL;
	case RCOL_SERIES:
		return format_series(o, r, j, c);
	case RCOL_NUM:
		break;
	}
	format_num(o, v, rc->sig, dec[c], buf, sizeof(buf));
	if (o->fmt->reading && rc->ci) {
		*skip = 2;
		if (!isnan(report_rows_num(r, j, c + 1))) {
			format_num(o, report_rows_num(r, j, c + 1), rc->sig, dec[c], lo, sizeof(lo));
			format_num(o, report_rows_num(r, j, c + 2), rc->sig, dec[c], hi, sizeof(hi));
			snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), " [%s, %s]", lo, hi);
		}
	}
	return xstrdup(buf);
}

/* Whether some value of r carries a mark. */
static int any_mark(const struct report_rows *r)
{
	for (size_t i = 0; i < r->n * (size_t)r->ncol; i++)
		if (r->mark[i])
			return 1;
	return 0;
}

/* The table's heading: the columns, an interval's bounds in its value's for reading, and for programs a
 * noise_ok column where some value carries a mark. Returns the number of cells. */
static int head_cells(const struct report_opts *o, const struct report_rows *r, int marks, const char **head)
{
	int nh = 0;

	for (int c = 0; c < r->ncol; c++) {
		int merged = o->fmt->reading && r->col[c].kind == RCOL_NUM && r->col[c].ci;

		head[nh++] = merged ? r->ci_head : r->col[c].name;
		c += merged ? 2 : 0;
	}
	if (marks && !o->fmt->reading)
		head[nh++] = "noise_ok";
	return nh;
}

/* Row j into the table: its cells, then its marks (for reading) or its noise_ok cell (for programs). */
static void add_row(const struct report_opts *o, const struct report_rows *r, const int *dec, size_t j,
		    int marks, struct table *t)
{
	char **cell = xcalloc((size_t)r->ncol + 2, sizeof(*cell));
	int nc = 0, ok = 1, skip;

	for (int c = 0; c < r->ncol; c++) {
		cell[nc++] = format_cell(o, r, dec, j, c, &skip);
		c += skip;
	}
	for (int c = 0; c < r->ncol; c++)
		ok &= !r->mark[j * (size_t)r->ncol + (size_t)c];
	if (marks && !o->fmt->reading)
		cell[nc++] = xstrdup(ok ? "1" : "0");
	table_add(t, (const char *const *)cell);
	for (int c = 0, k = 0; o->fmt->reading && c < r->ncol; c++, k++) {
		if (r->mark[j * (size_t)r->ncol + (size_t)c])
			table_mark(t, k);
		if (r->col[c].kind == RCOL_NUM && r->col[c].ci)
			c += 2;        /* the interval is printed in the value's cell */
	}
	for (int i = 0; i < nc; i++)
		free(cell[i]);
	free(cell);
}

/*
 * The summary rows (report_agg_summary's) under the table: the statistic (and group) in the first cell,
 * the keys' cells empty, each number column's statistic with the table's decimals (a count left empty,
 * n as an integer, an interval's value only for reading); for programs no noise_ok.
 */
static void add_summary(const struct report_opts *o, const struct report_rows *r, const int *dec,
			const struct report_rows *sum, int nh, int marks, struct table *t)
{
	int lead = 0;
	char **cell = xcalloc((size_t)r->ncol + 3, sizeof(*cell));

	while (lead < r->ncol && r->col[lead].kind != RCOL_NUM)
		lead++;
	for (size_t j = 0; j < sum->n; j++) {
		const char *stat = report_rows_text(sum, j, 0), *g = report_rows_text(sum, j, 1);
		int nc = 0, sc = 2;

		cell[nc++] = g ? xasprintf("%s (%s)", stat, g) : xstrdup(stat);
		while (nc < lead)
			cell[nc++] = xstrdup("");
		for (int c = lead; c < r->ncol; c++, sc++) {
			char a[40];

			if (r->col[c].nosum)
				a[0] = '\0';
			else if (!strcmp(stat, report_sum_name[SUM_N]))
				snprintf(a, sizeof(a), "%zu", (size_t)report_rows_num(sum, j, sc));
			else
				format_num(o, report_rows_num(sum, j, sc), r->col[c].sig, dec[c], a, sizeof(a));
			cell[nc++] = xstrdup(a);
			if (o->fmt->reading && r->col[c].ci) {
				c += 2;        /* the interval columns are merged into the value's */
				sc += 2;
			}
		}
		if (marks && !o->fmt->reading) {
			/* no noise_ok: the cell after the others, and never past the heading */
			free(nc >= nh ? cell[nh - 1] : NULL);
			cell[nc >= nh ? nh - 1 : nc] = NULL;
			nc = nc >= nh ? nh - 1 : nc;
		}
		table_add(t, (const char *const *)cell);
		for (int i = 0; i < nc; i++)
			free(cell[i]);
	}
	free(cell);
}

/* Caption, table and footnote into f. */
static void print_table(const struct report_opts *o, const struct report_doc *d, const struct table *t,
			int marks, FILE *f)
{
	char n[40] = "", *meaning;

	if (d->caption && d->method && o->fmt->method)
		o->fmt->method(d->caption, f);
	if (d->caption && !d->method && o->fmt->heading)
		o->fmt->heading(d->caption, f);
	table_print(t, f, o->fmt);
	if (marks && o->fmt->footnote) {
		if (d->marked > 0)
			snprintf(n, sizeof(n), " (%ld result%s)", d->marked, d->marked == 1 ? "" : "s");
		meaning = xasprintf("holds results above their noise target%s", n);
		o->fmt->footnote(meaning, "; --strict leaves them out", f);
		free(meaning);
	}
}

void report_print_to(const struct report_opts *o, const struct report_doc *d, FILE *f)
{
	const struct report_rows *r = d->rows;
	const char **head = xcalloc((size_t)r->ncol + 2, sizeof(*head));
	int *dec = xcalloc((size_t)r->ncol + 1, sizeof(*dec));
	int marks = any_mark(r), nh = head_cells(o, r, marks, head);
	struct table t;

	for (int c = 0; c < r->ncol; c++)
		dec[c] = r->col[c].kind == RCOL_NUM ? column_decimals(o, r, c) : -1;
	table_init(&t, nh, head);
	for (size_t j = 0; j < r->n; j++)
		add_row(o, r, dec, j, marks, &t);
	if (d->summary)
		add_summary(o, r, dec, d->summary, nh, marks, &t);
	print_table(o, d, &t, marks, f);
	table_release(&t);
	free(head);
	free(dec);
}

int report_print(const struct report_opts *o, const struct report_doc *d)
{
	FILE *f;
	int ret;

	if ((ret = report_out_open(o, &f)))
		return ret;
	report_print_to(o, d, f);
	return report_out_close(o, f);
}
