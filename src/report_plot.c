/* report_plot.c: a metric against a parameter, as data and a gnuplot script, rendered by gnuplot; and what
 * every figure's script shares (report_figure.c's too): quoted text, the terminal, numbers as the tables
 * print them, the legend, rendering (the axes: report_axis.c). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "../kernels/kernel.h"
#include "report_print.h"
#include "spawn.h"

/* Units of the metrics and parameters sweep knows, for axis labels. */
static const char *const plot_units[][2] = {
	{ "seconds", "s" }, { "ms", "ms" }, { "us", "µs" }, { "gflops", "GFLOP/s" }, { "tflops", "TFLOP/s" },
	{ "gbs", "GB/s" }, { "tbs", "TB/s" }, { "tok_s", "tokens/s" }, { "bytes", "B" }, { "wall", "s" },
	{ "busbw", "GB/s" }, { "algbw", "GB/s" },
};

const char *report_plot_unit(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(plot_units); i++)
		if (!strcmp(name, plot_units[i][0]))
			return plot_units[i][1];
	return NULL;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* ---- what every figure shares ---- */

void report_plot_str(struct strbuf *sb, const char *s)
{
	struct strbuf safe = STRBUF_INIT;

	sb_add(&safe, "", 0);
	table_add_safe(&safe, s);
	sb_addc(sb, '\'');
	for (const char *p = safe.buf; *p; p++) {
		if (*p == '\'')
			sb_addc(sb, '\'');
		sb_addc(sb, *p);
	}
	sb_addc(sb, '\'');
	sb_release(&safe);
}

int report_plot_wrap(struct strbuf *sb, const char *s, size_t width)
{
	struct strbuf line = STRBUF_INIT;
	size_t col = 0;
	int lines = 1;

	/* each line a single-quoted string (report_plot_str's safety), joined by a newline in double quotes,
	 * which hold nothing else: no text of ours is ever in a string gnuplot expands */
	sb_add(&line, "", 0);
	for (const char *p = s; *p;) {
		size_t n = strcspn(p, " ");
		char *word = xstrndup(p, n);
		size_t w = report_plot_chars(word);

		if (col && col + 1 + w > width) {
			report_plot_str(sb, line.buf);
			sb_adds(sb, ".\"\\n\".");
			sb_reset(&line);
			col = 0;
			lines++;
		} else if (col) {
			sb_addc(&line, ' ');
			col++;
		}
		sb_adds(&line, word);
		col += w;
		free(word);
		p += n;
		p += *p == ' ';
	}
	report_plot_str(sb, line.buf);
	sb_release(&line);
	return lines;
}

void report_plot_key_add(struct report_plot_key *k, const char *title)
{
	struct strbuf sb = STRBUF_INIT;
	int lines = report_plot_wrap(&sb, title, PLOT_WRAP);
	size_t w = report_plot_chars(title);

	w = w > PLOT_WRAP ? PLOT_WRAP : w;
	k->nentry++;
	k->widest = w > k->widest ? w : k->widest;
	k->lines_each = lines > k->lines_each ? lines : k->lines_each;
	sb_release(&sb);
}

/* The columns of a legend: as many entries as fit in 85 % of the panel's width, each its text, a sample two
 * characters long and the gaps around them. */
static size_t key_cols(const struct report_plot_key *k)
{
	size_t cols = (size_t)(k->em * 0.85 / PLOT_CHAR_W) / (k->widest + 6);

	return cols < 1 ? 1 : cols > k->nentry ? k->nentry : cols;
}

int report_plot_key_lines(const struct report_plot_key *k)
{
	size_t cols = key_cols(k);

	return k->nentry ? (int)((k->nentry + cols - 1) / cols) * k->lines_each : 0;
}

void report_plot_key(struct strbuf *gp, const struct report_plot_key *k)
{
	int lines = report_plot_key_lines(k);

	if (!k->nentry) {
		sb_adds(gp, "unset key\n");
		sb_addf(gp, "set bmargin %d\n", 4 + k->extra + k->below);
		return;
	}
	/* under the x axis's label, centred on the panel, in the columns that fit; the bottom margin holds it */
	sb_addf(gp, "set key at screen %.4g, ", (k->col + 0.5) / k->cols);
	if (k->rows > 1)
		sb_addf(gp, "screen %.4g", (k->rows - 1 - k->row + 0.01) / k->rows);
	else
		sb_addf(gp, "character %g", k->below + 0.4);
	sb_adds(gp, " center bottom horizontal Left reverse box samplen 2");
	if (k->lines_each > 1)
		sb_addf(gp, " spacing %d", k->lines_each);   /* a row of the legend holds its longest entry's lines */
	sb_addf(gp, " maxcols %zu maxrows %d\n", key_cols(k), lines);
	sb_addf(gp, "set bmargin %d\n", 5 + k->extra + lines + k->below);
}

double report_plot_em(const char *out)
{
	return !strcmp(strrchr(out, '.'), ".pdf") ? 7.5 * 72 / 10 : 900.0 / 11;
}

double report_plot_seconds(double max, const char **unit)
{
	static const struct {
		double below, scale;
		const char *unit;
	} units[] = { { 1e-6, 1e9, "ns" }, { 1e-3, 1e6, "µs" }, { 1, 1e3, "ms" } };

	for (size_t i = 0; i < ARRAY_SIZE(units); i++)
		if (max > 0 && max < units[i].below) {
			*unit = units[i].unit;
			return units[i].scale;
		}
	return 1;
}

void report_plot_num(int digits, double v, int sig, struct strbuf *sb)
{
	char buf[64];

	report_print_num(&table_csv, digits, v, sig, buf, sizeof(buf));
	sb_adds(sb, buf);
}

void report_plot_terminal(struct strbuf *gp, const char *out, double w, double h)
{
	const char *ext = strrchr(out, '.') + 1;

	if (!strcmp(ext, "png"))
		sb_addf(gp, "set terminal pngcairo noenhanced size %d,%d font 'Sans,11'\n", (int)(900 * w),
			(int)(560 * h));
	else if (!strcmp(ext, "svg"))
		sb_addf(gp, "set terminal svg noenhanced size %d,%d dynamic font 'Sans,11'\n", (int)(900 * w),
			(int)(560 * h));
	else
		sb_addf(gp, "set terminal pdfcairo noenhanced size %gin,%gin font 'Sans,10'\n", 7.5 * w, 4.6 * h);
	sb_adds(gp, "set output ");
	report_plot_str(gp, out);
	sb_adds(gp, "\nset datafile separator '\\t'\n");
}

char *report_plot_beside(const char *out, const char *ext)
{
	const char *dot = strrchr(out, '.');

	return xasprintf("%.*s%s", (int)(dot ? dot - out : (long)strlen(out)), out, ext);
}

/* text into path (named what), whole or not at all (store_out_open), never over db or its side files. */
static int write_file(const char *what, const char *path, const char *text, const char *db)
{
	const char *dbs[] = { db, NULL };
	struct store_out w;

	if (store_out_open(&w, what, path, dbs, 0))
		return -1;
	fputs(text, w.f);
	return store_out_close(&w);
}

/* Run gnuplot on the script text (kept as the file script, named in its message). 1 when gnuplot is not
 * installed, -1 when it failed. */
static int run_gnuplot(const char *script, const char *text)
{
	char *argv[] = { "gnuplot", "-", NULL };
	/* The script on its stdin; gnuplot talks to the user on our stdout and stderr, in our process group
	 * (Ctrl-C stops it too). */
	struct spawn_opts o = {
		.argv = argv,
		.in = SPAWN_CAPTURE,
		.in_data = text,
		.in_len = strlen(text),
		.out = { .to = SPAWN_INHERIT },
		.err = { .to = SPAWN_INHERIT },
		.same_group = 1,
	};
	struct spawn_result res;
	int ret = 0;

	if (spawn_run(&o, &res))
		ret = res.exec_errno == ENOENT ? 1 : error("cannot run gnuplot: %s", strerror(res.exec_errno));
	else if (!WIFEXITED(res.status) || WEXITSTATUS(res.status))
		ret = error("gnuplot failed on '%s'", script);
	spawn_result_release(&res);
	return ret;
}

/* The picture, written whole into out (store_out_open) by gnuplot: the script it runs names the temporary
 * file where the one kept (gppath) names out. As run_gnuplot. */
static int render(const char *db, const char *out, const char *gppath, const char *gp)
{
	const char *dbs[] = { db, NULL }, *at;
	struct strbuf from = STRBUF_INIT, to = STRBUF_INIT, run = STRBUF_INIT;
	struct store_out w;
	int rc;

	if (store_out_open(&w, "--out", out, dbs, 0))
		return -1;
	fclose(w.f);
	w.f = NULL;
	sb_adds(&from, "set output ");
	report_plot_str(&from, out);
	sb_adds(&to, "set output ");
	report_plot_str(&to, w.tmp);
	if (!(at = strstr(gp, from.buf)))
		BUG("render: the script does not set its output to '%s'", out);
	sb_add(&run, gp, (size_t)(at - gp));
	sb_addf(&run, "%s%s", to.buf, at + from.len);
	rc = run_gnuplot(gppath, run.buf);
	if (!rc && store_out_close(&w))
		rc = -1;
	store_out_abort(&w);
	sb_release(&from);
	sb_release(&to);
	sb_release(&run);
	return rc;
}

int report_plot_render(const char *db, const char *out, const char *dat, const char *gp, int say)
{
	char *datpath = report_plot_beside(out, ".dat"), *gppath = report_plot_beside(out, ".gp");
	int rc = -1;

	if (report_out_check("--out", out, db) || report_out_check("the plot's data", datpath, db) ||
	    report_out_check("the plot's script", gppath, db))
		rc = FAIL_UNSAFE;
	else if (!write_file("the plot's data", datpath, dat, db) &&
		 !write_file("the plot's script", gppath, gp, db) &&
		 (rc = render(db, out, gppath, gp)) >= 0 && say) {
		if (rc > 0)
			printf("gnuplot is not installed: wrote %s and %s; render them with: gnuplot %s\n"
			       "(Debian: apt-get install gnuplot-nox)\n", datpath, gppath, gppath);
		else
			printf("wrote %s (data %s, script %s)\n", out, datpath, gppath);
	}
	free(datpath);
	free(gppath);
	return rc == -1 ? FAIL_IO : rc;
}

/* ---- a metric against a key ---- */

/* The points of a plot (report_agg_points' rows: facet, series, x, y, n, lo, hi) and what the script
 * needs. */
struct plot {
	const struct report_plan *p;
	const struct report_rows *pt;
	int x_text;            /* some x is not a number: categories in order of first appearance */
	size_t nfacet;
	int cols, rows;        /* panels */
	double yscale;         /* seconds drawn in the unit that suits them */
	const char *yunit;
	int bars;              /* some point has an interval to draw (its low below its high) */
	double em;             /* a panel's width in font sizes */
	int xturn;             /* the lines the x axis's category labels take turned (0: flat) */
};

/* Point i's facet and series: NULL when the plot has none, "-" for an unknown value. */
static const char *facet_of(const struct plot *pl, size_t i)
{
	const char *s = report_rows_text(pl->pt, i, 0);

	return !pl->p->look.facet ? NULL : s ? s : "-";
}

static const char *series_of(const struct plot *pl, size_t i)
{
	const char *s = report_rows_text(pl->pt, i, 1);

	return !pl->p->look.series ? NULL : s ? s : "-";
}

static double x_of(const struct plot *pl, size_t i)
{
	return report_rows_num(pl->pt, i, 2);
}

static int all_pow2(const struct plot *pl)
{
	for (size_t i = 0; i < pl->pt->n; i++) {
		double m = frexp(x_of(pl, i), &(int){ 0 });

		if (x_of(pl, i) <= 0 || m != 0.5)
			return 0;
	}
	return 1;
}

/* Whether the key holds sizes in bytes: a parameter the sweep's kernel declares as a size, or one a
 * command sweep calls bytes (or NAME_bytes). */
int report_plot_key_bytes(const struct report_ctx *c, const char *key)
{
	const struct kernel_ops *k = c->kernel ? kernel_find(c->kernel) : NULL;
	size_t n = strlen(key);

	if (!strncmp(key, "param.", 6))
		key += 6;
	for (const struct param_def *d = k ? k->params : NULL; d && d->name; d++)
		if (!strcmp(d->name, key))
			return d->type == PARAM_BYTES;
	return !strcmp(key, "bytes") || (n > 6 && !strcmp(key + n - 6, "_bytes"));
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The x axis: its ticks on the grid's values, sizes in binary prefixes, counts in SI. */
static void x_ticks(const struct plot *pl, struct strbuf *gp)
{
	double *grid = xmalloc((pl->pt->n + 1) * sizeof(*grid));
	size_t n = 0;

	for (size_t i = 0; i < pl->pt->n; i++)
		grid[n++] = x_of(pl, i);
	qsort(grid, n, sizeof(*grid), cmp_double);
	for (size_t i = 1, k = 1; i <= n; i++)
		if (i == n)
			n = k;
		else if (grid[i] != grid[k - 1])
			grid[k++] = grid[i];
	report_plot_ticks(gp, "x", grid, n, report_plot_key_bytes(pl->p->c, pl->p->look.x), pl->p->look.logx,
			  pl->em * 0.8);
	free(grid);
}

/* What the bars on the points are, for the legend. Owned. */
static char *bars_text(const struct plot *pl)
{
	const struct report_plan *p = pl->p;

	if (p->look.errors == ERRORS_CI)
		return xasprintf("bars: 95%% interval of each result's median, %s over passes%s", p->stat, p->pooled);
	if (p->look.spread)
		return xasprintf("bars: %g-%g percentile over passes%s", (1 - p->look.spread) / 2 * 100,
				 (1 + p->look.spread) / 2 * 100, p->pooled);
	return xasprintf("bars: min-max over passes%s", p->pooled);
}

/* The title of series s's line in the legend: "KEY=VALUE", or the metric. Owned. */
static char *series_title(const struct plot *pl, size_t s)
{
	return pl->p->look.series ? xasprintf("%s=%s", pl->p->look.series, series_of(pl, s)) : xstrdup(pl->p->metric);
}

/* The end of the series that starts at point s, and of the panel that starts at point i. */
static size_t series_end(const struct plot *pl, size_t s)
{
	size_t e = s;

	while (e < pl->pt->n && same(facet_of(pl, e), facet_of(pl, s)) && same(series_of(pl, e), series_of(pl, s)))
		e++;
	return e;
}

static size_t panel_end(const struct plot *pl, size_t i)
{
	size_t e = i;

	while (e < pl->pt->n && same(facet_of(pl, e), facet_of(pl, i)))
		e++;
	return e;
}

/* The legend of the panel that starts at point i: a line per series, and what the bars are when some are
 * drawn. */
static void panel_key(const struct plot *pl, size_t i, int panel, struct report_plot_key *k)
{
	size_t e = panel_end(pl, i);
	char *bars = pl->bars ? bars_text(pl) : NULL;

	*k = (struct report_plot_key){ .em = pl->em, .lines_each = 1, .col = panel % pl->cols,
				       .row = panel / pl->cols, .cols = pl->cols, .rows = pl->rows, .extra = pl->xturn };
	for (size_t s = i; s < e; s = series_end(pl, s)) {
		char *t = series_title(pl, s);

		report_plot_key_add(k, t);
		free(t);
	}
	if (bars)
		report_plot_key_add(k, bars);
	free(bars);
}

/* A figure's height over the default's: room for a legend of more than 8 lines and for turned labels, so
 * that the plot keeps its share of the figure (60 % or more). */
static double plot_height(const struct plot *pl)
{
	int most = 0;

	for (size_t i = 0; i < pl->pt->n; i = panel_end(pl, i)) {
		struct report_plot_key k;
		int lines;

		panel_key(pl, i, 0, &k);
		lines = report_plot_key_lines(&k);
		most = lines > most ? lines : most;
	}
	/* twice their lines: the plot grows with the figure, and keeps its share */
	most = (most > 8 ? most - 8 : 0) + pl->xturn;
	return 1 + 2 * most * PLOT_LINE_EM * 11 / 560;
}

/* The script's settings: terminal and size from out's extension, labels (with units), scales. */
static void script_head(const struct plot *pl, const char *out, struct strbuf *gp)
{
	const struct report_plan *p = pl->p;
	const char *xu = report_plot_unit(p->look.x);
	const char *pooled = p->pooled;
	char *label;

	sb_addf(gp, "# sweep plot of %s against %s, sweep ", p->metric, p->look.x);
	table_add_safe(gp, p->c->sweep);     /* a comment ends at a newline: none may be in it */
	sb_adds(gp, ": render with 'gnuplot THIS_FILE'\n");
	report_plot_terminal(gp, out, pl->cols, pl->rows * plot_height(pl));
	sb_adds(gp, "set grid\n");
	sb_adds(gp, "set xlabel ");
	label = p->look.xlabel ? xstrdup(p->look.xlabel) : xu ? xasprintf("%s (%s)", p->look.x, xu) :
		xstrdup(p->look.x);
	report_plot_str(gp, label);
	free(label);
	sb_adds(gp, "\nset ylabel ");
	if (p->look.ylabel)
		label = xstrdup(p->look.ylabel);
	else if (pl->yunit)
		label = xasprintf("%s (%s), %s over passes%s", p->metric, pl->yunit, p->stat, pooled);
	else
		label = xasprintf("%s, %s over passes%s", p->metric, p->stat, pooled);
	report_plot_str(gp, label);
	free(label);
	sb_adds(gp, "\n");
	if (pl->x_text)
		sb_adds(gp, "set offsets 0.4, 0.4, 0, 0\n");
	if (pl->xturn)
		sb_adds(gp, "set xtics rotate by 90 right\n");
	if (p->look.logx && !pl->x_text)
		sb_addf(gp, "set logscale x %d\n", all_pow2(pl) ? 2 : 10);
	if (!pl->x_text) {
		/* a margin, so that the ticks and bars at the ends of the grid are drawn whole */
		sb_adds(gp, "set offsets graph 0.03, graph 0.03, 0, 0\n");
		x_ticks(pl, gp);
	}
	sb_adds(gp, p->look.logy ? "set logscale y\n" : "set yrange [0:*]\n");
}

/* A column of the data file in the script's unit: "2" or "($2*1000)". */
static void ycol(const struct plot *pl, int col, struct strbuf *gp)
{
	if (pl->yscale == 1)
		sb_addf(gp, "%d", col);
	else
		sb_addf(gp, "($%d*%g)", col, pl->yscale);
}

/* One panel (the n-th): its title, its legend, and its plot command: a line (or points, for categories) per
 * series, from the data file's blocks (*block counts them), with its bars in the same colour. Returns the
 * first point after the panel. */
static size_t script_panel(const struct plot *pl, size_t i, int n, const char *dat, size_t *block,
			   struct strbuf *gp)
{
	const struct report_plan *p = pl->p;
	struct report_plot_key k;
	size_t e = panel_end(pl, i);
	int lt = 1;

	if (pl->nfacet > 1 || p->look.title || pl->nfacet == 1) {
		char *t = pl->nfacet > 1 ? xasprintf("%s=%s", p->look.facet, facet_of(pl, i))
			: xstrdup(p->look.title ? p->look.title : pl->p->c->sweep);

		sb_adds(gp, "set title ");
		report_plot_str(gp, t);
		sb_adds(gp, "\n");
		free(t);
	}
	panel_key(pl, i, n, &k);
	report_plot_key(gp, &k);
	sb_adds(gp, "plot");
	for (size_t s = i; s < e; s = series_end(pl, s)) {
		char *t = series_title(pl, s);

		sb_addf(gp, "%s ", s == i ? "" : ",");
		if (pl->bars) {
			/* under the points; a point without an interval (an empty field) has no bar */
			report_plot_str(gp, dat);
			sb_addf(gp, " index %zu using 1:", *block);
			ycol(pl, 2, gp);
			sb_adds(gp, ":");
			ycol(pl, 5, gp);
			sb_adds(gp, ":");
			ycol(pl, 6, gp);
			sb_addf(gp, " with yerrorbars lt %d lw 1.5 pt 0 notitle, ", lt);
		}
		report_plot_str(gp, dat);
		/* categories are not a scale: points, not lines between them */
		sb_addf(gp, " index %zu using 1:", *block);
		ycol(pl, 2, gp);
		sb_addf(gp, "%s with %s lt %d title ", pl->x_text ? ":xtic(3)" : "",
			pl->x_text ? "points pt 7 ps 1.5" : "linespoints pt 7 ps 1.2 lw 2", lt);
		report_plot_wrap(gp, t, PLOT_WRAP);
		free(t);
		(*block)++;
		lt++;
	}
	if (pl->bars) {
		/* what the bars are, once, in black: a bar's colour is its series' */
		char *bars = bars_text(pl);

		sb_adds(gp, ", keyentry with yerrorbars lc 'black' lw 1.5 pt 0 title ");
		report_plot_wrap(gp, bars, PLOT_WRAP);
		free(bars);
	}
	sb_adds(gp, "\n");
	return e;
}

/* The gnuplot script: one panel per facet, one line per series, into out. */
static void plot_script(const struct plot *pl, const char *out, const char *dat, struct strbuf *gp)
{
	size_t block = 0;
	int n = 0;

	script_head(pl, out, gp);
	if (pl->nfacet > 1) {
		sb_addf(gp, "set multiplot layout %d,%d title ", pl->rows, pl->cols);
		report_plot_str(gp, pl->p->look.title ? pl->p->look.title : pl->p->c->sweep);
		sb_adds(gp, "\n");
	}
	for (size_t i = 0; i < pl->pt->n; n++)
		i = script_panel(pl, i, n, dat, &block, gp);
	if (pl->nfacet > 1)
		sb_adds(gp, "unset multiplot\n");
}

/* The data file: a block per facet and series ("# facet=v series"), a point a line: x (or, for text on
 * the x axis, the category's number in order of first appearance, the same in every series), y, x as
 * text, n, and the interval (empty when unknown or --errors none); y and its interval as the table prints
 * them for programs (sweep report --format csv), so that the figure can be checked against the table. */
static void plot_data(const struct plot *pl, struct strbuf *dat)
{
	const struct report_plan *p = pl->p;
	const struct report_rows *pt = pl->pt;
	const char **xcat = xcalloc(pt->n + 1, sizeof(*xcat));
	size_t nxcat = 0;

	sb_addf(dat, "# %s\t%s (%s)\t%s\tn\tlow\thigh\n", p->look.x, p->metric, p->stat, p->look.x);
	for (size_t i = 0; i < pt->n; i++) {
		const char *x = report_rows_text(pt, i, 2);
		int block = !i || !same(facet_of(pl, i), facet_of(pl, i - 1)) ||
			    !same(series_of(pl, i), series_of(pl, i - 1));
		size_t k;

		for (k = 0; k < nxcat && strcmp(xcat[k], x); k++)
			;
		if (k == nxcat)
			xcat[nxcat++] = x;
		if (i && block)
			sb_adds(dat, "\n\n");
		if (block) {
			sb_adds(dat, "# ");
			if (p->look.facet) {
				sb_addf(dat, "%s=", p->look.facet);
				table_add_safe(dat, facet_of(pl, i));
			}
			if (p->look.series) {
				sb_adds(dat, p->look.facet ? " " : "");
				table_add_safe(dat, series_of(pl, i));
			}
			sb_adds(dat, "\n");
		}
		if (pl->x_text)
			sb_addf(dat, "%zu\t", k);
		else
			sb_addf(dat, "%.17g\t", x_of(pl, i));
		report_plot_num(p->out.digits, report_rows_num(pt, i, 3), 4, dat);
		sb_adds(dat, "\t");
		table_add_safe(dat, x);       /* no tab or newline may split its columns or lines */
		sb_addf(dat, "\t%.0f", report_rows_num(pt, i, 4));
		for (int c = 5; c < 7; c++) {
			sb_adds(dat, "\t");
			report_plot_num(p->out.digits, report_rows_num(pt, i, c), 4, dat);
		}
		sb_adds(dat, "\n");
	}
	free(xcat);
}

/* Categories on the x axis whose labels, side by side, would not fit its length are turned upright:
 * the lines their longest takes under the axis, or 0. */
static int x_turn(const struct plot *pl)
{
	double width = 0, longest = 0;

	for (size_t i = 0; pl->x_text && i < pl->pt->n; i++) {
		const char *x = report_rows_text(pl->pt, i, 2);
		double w = (double)report_plot_chars(x ? x : "") * PLOT_CHAR_W;
		size_t j;

		for (j = 0; j < i && !same(report_rows_text(pl->pt, j, 2), x); j++)
			;
		width += j == i ? w + 1 : 0;     /* each category once, a character apart */
		longest = w > longest ? w : longest;
	}
	return width > pl->em * 0.8 ? (int)ceil(longest / PLOT_LINE_EM) : 0;
}

/* Seconds are drawn in the unit that suits the largest value (report_plot_seconds). */
static void time_unit(struct plot *pl)
{
	double max = 0;

	pl->yscale = 1;
	pl->yunit = report_plot_unit(pl->p->metric);
	if (strcmp(pl->p->metric, "seconds"))
		return;
	for (size_t i = 0; i < pl->pt->n; i++)
		for (int c = 3; c < 7; c += c == 3 ? 2 : 1)
			if (fabs(report_rows_num(pl->pt, i, c)) > max)
				max = fabs(report_rows_num(pl->pt, i, c));
	if (max > 0 && max < 1)
		pl->yscale = report_plot_seconds(max, &pl->yunit);
}

int report_plot_print(const struct report_plan *p, const struct report_rows *points)
{
	struct plot pl = { p, points, 0, 0, 0, 0, 1, NULL, 0, report_plot_em(p->out.path), 0 };
	struct strbuf gp = STRBUF_INIT, dat = STRBUF_INIT;
	char *datpath = report_plot_beside(p->out.path, ".dat");
	int ret;

	for (size_t i = 0; i < points->n; i++) {
		pl.x_text |= isnan(x_of(&pl, i));
		pl.nfacet += !i || !same(facet_of(&pl, i), facet_of(&pl, i - 1));
		pl.bars |= p->look.errors != ERRORS_NONE &&
			   report_rows_num(points, i, 5) < report_rows_num(points, i, 6);
	}
	pl.cols = (int)ceil(sqrt((double)pl.nfacet));
	pl.rows = (int)((pl.nfacet + (size_t)pl.cols - 1) / (size_t)pl.cols);
	time_unit(&pl);
	pl.xturn = x_turn(&pl);
	plot_data(&pl, &dat);
	plot_script(&pl, p->out.path, datpath, &gp);
	ret = report_plot_render(p->c->db, p->out.path, dat.buf, gp.buf, 1);
	free(datpath);
	sb_release(&gp);
	sb_release(&dat);
	return ret < 0 ? ret : FAIL_OK;
}
