/* report_figure.c: a report's table drawn as a figure through gnuplot: a row per table row, labelled by its
 * keys, its value as a point with the table's interval as a horizontal bar (--compare: the ratio and its
 * paired interval, a line at 1), and each --summary group's mean and t interval as a band (--limit). The
 * data file holds the numbers the table prints. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_print.h"

/* A figure of rows: the table, what is drawn of it, and where. */
struct fig {
	const struct report_plan *p;
	const struct report_doc *d;
	const struct report_rows *r;
	int val[64];           /* the columns drawn, one series each */
	int nval;
	int ci;                /* the series' columns are followed by their interval's bounds */
	int sum_col;           /* the first series' column among the summary's number columns */
	double xs;             /* seconds drawn in the unit that suits them, as sweep plot draws them (1 to 1e9) */
	const char *xunit;     /* the value axis's unit, or NULL */
};

/* A value axis of seconds in the unit that suits the largest value drawn (report_plot_seconds). */
static void fig_unit(struct fig *f)
{
	double max = 0;

	f->xs = 1;
	f->xunit = f->p->mode == REPORT_TABLE ? report_plot_unit(f->p->metric) : NULL;
	if (f->p->mode != REPORT_TABLE || strcmp(f->p->metric, "seconds"))
		return;
	for (int s = 0; s < f->nval; s++)
		for (size_t j = 0; j < f->r->n; j++)
			if (fabs(report_rows_num(f->r, j, f->val[s])) > max)
				max = fabs(report_rows_num(f->r, j, f->val[s]));
	f->xs = report_plot_seconds(max, &f->xunit);
}

/* The value of expr (a column's number, or an expression) in the axis's unit. */
static void xcol(const struct fig *f, const char *expr, struct strbuf *gp)
{
	if (f->xs == 1)
		sb_adds(gp, expr);
	else if (strspn(expr, "0123456789") == strlen(expr))
		sb_addf(gp, "($%s*%g)", expr, f->xs);
	else
		sb_addf(gp, "(%s*%g)", expr, f->xs);
}

/* What is drawn: the column with an interval (the ratio of --compare), else the last number column (the
 * share of --limit), else (a table) every number column that is not a count. */
static void fig_columns(struct fig *f)
{
	const struct report_rows *r = f->r;

	for (int c = 0; c < r->ncol && !f->nval; c++)
		if (r->col[c].kind == RCOL_NUM && r->col[c].ci) {
			f->val[f->nval++] = c;
			f->ci = 1;
		}
	if (!f->nval && f->p->mode == REPORT_LIMIT)
		f->val[f->nval++] = r->ncol - 1;
	for (int c = 0; c < r->ncol && !f->ci && f->p->mode != REPORT_LIMIT && f->nval < 64; c++)
		if (r->col[c].kind == RCOL_NUM && !r->col[c].nosum)
			f->val[f->nval++] = c;
}

/* Row j's label: its keys' values, as the table prints them for reading ("-" for unknown), a number in the
 * units sweep plot's axes use (64 KiB, 16.4k). Owned. */
static char *row_label(const struct report_ctx *ctx, const struct report_rows *r, size_t j)
{
	struct strbuf sb = STRBUF_INIT;

	sb_add(&sb, "", 0);
	for (int c = 0; c < r->ncol; c++) {
		const char *s = report_rows_text(r, j, c);
		char *q, *end, buf[48];
		double v = s ? strtod(s, &end) : 0;

		if ((r->col[c].kind != RCOL_KEY && r->col[c].kind != RCOL_LABEL) || c == r->group)
			continue;
		if (s && *s && !*end && isfinite(v)) {
			report_plot_label(v, report_plot_key_bytes(ctx, r->col[c].name), buf, sizeof(buf));
			s = buf;
		}
		q = s ? report_rows_quote(s) : xstrdup("-");
		sb_addf(&sb, "%s%s", sb.len ? " " : "", q);
		free(q);
	}
	if (!sb.len)
		sb_adds(&sb, "all results");     /* a table without keys: one row, named all the same */
	return sb_detach(&sb);
}

/* The keys of the rows, for the y axis's label. Owned. */
static char *keys_label(const struct report_rows *r)
{
	struct strbuf sb = STRBUF_INIT;

	sb_add(&sb, "", 0);
	for (int c = 0; c < r->ncol; c++)
		if ((r->col[c].kind == RCOL_KEY || r->col[c].kind == RCOL_LABEL) && c != r->group)
			sb_addf(&sb, "%s%s", sb.len ? ", " : "", r->col[c].name);
	return sb_detach(&sb);
}

/* The data of the rows: a block per series, a row a line (y, label, value and, with an interval, its
 * bounds), the numbers as the table prints them for programs. */
static void fig_rows(const struct fig *f, struct strbuf *dat)
{
	const struct report_rows *r = f->r;

	for (int s = 0; s < f->nval; s++) {
		int c = f->val[s];

		sb_addf(dat, "%s# %s\n", s ? "\n\n" : "", r->col[c].name);
		for (size_t j = 0; j < r->n; j++) {
			char *label = row_label(f->p->c, r, j);

			sb_addf(dat, "%zu\t", r->n - 1 - j);
			table_add_safe(dat, label);
			for (int k = 0; k < (f->ci ? 3 : 1); k++) {
				sb_adds(dat, "\t");
				report_plot_num(f->p->out.digits, report_rows_num(r, j, c + k), r->col[c].sig, dat);
			}
			sb_adds(dat, "\n");
			free(label);
		}
	}
}

/* The summary's value of statistic stat for group g (NULL: all rows) in the first series' column. */
static double sum_value(const struct fig *f, const char *g, enum report_sum stat)
{
	const struct report_rows *s = f->d->summary;
	int sc = 2 + f->sum_col;

	for (size_t j = 0; j < s->n; j++) {
		const char *sg = report_rows_text(s, j, 1);

		if (!strcmp(report_rows_text(s, j, 0), report_sum_name[stat]) &&
		    ((!g && !sg) || (g && sg && !strcmp(g, sg))))
			return report_rows_num(s, j, sc);
	}
	return NAN;
}

/* The bands of the --summary groups (the rows come ordered by group): a line each, the rows' extent in y,
 * the group, its mean and the bounds of its t interval, as the summary prints them. Returns how many. */
static int fig_bands(const struct fig *f, struct strbuf *dat)
{
	const struct report_rows *r = f->r;
	int c = f->val[0], n = 0;

	if (!f->d->summary || f->ci)
		return 0;
	sb_adds(dat, "\n\n# y from\ty to\tgroup\tmean\tci95 lo\tci95 hi\n");
	for (size_t j = 0, e; j < r->n; j = e) {
		const char *g = r->group >= 0 ? report_rows_text(r, j, r->group) : NULL;

		for (e = j + 1; e < r->n && r->group >= 0; e++) {
			const char *ge = report_rows_text(r, e, r->group);

			if (!g || !ge || strcmp(g, ge))
				break;
		}
		if (r->group >= 0 && !g)
			continue;      /* a row of an unknown group is in no summary */
		if (r->group < 0)
			e = r->n;
		sb_addf(dat, "%g\t%g\t", (double)(r->n - e) - 0.4, (double)(r->n - 1 - j) + 0.4);
		table_add_safe(dat, g ? g : "all");
		for (enum report_sum k = SUM_MEAN; k <= SUM_HI; k++) {
			sb_adds(dat, "\t");
			report_plot_num(f->p->out.digits, sum_value(f, g, k), f->r->col[c].sig, dat);
		}
		sb_adds(dat, "\n");
		n++;
	}
	return n;
}

/* The label of the value axis. Owned. */
static char *value_label(const struct fig *f)
{
	const struct report_plan *p = f->p;
	const char *pooled = p->pooled;
	char *s;

	if (p->mode == REPORT_COMPARE)
		s = xasprintf("%s %s/%s, %s over paired units", p->metric, p->arms.a, p->arms.b,
			      !strcmp(p->stat, "geomean") ? "geometric mean of the ratios" : "ratio of means");
	else if (p->mode == REPORT_LIMIT)
		s = xasprintf("share of the limit: %s / limit, %s over passes%s", p->metric, p->stat, pooled);
	else if (f->xunit)
		s = xasprintf("%s (%s), %s over passes%s", p->metric, f->xunit, p->stat, pooled);
	else
		s = xasprintf("%s, %s over passes%s", p->metric, p->stat, pooled);
	return s;
}

/* The value axis's range: every value, bound and band drawn, and 1 for a ratio, with a margin. */
static void value_range(const struct fig *f, struct strbuf *gp)
{
	const struct report_rows *r = f->r;
	double min = f->p->mode == REPORT_COMPARE ? 1 : INFINITY, max = -min, v;

	for (int s = 0; s < f->nval; s++)
		for (size_t j = 0; j < r->n; j++)
			for (int k = 0; k < (f->ci ? 3 : 1); k++)
				if (isfinite(v = report_rows_num(r, j, f->val[s] + k))) {
					min = v < min ? v : min;
					max = v > max ? v : max;
				}
	for (enum report_sum k = SUM_MEAN; f->d->summary && k <= SUM_HI; k++)
		for (size_t j = 0; j < f->d->summary->n; j++)
			if (!strcmp(report_rows_text(f->d->summary, j, 0), report_sum_name[k]) &&
			    isfinite(v = report_rows_num(f->d->summary, j, 2 + f->sum_col))) {
			min = v < min ? v : min;
			max = v > max ? v : max;
		}
	min *= f->xs;
	max *= f->xs;
	/* a throughput or a share is read against zero: its axis starts there; --logy: a log axis */
	if (f->p->look.logy && min > 0)
		sb_addf(gp, "set logscale x\nset xrange [%.17g:%.17g]\n", min / 1.1, max * 1.25);
	else if (f->p->mode != REPORT_COMPARE && min >= 0 && max > 0)
		sb_addf(gp, "set xrange [0:%.17g]\n", max * 1.12);
	else if (min <= max)
		sb_addf(gp, "set xrange [%.17g:%.17g]\n", min - (max - min) * 0.05 - (min == max),
			max + (max - min) * 0.12 + (min == max));
}

/* The marks of row j (MARK_IMPRECISE, MARK_CAVEAT), over its columns. */
static unsigned row_marks(const struct report_rows *r, size_t j)
{
	unsigned m = 0;

	for (int c = 0; c < r->ncol; c++)
		m |= r->mark[j * (size_t)r->ncol + (size_t)c];
	return m;
}

/* The table's footnote for the marks in m (one of them), as the legend's entry of the marker drawn around
 * the rows that carry it. Owned. */
static char *mark_text(const struct fig *f, unsigned m)
{
	if (m & MARK_CAVEAT)
		return xasprintf(TABLE_MARK2 " %s (see the warnings)", f->d->caveat ? f->d->caveat : "to read with care");
	return xstrdup(TABLE_MARK " holds medians not known to the precision asked");
}

/* The marks some row carries. */
static unsigned fig_marks(const struct fig *f)
{
	unsigned m = 0;

	for (size_t j = 0; j < f->r->n; j++)
		m |= row_marks(f->r, j);
	return m & (MARK_CAVEAT | MARK_IMPRECISE);
}

/* The entries of the legend, in the order of the plot command. Each owned, NULL-terminated. */
static char **fig_entries(const struct fig *f, int nbands)
{
	char **e = xcalloc((size_t)f->nval * 2 + 6, sizeof(*e));
	unsigned m = fig_marks(f);
	int n = 0;

	if (nbands) {
		e[n++] = xasprintf("95%% t interval of the mean over %s%s", f->p->unit ? f->p->unit : "the rows",
				   f->r->group >= 0 ? ", per group" : "");
		e[n++] = xstrdup("mean");
	}
	for (int s = 0; s < f->nval; s++) {
		e[n++] = xstrdup(f->r->ci_head && f->ci ? f->r->ci_head : f->r->col[f->val[s]].name);
		if (f->ci)
			e[n++] = xasprintf("%g%% paired %s bootstrap interval, %d resamples, seed %llu",
					   f->p->boot.ci * 100, f->p->boot.interval == STATS_BCA ? "BCa" : "percentile",
					   f->p->boot.resamples, (unsigned long long)f->p->boot.seed);
	}
	if (m & MARK_IMPRECISE)
		e[n++] = mark_text(f, MARK_IMPRECISE);
	if (m & MARK_CAVEAT)
		e[n++] = mark_text(f, MARK_CAVEAT);
	return e;
}

/* The legend of those entries, under the figure. */
static void fig_key(char **e, const char *out, struct report_plot_key *k)
{
	*k = (struct report_plot_key){ .em = report_plot_em(out), .lines_each = 1, .cols = 1, .rows = 1 };
	for (; *e; e++)
		report_plot_key_add(k, *e);
}

/* The rows' labels on the y axis, from the top down, with the table's marks. */
static void fig_rows_axis(const struct fig *f, struct strbuf *gp)
{
	const struct report_rows *r = f->r;

	sb_addf(gp, "set yrange [-0.6:%g]\nset ytics (", (double)r->n - 0.4);
	for (size_t j = 0; j < r->n; j++) {
		unsigned m = row_marks(r, j);
		char *label = row_label(f->p->c, r, j), *marked;

		sb_adds(gp, j ? ", " : "");
		/* the table's marks on the row's label: a value to read with care is drawn as one */
		marked = xasprintf("%s%s%s", label, m & MARK_IMPRECISE ? " " TABLE_MARK : "",
				   m & MARK_CAVEAT ? " " TABLE_MARK2 : "");
		report_plot_str(gp, marked);
		sb_addf(gp, " %zu", r->n - 1 - j);
		free(label);
		free(marked);
	}
	sb_adds(gp, ")\n");
}

/* "using X:Y" of the rows that carry mark m: the others' y is NaN, so only theirs are drawn. */
static void using_marked(const struct fig *f, unsigned m, struct strbuf *gp)
{
	int first = 1;

	sb_adds(gp, "using ");
	xcol(f, "3", gp);
	sb_adds(gp, ":((");
	for (size_t j = 0; j < f->r->n; j++)
		if (row_marks(f->r, j) & m) {
			sb_addf(gp, "%s$1 == %zu", first ? "" : " || ", f->r->n - 1 - j);
			first = 0;
		}
	sb_adds(gp, ") ? $1 : NaN)");
}

/* The plot command: the bands, each series' points (and intervals), a marker around the marked rows. */
static void fig_plot(const struct fig *f, const char *datpath, int nbands, char **e, struct strbuf *gp)
{
	unsigned m = fig_marks(f);

	sb_adds(gp, "plot");
	if (nbands) {
		/* the band of each group: its t interval shaded, its mean a line, its name at the right */
		sb_adds(gp, " ");
		report_plot_str(gp, datpath);
		sb_addf(gp, " index %d using ", f->nval);
		xcol(f, "(($5+$6)/2)", gp);
		sb_adds(gp, ":(($1+$2)/2):");
		xcol(f, "5", gp);
		sb_adds(gp, ":");
		xcol(f, "6", gp);
		sb_adds(gp, ":1:2 with boxxyerror fs transparent solid 0.2 noborder lc rgb '#4477aa' title ");
		report_plot_wrap(gp, *e++, PLOT_WRAP);
		sb_adds(gp, ", ");
		report_plot_str(gp, datpath);
		sb_addf(gp, " index %d using ", f->nval);
		xcol(f, "4", gp);
		sb_adds(gp, ":1:(0):($2-$1) with vectors nohead lw 2 lc rgb '#4477aa' title ");
		report_plot_wrap(gp, *e++, PLOT_WRAP);
		sb_adds(gp, ", ");
		report_plot_str(gp, datpath);
		sb_addf(gp, " index %d using ", f->nval);
		xcol(f, "6", gp);
		sb_adds(gp, ":(($1+$2)/2):3 with labels left offset 1,0 notitle,");
	}
	for (int s = 0; s < f->nval; s++) {
		sb_adds(gp, s ? ", " : " ");
		report_plot_str(gp, datpath);
		sb_addf(gp, " index %d using ", s);
		xcol(f, "3", gp);
		sb_addf(gp, ":1 with points pt 7 ps 1.5 lt %d title ", s + 1);
		report_plot_wrap(gp, *e++, PLOT_WRAP);
		if (f->ci) {
			sb_adds(gp, ", ");
			report_plot_str(gp, datpath);
			sb_addf(gp, " index %d using ", s);
			xcol(f, "3", gp);
			sb_adds(gp, ":1:");
			xcol(f, "4", gp);
			sb_adds(gp, ":");
			xcol(f, "5", gp);
			sb_addf(gp, " with xerrorbars pt 0 lw 1.5 lt %d title ", s + 1);
			report_plot_wrap(gp, *e++, PLOT_WRAP);
		}
	}
	/* a marked value is drawn so: a black ring (†) or square (‡) around its point, named as the footnote */
	for (unsigned k = MARK_IMPRECISE; k; k = k == MARK_IMPRECISE ? MARK_CAVEAT : 0) {
		if (!(m & k))
			continue;
		sb_adds(gp, ", ");
		report_plot_str(gp, datpath);
		sb_adds(gp, " index 0 ");
		using_marked(f, k, gp);
		sb_addf(gp, " with points pt %d ps 2.6 lw 1.5 lc rgb 'black' title ", k == MARK_IMPRECISE ? 6 : 4);
		report_plot_wrap(gp, *e++, PLOT_WRAP);
	}
	sb_adds(gp, "\n");
}

/* The script: rows from the top down, labelled on the y axis; bands under the points; a line at 1 for a
 * ratio; the title on top, the legend under the figure. */
static void fig_script(const struct fig *f, const char *out, const char *datpath, int nbands, struct strbuf *gp)
{
	const struct report_rows *r = f->r;
	char **e = fig_entries(f, nbands), *label;
	struct report_plot_key k;
	double h;

	fig_key(e, out, &k);
	h = (100.0 + 24.0 * (double)r->n + PLOT_LINE_EM * 11 * report_plot_key_lines(&k)) / 560;
	sb_addf(gp, "# sweep figure: %s\n", f->p->mode == REPORT_COMPARE ? "comparison" : f->p->mode ==
		REPORT_LIMIT ? "shares of a limit" : "table");
	if (f->d->caption) {
		sb_adds(gp, "# ");
		table_add_safe(gp, f->d->caption);
		sb_adds(gp, "\n");
	}
	report_plot_terminal(gp, out, 1, h < 1 ? 1 : h);
	sb_adds(gp, "set grid xtics\n");
	report_plot_key(gp, &k);
	fig_rows_axis(f, gp);
	sb_adds(gp, "set title ");
	report_plot_str(gp, f->p->look.title ? f->p->look.title : f->p->c->sweep);
	sb_adds(gp, "\nset ylabel ");
	label = keys_label(r);
	report_plot_str(gp, f->p->look.ylabel ? f->p->look.ylabel : label);
	free(label);
	sb_adds(gp, "\nset xlabel ");
	label = value_label(f);
	report_plot_str(gp, f->p->look.xlabel ? f->p->look.xlabel : label);
	free(label);
	sb_adds(gp, "\n");
	value_range(f, gp);
	if (f->p->mode == REPORT_COMPARE)
		sb_adds(gp, "set arrow from 1, graph 0 to 1, graph 1 nohead dt 2 lw 1.5 lc rgb 'black'\n");
	fig_plot(f, datpath, nbands, e, gp);
	for (char **p = e; *p; p++)
		free(*p);
	free(e);
}

/* Whether some row has a value to draw: gnuplot refuses a plot with none. */
static int fig_drawable(const struct fig *f)
{
	for (int s = 0; s < f->nval; s++)
		for (size_t j = 0; j < f->r->n; j++)
			if (isfinite(report_rows_num(f->r, j, f->val[s])))
				return 1;
	return 0;
}

/* ---- the drift of control cells (--drift) ---- */

/* A worker's row of the drift table: "host, run R, worker W[, gpu G]". Owned. */
static char *drift_label(const struct report_rows *r, size_t j)
{
	const char *gpu = report_rows_text(r, j, 3);

	gpu = gpu && strcmp(gpu, "-") ? gpu : NULL;       /* a worker without a GPU */
	return xasprintf("%s, run %s, worker %s%s%s", report_rows_text(r, j, 0), report_rows_text(r, j, 1),
			 report_rows_text(r, j, 2), gpu ? ", gpu " : "", gpu ? gpu : "");
}

/* The data of a drift figure: a block per worker, a point a line: its place among the control's points
 * (1 the first run, the last its last) and the ratio as the table prints it. */
static void drift_data(const struct fig *f, struct strbuf *dat)
{
	for (size_t j = 0; j < f->r->n; j++) {
		size_t n;
		double *ratio = report_rows_series(f->r, j, 6, &n);
		char *label = drift_label(f->r, j);

		sb_adds(dat, j ? "\n\n# " : "# ");
		table_add_safe(dat, label);
		sb_adds(dat, "\n");
		for (size_t k = 0; k < n; k++) {
			sb_addf(dat, "%zu\t", k + 1);
			report_plot_num(f->p->out.digits, ratio[k], 4, dat);
			sb_adds(dat, "\n");
		}
		free(ratio);
		free(label);
	}
}

/* The head of a figure on x and y axes (drift, score): the legend of entries e under it, the figure as
 * tall as the plot (430 pixels of 560) and the legend need, a grid and the title. */
static void xy_head(const struct fig *f, char **e, const char *out, const char *what, struct strbuf *gp)
{
	struct report_plot_key k;
	double h;

	fig_key(e, out, &k);
	h = (430.0 + PLOT_LINE_EM * 11 * report_plot_key_lines(&k)) / 560;
	sb_addf(gp, "# sweep figure: %s\n", what);
	report_plot_terminal(gp, out, 1, h < 1 ? 1 : h);
	sb_adds(gp, "set grid\n");
	report_plot_key(gp, &k);
	sb_adds(gp, "set title ");
	report_plot_str(gp, f->p->look.title ? f->p->look.title : f->p->c->sweep);
}

/* The drift figure: each worker's control ratio over its runs, a line each, over the band within which a
 * host is stable (1 +- the threshold), and the legend naming the unstable. */
static void drift_script(const struct fig *f, const char *out, const char *datpath, struct strbuf *gp)
{
	double t = f->p->threshold;
	char **e = xcalloc(f->r->n + 2, sizeof(*e));

	for (size_t j = 0; j < f->r->n; j++) {
		char *label = drift_label(f->r, j);

		e[j] = xasprintf("%s: %s", label, report_rows_text(f->r, j, 9));
		free(label);
	}
	e[f->r->n] = xasprintf("stable: within %g%% of 1", t * 100);
	xy_head(f, e, out, "drift of the control cells", gp);
	sb_adds(gp, "\nset xlabel 'the control''s runs, first to last'\n"
		"set ylabel 'median time / median of its runs'\nset xtics 1\nset offsets 0.2, 0.2, 0, 0\n");
	sb_addf(gp, "set yrange [*<%.17g:%.17g<*]\n", 1 - 1.5 * t, 1 + 1.5 * t);
	sb_addf(gp, "set object 1 rect from graph 0, first %.17g to graph 1, first %.17g behind fc rgb '#4477aa' "
		"fs transparent solid 0.15 noborder\n", 1 - t, 1 + t);
	sb_adds(gp, "set arrow from graph 0, first 1 to graph 1, first 1 nohead dt 2 lc rgb 'black'\nplot");
	for (size_t j = 0; j < f->r->n; j++) {
		sb_adds(gp, j ? ", " : " ");
		report_plot_str(gp, datpath);
		sb_addf(gp, " index %zu using 1:2 with linespoints pt 7 ps 1.2 lw 2 lt %zu title ", j, j + 1);
		report_plot_wrap(gp, e[j], PLOT_WRAP);
	}
	sb_adds(gp, ", keyentry with boxes fs transparent solid 0.15 noborder lc rgb '#4477aa' title ");
	report_plot_wrap(gp, e[f->r->n], PLOT_WRAP);
	sb_adds(gp, "\n");
	for (size_t j = 0; j <= f->r->n; j++)
		free(e[j]);
	free(e);
}

/* ---- predictions against their measures (--score) ---- */

/* The data of a score figure: a block per metric and kind (blind, late), a prediction a line: predicted,
 * measured. Returns the largest value. */
static double score_data(const struct fig *f, const struct report_rows *r, struct strbuf *dat)
{
	double most = 0;

	for (size_t j = 0; j < r->n; j++) {
		if (!j || strcmp(report_rows_text(r, j, 0), report_rows_text(r, j - 1, 0)) ||
		    report_rows_num(r, j, 1) != report_rows_num(r, j - 1, 1)) {
			sb_adds(dat, j ? "\n\n# " : "# ");
			table_add_safe(dat, report_rows_text(r, j, 0));
			sb_adds(dat, report_rows_num(r, j, 1) == 1 ? " blind\n" : " late\n");
		}
		for (int c = 2; c < 4; c++) {
			report_plot_num(f->p->out.digits, report_rows_num(r, j, c), 6, dat);
			sb_adds(dat, c == 2 ? "\t" : "\n");
			most = report_rows_num(r, j, c) > most ? report_rows_num(r, j, c) : most;
		}
	}
	return most;
}

/* The legend's entries of a score figure, in the order of the plot command. Each owned, NULL-terminated. */
static char **score_entries(const struct fig *f, const struct report_rows *r)
{
	char **e = xcalloc(r->n + 3, sizeof(*e));
	int n = 0;

	if (!isnan(f->p->bar))
		e[n++] = xasprintf("within the bar: %g%% of the prediction (the table holds the rms error to it)",
				   f->p->bar);
	e[n++] = xstrdup("measured = predicted");
	for (size_t j = 0; j < r->n; j++)
		if (!j || strcmp(report_rows_text(r, j, 0), report_rows_text(r, j - 1, 0)) ||
		    report_rows_num(r, j, 1) != report_rows_num(r, j - 1, 1))
			e[n++] = xasprintf("%s, %s predictions", report_rows_text(r, j, 0),
					   report_rows_num(r, j, 1) == 1 ? "blind" : "late");
	return e;
}

/* The score figure: each prediction (x) against its measure (y), a colour per metric and kind, over the
 * line where they agree and the band of the bar around it. */
static void score_script(const struct fig *f, const struct report_rows *r, const char *out, const char *datpath,
			 double most, struct strbuf *gp)
{
	char **e = score_entries(f, r), **p = e;
	double top = most > 0 ? most * 1.1 : 1;
	int lt = 1;

	xy_head(f, e, out, "predictions against their measures", gp);
	sb_addf(gp, "\nset xlabel 'predicted'\nset ylabel 'measured'\nset xrange [0:%.17g]\nset yrange [0:%.17g]\n"
		"set samples 2\nplot", top, top);
	if (!isnan(f->p->bar)) {
		sb_addf(gp, " '+' using 1:($1*%.17g):($1*%.17g) with filledcurves fc rgb '#4477aa' "
			"fs transparent solid 0.15 noborder title ", 1 - f->p->bar / 100, 1 + f->p->bar / 100);
		report_plot_wrap(gp, *p++, PLOT_WRAP);
		sb_adds(gp, ",");
	}
	sb_adds(gp, " x with lines dt 2 lc rgb 'black' title ");
	report_plot_wrap(gp, *p++, PLOT_WRAP);
	for (int b = 0; *p; b++, p++) {
		sb_adds(gp, ", ");
		report_plot_str(gp, datpath);
		sb_addf(gp, " index %d using 1:2 with points pt 7 ps 1.5 lt %d title ", b, lt++);
		report_plot_wrap(gp, *p, PLOT_WRAP);
	}
	sb_adds(gp, "\n");
	for (p = e; *p; p++)
		free(*p);
	free(e);
}

int report_figure_print(const struct report_plan *p, const struct report_doc *d, const char *out, int say)
{
	struct fig f = { p, d, d->rows, { 0 }, 0, 0, 0, 1, NULL };
	struct strbuf gp = STRBUF_INIT, dat = STRBUF_INIT;
	char *datpath = report_plot_beside(out, ".dat");
	int nbands, ret;

	if (p->mode == REPORT_DRIFT) {
		drift_data(&f, &dat);
		drift_script(&f, out, datpath, &gp);
		goto render;
	}
	if (p->mode == REPORT_SCORE) {
		/* each prediction with its measure, which the table's groups sum up */
		if (!d->pairs || !d->pairs->n) {
			free(datpath);
			return 2;
		}
		score_script(&f, d->pairs, out, datpath, score_data(&f, d->pairs, &dat), &gp);
		goto render;
	}
	fig_columns(&f);
	if (!fig_drawable(&f)) {
		free(datpath);
		return 2;
	}
	for (int k = 0; k < f.val[0]; k++)
		f.sum_col += f.r->col[k].kind == RCOL_NUM;
	fig_unit(&f);
	fig_rows(&f, &dat);
	nbands = fig_bands(&f, &dat);
	fig_script(&f, out, datpath, nbands, &gp);
render:
	ret = report_plot_render(p->c->db, out, dat.buf, gp.buf, say);
	free(datpath);
	sb_release(&gp);
	sb_release(&dat);
	return ret;
}
