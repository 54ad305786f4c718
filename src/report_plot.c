/* report_plot.c: a metric against a parameter, as data and a gnuplot script, rendered by gnuplot. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "report_int.h"
#include "spawn.h"

/* Units of the metrics and parameters sweep knows, for axis labels. */
static const char *const plot_units[][2] = {
	{ "seconds", "s" }, { "ms", "ms" }, { "us", "µs" }, { "gflops", "GFLOP/s" }, { "tflops", "TFLOP/s" },
	{ "gbs", "GB/s" }, { "tbs", "TB/s" }, { "tok_s", "tokens/s" }, { "bytes", "B" }, { "wall", "s" },
	{ "busbw", "GB/s" }, { "algbw", "GB/s" },
};

static const char *unit_of(const char *name)
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

/* The points of a plot (report_agg_points' rows: facet, series, x, y, n) and what the script needs. */
struct plot {
	const struct report_plan *p;
	const struct report_opts *o;
	const struct report_rows *pt;
	int x_text;            /* some x is not a number: categories in order of first appearance */
	size_t nfacet;
	int cols, rows;        /* panels */
};

/* Point i's facet and series: NULL when the plot has none, "-" for an unknown value. */
static const char *facet_of(const struct plot *pl, size_t i)
{
	const char *s = report_rows_text(pl->pt, i, 0);

	return !pl->o->facet ? NULL : s ? s : "-";
}

static const char *series_of(const struct plot *pl, size_t i)
{
	const char *s = report_rows_text(pl->pt, i, 1);

	return !pl->o->series ? NULL : s ? s : "-";
}

static double x_of(const struct plot *pl, size_t i)
{
	return report_rows_num(pl->pt, i, 2);
}

/*
 * A gnuplot single-quoted string: a quote is doubled, and a newline (which would end the command and
 * start another, such as system("...")) or any control character becomes '?', bytes that are not UTF-8
 * U+FFFD. Single quotes keep gnuplot from expanding backquotes, @macros and escapes inside.
 */
static void gp_str(struct strbuf *sb, const char *s)
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

/* Text in the data file: no tab or newline may split its columns or lines. */
static void dat_str(struct strbuf *sb, const char *s)
{
	table_add_safe(sb, s);
}

static int write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return error("cannot write '%s': %m", path);
	fputs(text, f);
	if (ferror(f) | fclose(f))
		return error("cannot write '%s': %m", path);
	return 0;
}

/* Run gnuplot on the script. 1 when gnuplot is not installed, -1 when it failed. */
static int run_gnuplot(const char *script)
{
	char *argv[] = { "gnuplot", (char *)script, NULL };
	/* gnuplot talks to the user: our stdin, stdout and stderr, our process group (Ctrl-C stops it too). */
	struct spawn_opts o = {
		.argv = argv,
		.in = SPAWN_INHERIT,
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

static int all_pow2(const struct plot *pl)
{
	for (size_t i = 0; i < pl->pt->n; i++) {
		double m = frexp(x_of(pl, i), &(int){ 0 });

		if (x_of(pl, i) <= 0 || m != 0.5)
			return 0;
	}
	return 1;
}

/* The script's settings: terminal and size from out's extension, labels (with units), scales. */
static void script_head(const struct plot *pl, const char *out, struct strbuf *gp)
{
	const struct report_opts *o = pl->o;
	const char *ext = strrchr(out, '.') + 1, *yu = unit_of(o->metric), *xu = unit_of(o->x);
	char *label, *pooled = report_print_pooled(o);

	sb_addf(gp, "# sweep plot of %s against %s, sweep ", o->metric, o->x);
	table_add_safe(gp, pl->p->c->sweep);     /* a comment ends at a newline: none may be in it */
	sb_adds(gp, ": render with 'gnuplot THIS_FILE'\n");
	if (!strcmp(ext, "png"))
		sb_addf(gp, "set terminal pngcairo noenhanced size %d,%d font 'Sans,11'\n", 900 * pl->cols,
			560 * pl->rows);
	else if (!strcmp(ext, "svg"))
		sb_addf(gp, "set terminal svg noenhanced size %d,%d dynamic font 'Sans,11'\n", 900 * pl->cols,
			560 * pl->rows);
	else
		sb_addf(gp, "set terminal pdfcairo noenhanced size %gin,%gin font 'Sans,10'\n", 7.5 * pl->cols,
			4.6 * pl->rows);
	sb_adds(gp, "set output ");
	gp_str(gp, out);
	sb_adds(gp, "\nset datafile separator '\\t'\nset grid\nset key outside right top box\n");
	sb_adds(gp, "set xlabel ");
	label = o->xlabel ? xstrdup(o->xlabel) : xu ? xasprintf("%s (%s)", o->x, xu) : xstrdup(o->x);
	gp_str(gp, label);
	free(label);
	sb_adds(gp, "\nset ylabel ");
	if (o->ylabel)
		label = xstrdup(o->ylabel);
	else if (yu)
		label = xasprintf("%s (%s), %s over passes%s", o->metric, yu, o->stat, pooled);
	else
		label = xasprintf("%s, %s over passes%s", o->metric, o->stat, pooled);
	gp_str(gp, label);
	free(label);
	free(pooled);
	sb_adds(gp, "\n");
	if (pl->x_text)
		sb_adds(gp, "set offsets 0.4, 0.4, 0, 0\n");
	if (o->logx && !pl->x_text)
		sb_addf(gp, "set logscale x %d\n", all_pow2(pl) ? 2 : 10);
	sb_adds(gp, o->logy ? "set logscale y\n" : "set yrange [0:*]\n");
}

/* One panel's plot command: a line (or points, for categories) per series, from the data file's blocks
 * (*block counts them). Returns the first point after the panel. */
static size_t script_panel(const struct plot *pl, size_t i, const char *dat, size_t *block, struct strbuf *gp)
{
	const struct report_opts *o = pl->o;
	size_t e = i;

	if (pl->nfacet > 1 || o->title || pl->nfacet == 1) {
		char *t = pl->nfacet > 1 ? xasprintf("%s=%s", o->facet, facet_of(pl, i))
			: xstrdup(o->title ? o->title : pl->p->c->sweep);

		sb_adds(gp, "set title ");
		gp_str(gp, t);
		sb_adds(gp, "\n");
		free(t);
	}
	sb_adds(gp, "plot");
	while (e < pl->pt->n && same(facet_of(pl, e), facet_of(pl, i))) {
		size_t s = e;

		while (e < pl->pt->n && same(facet_of(pl, e), facet_of(pl, i)) &&
		       same(series_of(pl, e), series_of(pl, s)))
			e++;
		sb_addf(gp, "%s ", s == i ? "" : ",");
		gp_str(gp, dat);
		/* categories are not a scale: points, not lines between them */
		sb_addf(gp, " index %zu using 1:2%s with %s title ", (*block)++, pl->x_text ? ":xtic(3)" : "",
			pl->x_text ? "points pt 7 ps 1.3" : "linespoints pt 7 ps 0.8 lw 1.5");
		gp_str(gp, o->series ? series_of(pl, s) : o->metric);
	}
	sb_adds(gp, "\n");
	return e;
}

/* The gnuplot script: one panel per facet, one line per series, into out. */
static void plot_script(const struct plot *pl, const char *out, const char *dat, struct strbuf *gp)
{
	size_t block = 0;

	script_head(pl, out, gp);
	if (pl->o->series) {
		sb_adds(gp, "set key title ");
		gp_str(gp, pl->o->series);
		sb_adds(gp, "\n");
	}
	if (pl->nfacet > 1) {
		sb_addf(gp, "set multiplot layout %d,%d title ", pl->rows, pl->cols);
		gp_str(gp, pl->o->title ? pl->o->title : pl->p->c->sweep);
		sb_adds(gp, "\n");
	}
	for (size_t i = 0; i < pl->pt->n;)
		i = script_panel(pl, i, dat, &block, gp);
	if (pl->nfacet > 1)
		sb_adds(gp, "unset multiplot\n");
}

/* The data file: a block per facet and series ("# facet=v series"), a point a line: x (or, for text on
 * the x axis, the category's number in order of first appearance, the same in every series), y, x as
 * text, n. */
static void plot_data(const struct plot *pl, struct strbuf *dat)
{
	const struct report_opts *o = pl->o;
	const struct report_rows *pt = pl->pt;
	const char **xcat = xcalloc(pt->n + 1, sizeof(*xcat));
	size_t nxcat = 0;

	sb_addf(dat, "# %s\t%s (%s)\t%s\tn\n", o->x, o->metric, o->stat, o->x);
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
			if (o->facet) {
				sb_addf(dat, "%s=", o->facet);
				dat_str(dat, facet_of(pl, i));
			}
			if (o->series) {
				sb_adds(dat, o->facet ? " " : "");
				dat_str(dat, series_of(pl, i));
			}
			sb_adds(dat, "\n");
		}
		if (pl->x_text)
			sb_addf(dat, "%zu\t%.17g\t", k, report_rows_num(pt, i, 3));
		else
			sb_addf(dat, "%.17g\t%.17g\t", x_of(pl, i), report_rows_num(pt, i, 3));
		dat_str(dat, x);
		sb_addf(dat, "\t%.0f\n", report_rows_num(pt, i, 4));
	}
	free(xcat);
}

int report_plot_print(const struct report_plan *p, const struct report_rows *points)
{
	const struct report_opts *o = p->o;
	struct plot pl = { p, o, points, 0, 0, 0, 0 };
	struct strbuf gp = STRBUF_INIT, dat = STRBUF_INIT;
	char *base = xstrndup(o->out, (size_t)(strrchr(o->out, '.') - o->out));
	char *datpath = xasprintf("%s.dat", base), *gppath = xasprintf("%s.gp", base);
	int ret = FAIL_IO, rc;

	for (size_t i = 0; i < points->n; i++) {
		pl.x_text |= isnan(x_of(&pl, i));
		pl.nfacet += !i || !same(facet_of(&pl, i), facet_of(&pl, i - 1));
	}
	pl.cols = (int)ceil(sqrt((double)pl.nfacet));
	pl.rows = (int)((pl.nfacet + (size_t)pl.cols - 1) / (size_t)pl.cols);
	plot_data(&pl, &dat);
	plot_script(&pl, o->out, datpath, &gp);
	if ((ret = report_out_check("--out", o->out, o->db)) ||
	    (ret = report_out_check("the plot's data", datpath, o->db)) ||
	    (ret = report_out_check("the plot's script", gppath, o->db))) {
		free(base);
		free(datpath);
		free(gppath);
		return ret;
	}
	ret = FAIL_IO;
	if (!write_file(datpath, dat.buf) && !write_file(gppath, gp.buf) && (rc = run_gnuplot(gppath)) >= 0) {
		if (rc > 0)
			printf("gnuplot is not installed: wrote %s and %s; render them with: gnuplot %s\n"
			       "(Debian: apt-get install gnuplot-nox)\n", datpath, gppath, gppath);
		else
			printf("wrote %s (data %s, script %s)\n", o->out, datpath, gppath);
		ret = FAIL_OK;
	}
	free(base);
	free(datpath);
	free(gppath);
	sb_release(&gp);
	sb_release(&dat);
	return ret;
}
