/* report_html.c: a report as one self-contained HTML page: the table (table.c's HTML format), its figure
 * inline as SVG with the numbers behind it, the method, and the conditions the numbers were measured under.
 * The page loads nothing: no script, no external file, and a Content-Security-Policy that forbids it. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report_print.h"

/* The policy that proves the page self-contained: a browser refuses any fetch (and says so). */
#define HTML_CSP "default-src 'none'; img-src data:; style-src 'unsafe-inline'"

static const char html_style[] =
	"body{font-family:sans-serif;margin:2em auto;max-width:72em;color:#222}"
	"table{border-collapse:collapse;margin:0.5em 0}th,td{padding:0.2em 0.6em;border-bottom:1px solid #ddd}"
	"th{text-align:left}.num{text-align:right;font-variant-numeric:tabular-nums}"
	".mark{color:#a33}.method,.caption{font-style:italic}figure{margin:1em 0}"
	"figure svg{max-width:100%;height:auto}pre{background:#f6f6f6;padding:0.5em;overflow:auto}";

/* "<TAG>text</TAG>" with text escaped. */
static void html_elem(struct strbuf *sb, const char *tag, const char *text)
{
	sb_addf(sb, "<%s>", tag);
	table_add_html(sb, text);
	sb_addf(sb, "</%s>", tag);
}

/* Text of several lines and tab-separated fields (a figure's data) as HTML text, keeping its tabs and
 * newlines. */
static void html_lines(struct strbuf *sb, const char *text)
{
	while (*text) {
		size_t n = strcspn(text, "\t\n");
		char *field = xstrndup(text, n);

		table_add_html(sb, field);
		free(field);
		text += n;
		if (*text)
			sb_addc(sb, *text++);
	}
}

/* A row of the method's table. */
static void method_row(struct strbuf *sb, const char *what, const char *value)
{
	sb_adds(sb, "<tr>");
	html_elem(sb, "th", what);
	html_elem(sb, "td", value);
	sb_adds(sb, "</tr>\n");
}

/* The method: the statistic, the interval, its resamples and seed, the filters. */
static void page_method(const struct report_plan *p, const struct report_doc *d, struct strbuf *sb)
{
	const char *pooled = p->pooled;
	char *s;

	sb_adds(sb, "<section id=\"method\">\n<h2>Method</h2>\n<table class=\"kv\">\n");
	if (p->mode == REPORT_COMPARE)
		s = xasprintf("each unit's mean over passes%s, then the %s", pooled, !strcmp(p->stat, "geomean") ?
			      "geometric mean of the units' ratios" : "ratio of the means of the paired units");
	else
		s = xasprintf("%s over passes%s", p->stat, pooled);
	method_row(sb, "statistic", p->mode == REPORT_DRIFT || p->mode == REPORT_SCORE ? "as the table says" : s);
	free(s);
	if (p->mode == REPORT_COMPARE) {
		s = xasprintf("%g%% %s bootstrap of the %s, resampling paired units (%s)", p->boot.ci * 100,
			      p->boot.interval == STATS_BCA ? "BCa" : "percentile", !strcmp(p->stat, "geomean") ?
			      "geometric mean of the ratios" : "ratio of means", p->paired_by);
		method_row(sb, "interval", s);
		free(s);
		s = xasprintf("%d", p->boot.resamples);
		method_row(sb, "resamples", s);
		free(s);
		s = xasprintf("%llu", (unsigned long long)p->boot.seed);
		method_row(sb, "seed", s);
		free(s);
	}
	if (d->summary) {
		s = p->unit ? xasprintf("95%% Student t interval of the mean over units: one value per %s, the mean "
					"of its rows", p->unit) : xstrdup("95% Student t interval of the mean over the rows");
		method_row(sb, "summary interval", s);
		free(s);
	}
	method_row(sb, "filter", p->where ? p->where : "none");
	if (p->strict)
		method_row(sb, "strict", "results above their noise target left out");
	for (size_t i = 0; i < p->nexcluded; i++)
		method_row(sb, "excluded host (unstable)", p->excluded[i]);
	sb_adds(sb, "</table>\n</section>\n");
}

/* The notes and warnings the report gave on stderr (what a caveat's footnote points to). */
static void page_notes(const struct report_doc *d, struct strbuf *sb)
{
	if (!d->notes || !d->notes->n)
		return;
	sb_adds(sb, "<section id=\"notes\">\n<h2>Warnings and notes</h2>\n<ul>\n");
	for (size_t i = 0; i < d->notes->n; i++) {
		sb_addf(sb, "<li class=\"%s\">%s: ", d->notes->warn[i] ? "warning" : "note",
			d->notes->warn[i] ? "warning" : "note");
		table_add_html(sb, d->notes->v[i]);
		sb_adds(sb, "</li>\n");
	}
	sb_adds(sb, "</ul>\n</section>\n");
}

/* The figure of the report (a table, a comparison, the shares of a limit), rendered as SVG in a scratch
 * folder, and inlined with the data behind it. Nothing when the report has none or gnuplot is missing. */
static int page_figure(const struct report_plan *p, const struct report_doc *d, struct strbuf *sb)
{
	const char *tmp = getenv("TMPDIR");
	char *dir = xasprintf("%s/sweep-page.XXXXXX", tmp && *tmp ? tmp : "/tmp"), *svg, *dat, *gp;
	struct strbuf pic = STRBUF_INIT, data = STRBUF_INIT;
	const char *start;
	int ret;

	if (!d->rows->n) {
		free(dir);
		return FAIL_OK;
	}
	if (!mkdtemp(dir)) {
		ret = error("cannot make a scratch folder for the page's figure: %m");
		free(dir);
		return ret;
	}
	svg = xasprintf("%s/figure.svg", dir);
	dat = report_plot_beside(svg, ".dat");
	gp = report_plot_beside(svg, ".gp");
	/* 2: no row has a value to draw, and the table says so */
	if ((ret = report_figure_print(p, d, svg, 0)) == 2)
		ret = 1;
	else if (ret == 1)
		report_note("gnuplot is not installed: the page has no figure (Debian: apt-get install gnuplot-nox)");
	if (!ret && (sb_read_file(&pic, svg) || sb_read_file(&data, dat)))
		ret = error("cannot read the figure '%s': %m", svg);
	if (!ret && (start = strstr(pic.buf, "<svg"))) {
		sb_adds(sb, "<section id=\"figures\">\n<h2>Figure</h2>\n<figure id=\"figure-1\">\n");
		/* the table's caption, above it, says what the figure draws: it is not said again */
		sb_adds(sb, start);
		sb_adds(sb, "<details><summary>the numbers drawn</summary><pre class=\"figure-data\">");
		html_lines(sb, data.buf);
		sb_adds(sb, "</pre></details>\n</figure>\n</section>\n");
	}
	unlink(svg);
	unlink(dat);
	unlink(gp);
	rmdir(dir);
	free(dir);
	free(svg);
	free(dat);
	free(gp);
	sb_release(&pic);
	sb_release(&data);
	return ret < 0 ? ret : FAIL_OK;
}

int report_html_page(const struct report_plan *p, const struct report_doc *d)
{
	struct strbuf head = STRBUF_INIT, rest = STRBUF_INIT;
	struct store_out w;
	int ret;

	sb_adds(&head, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		"<meta http-equiv=\"Content-Security-Policy\" content=\"" HTML_CSP "\">\n<title>");
	table_add_html(&head, p->c->sweep);
	sb_addf(&head, ": sweep report</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", html_style);
	table_add_html(&head, p->c->sweep);
	sb_adds(&head, "</h1>\n<section id=\"table\">\n<h2>Table</h2>\n");
	sb_add(&rest, "", 0);
	if ((ret = page_figure(p, d, &rest)))
		goto out;
	page_notes(d, &rest);
	page_method(p, d, &rest);
	sb_adds(&rest, "<section id=\"conditions\">\n<h2>Conditions</h2>\n");
	sb_adds(&rest, d->conditions ? d->conditions : "");
	sb_adds(&rest, "</section>\n");
	if ((ret = report_out_open(&p->out, 0, &w)))
		goto out;
	fputs(head.buf, w.f);
	report_print_to(&p->out, d, w.f);
	fputs("</section>\n", w.f);
	fputs(rest.buf, w.f);
	fputs("</body>\n</html>\n", w.f);
	ret = report_out_close(&w);
out:
	sb_release(&head);
	sb_release(&rest);
	return ret;
}
