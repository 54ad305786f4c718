/* report_plot.c: a metric against a parameter, as data and a gnuplot script, rendered by gnuplot. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "report.h"
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

/* One point: facet and series values (text, NULL for none), x and y. */
struct point {
	char *facet, *series, *xtext;
	double x, y, n;
};

struct plot {
	struct point *v;
	size_t n, alloc;
	int has_facet, has_series;
	int x_text;            /* some x is not a number: categories in order of first appearance */
};

static int plot_row(const struct store_row *row, void *data)
{
	struct plot *p = data;
	struct point *pt;

	if (!row->text[2] || isnan(row->num[3]))
		return 0;
	ALLOC_GROW(p->v, p->n + 1, p->alloc);
	pt = &p->v[p->n++];
	pt->facet = p->has_facet ? xstrdup(row->text[0] ? row->text[0] : "-") : NULL;
	pt->series = p->has_series ? xstrdup(row->text[1] ? row->text[1] : "-") : NULL;
	pt->xtext = xstrdup(row->text[2]);
	pt->x = row->num[2];
	pt->y = row->num[3];
	pt->n = row->num[4];
	if (isnan(pt->x))
		p->x_text = 1;
	return 0;
}

static int same(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
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

static int all_pow2(const struct plot *p)
{
	for (size_t i = 0; i < p->n; i++) {
		double m = frexp(p->v[i].x, &(int){ 0 });

		if (p->v[i].x <= 0 || m != 0.5)
			return 0;
	}
	return 1;
}

/* The gnuplot script: one panel per facet, one line per series, into out. */
static void plot_script(struct report *r, const struct plot_opts *o, const struct plot *p, const char *out,
			const char *dat, struct strbuf *gp)
{
	const char *ext = strrchr(out, '.') + 1, *yu = unit_of(r->metric), *xu = unit_of(o->x);
	size_t nfacet = 0, block = 0;
	int cols, rows;
	char *label;

	for (size_t i = 0; i < p->n; i++)
		nfacet += !i || !same(p->v[i].facet, p->v[i - 1].facet);
	cols = (int)ceil(sqrt((double)nfacet));
	rows = (int)((nfacet + (size_t)cols - 1) / (size_t)cols);
	sb_addf(gp, "# sweep plot of %s against %s, sweep ", r->metric, o->x);
	table_add_safe(gp, r->sweep);     /* a comment ends at a newline: none may be in it */
	sb_adds(gp, ": render with 'gnuplot THIS_FILE'\n");
	if (!strcmp(ext, "png"))
		sb_addf(gp, "set terminal pngcairo noenhanced size %d,%d font 'Sans,11'\n", 900 * cols,
			560 * rows);
	else if (!strcmp(ext, "svg"))
		sb_addf(gp, "set terminal svg noenhanced size %d,%d dynamic font 'Sans,11'\n", 900 * cols,
			560 * rows);
	else
		sb_addf(gp, "set terminal pdfcairo noenhanced size %gin,%gin font 'Sans,10'\n", 7.5 * cols,
			4.6 * rows);
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
		label = xasprintf("%s (%s), %s over passes%s", r->metric, yu, r->stat, report_pooled(r));
	else
		label = xasprintf("%s, %s over passes%s", r->metric, r->stat, report_pooled(r));
	gp_str(gp, label);
	free(label);
	sb_adds(gp, "\n");
	if (p->x_text)
		sb_adds(gp, "set offsets 0.4, 0.4, 0, 0\n");
	if (o->logx && !p->x_text)
		sb_addf(gp, "set logscale x %d\n", all_pow2(p) ? 2 : 10);
	if (o->logy)
		sb_adds(gp, "set logscale y\n");
	else
		sb_adds(gp, "set yrange [0:*]\n");
	if (p->has_series) {
		sb_adds(gp, "set key title ");
		gp_str(gp, o->series);
		sb_adds(gp, "\n");
	}
	if (nfacet > 1) {
		sb_addf(gp, "set multiplot layout %d,%d title ", rows, cols);
		gp_str(gp, o->title ? o->title : r->sweep);
		sb_adds(gp, "\n");
	}
	for (size_t i = 0; i < p->n;) {
		size_t e = i;
		int first = 1;

		if (nfacet > 1 || o->title || nfacet == 1) {
			char *t = nfacet > 1 ? xasprintf("%s=%s", o->facet, p->v[i].facet)
				: xstrdup(o->title ? o->title : r->sweep);

			sb_adds(gp, "set title ");
			gp_str(gp, t);
			sb_adds(gp, "\n");
			free(t);
		}
		sb_adds(gp, "plot");
		while (e < p->n && same(p->v[e].facet, p->v[i].facet)) {
			size_t s = e;

			while (e < p->n && same(p->v[e].facet, p->v[i].facet) &&
			       same(p->v[e].series, p->v[s].series))
				e++;
			sb_addf(gp, "%s ", first ? "" : ",");
			gp_str(gp, dat);
			/* categories are not a scale: points, not lines between them */
			sb_addf(gp, " index %zu using 1:2%s with %s title ", block++,
				p->x_text ? ":xtic(3)" : "",
				p->x_text ? "points pt 7 ps 1.3" : "linespoints pt 7 ps 0.8 lw 1.5");
			if (p->has_series) {
				char *t = xasprintf("%s", p->v[s].series);

				gp_str(gp, t);
				free(t);
			} else {
				gp_str(gp, r->metric);
			}
			first = 0;
		}
		sb_adds(gp, "\n");
		i = e;
	}
	if (nfacet > 1)
		sb_adds(gp, "unset multiplot\n");
}

/* A point never aggregates over a parameter the user did not name: one that varies inside a point is
 * refused, naming it. -1 after error(). */
static int plot_unpooled(struct report *r, const struct plot_opts *o)
{
	const char *keys[] = { o->x, o->series, o->facet };
	struct strbuf sb = STRBUF_INIT;
	char **v;
	int nv;

	if (report_varying(r, keys, 3, &v, &nv))
		return -1;
	for (int i = 0; i < nv; i++) {
		sb_addf(&sb, "%s%s", i ? "," : "", v[i]);
		free(v[i]);
	}
	free(v);
	if (nv)
		error("%s %s inside a point of the plot: give %s as --series or --facet, or aggregate over "
		      "%s with --pool %s", sb.buf, nv > 1 ? "vary" : "varies", nv > 1 ? "them" : "it",
		      nv > 1 ? "them" : "it", sb.buf);
	sb_release(&sb);
	return nv ? -1 : 0;
}

int report_plot(struct report *r, const struct plot_opts *o)
{
	struct plot p = { 0 };
	struct strbuf sql = STRBUF_INIT, gp = STRBUF_INIT, dat = STRBUF_INIT;
	char *base = NULL, *datpath = NULL, *gppath = NULL, **xcat = NULL;
	const char *ext = strrchr(r->out, '.');
	size_t nxcat = 0;
	int ret = -1, rc;

	if (report_open(r) || report_metric(r, r->metric) || plot_unpooled(r, o))
		goto out;
	sb_adds(&sql, "SELECT ");
	if (o->facet) {
		if (report_key_sql(r, o->facet, &sql))
			goto out;
	} else {
		sb_adds(&sql, "NULL");
	}
	sb_adds(&sql, ", ");
	if (o->series) {
		if (report_key_sql(r, o->series, &sql))
			goto out;
	} else {
		sb_adds(&sql, "NULL");
	}
	sb_adds(&sql, ", ");
	if (report_key_sql(r, o->x, &sql))
		goto out;
	sb_addf(&sql, ", %s(", report_stat_sql(r->stat));
	report_metric_value(r, &sql);
	sb_adds(&sql, "), count(m.value)");
	if (report_from(r, &sql, JOIN_METRIC))
		goto out;
	sb_adds(&sql, " GROUP BY 1, 2, 3 ORDER BY 1, 2, 3");
	p.has_facet = !!o->facet;
	p.has_series = !!o->series;
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, plot_row, &p)) {
		ret = -2;
		goto out;
	}
	if (!p.n) {
		error("nothing to plot: no ok results of sweep '%s' with metric '%s'%s", r->sweep, r->metric,
		      r->where ? " that pass --where" : "");
		goto out;
	}
	/* Text on the x axis: categories numbered in sorted order, the same numbers in every series. */
	for (size_t i = 0; i < p.n; i++) {
		size_t k;

		for (k = 0; k < nxcat && strcmp(xcat[k], p.v[i].xtext); k++)
			;
		if (k == nxcat) {
			xcat = xrealloc(xcat, (nxcat + 1) * sizeof(*xcat));
			xcat[nxcat++] = p.v[i].xtext;
		}
	}
	base = xstrndup(r->out, (size_t)(ext - r->out));
	datpath = xasprintf("%s.dat", base);
	gppath = xasprintf("%s.gp", base);
	sb_addf(&dat, "# %s\t%s (%s)\t%s\tn\n", o->x, r->metric, r->stat, o->x);
	for (size_t i = 0; i < p.n; i++) {
		if (i && (!same(p.v[i].facet, p.v[i - 1].facet) || !same(p.v[i].series, p.v[i - 1].series)))
			sb_adds(&dat, "\n\n");
		if (!i || !same(p.v[i].facet, p.v[i - 1].facet) || !same(p.v[i].series, p.v[i - 1].series)) {
			sb_adds(&dat, "# ");
			if (o->facet) {
				sb_addf(&dat, "%s=", o->facet);
				dat_str(&dat, p.v[i].facet);
			}
			if (o->series) {
				sb_adds(&dat, o->facet ? " " : "");
				dat_str(&dat, p.v[i].series);
			}
			sb_adds(&dat, "\n");
		}
		if (p.x_text) {
			size_t k;

			for (k = 0; strcmp(xcat[k], p.v[i].xtext); k++)
				;
			sb_addf(&dat, "%zu\t%.17g\t", k, p.v[i].y);
		} else {
			sb_addf(&dat, "%.17g\t%.17g\t", p.v[i].x, p.v[i].y);
		}
		dat_str(&dat, p.v[i].xtext);
		sb_addf(&dat, "\t%.0f\n", p.v[i].n);
	}
	plot_script(r, o, &p, r->out, datpath, &gp);
	if (store_output_check("--out", r->out, r->db, 0) ||
	    store_output_check("the plot's data", datpath, r->db, 0) ||
	    store_output_check("the plot's script", gppath, r->db, 0) ||
	    write_file(datpath, dat.buf) || write_file(gppath, gp.buf)) {
		ret = -2;
		goto out;
	}
	rc = run_gnuplot(gppath);
	if (rc < 0) {
		ret = -2;
		goto out;
	}
	if (rc > 0)
		printf("gnuplot is not installed: wrote %s and %s; render them with: gnuplot %s\n"
		       "(Debian: apt-get install gnuplot-nox)\n", datpath, gppath, gppath);
	else
		printf("wrote %s (data %s, script %s)\n", r->out, datpath, gppath);
	ret = 0;
out:
	for (size_t i = 0; i < p.n; i++) {
		free(p.v[i].facet);
		free(p.v[i].series);
		free(p.v[i].xtext);
	}
	free(p.v);
	free(xcat);
	free(base);
	free(datpath);
	free(gppath);
	sb_release(&sql);
	sb_release(&gp);
	sb_release(&dat);
	return ret;
}
