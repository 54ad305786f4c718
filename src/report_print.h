/* report_print.h: the printers of a report: tables (report_print.c over table.c's formats), figures
 * (report_plot.c, report_axis.c, report_figure.c) and a page (report_html.c). They are given the rows, the
 * plan and what report_out says, and read nothing from the database (tests/layers.py). */
#ifndef SWEEP_REPORT_PRINT_H
#define SWEEP_REPORT_PRINT_H

#include "report_plan.h"

/* ---- report_print.c: the one printer of tables ---- */

/* What a report prints: its rows, their summary, a line above them and the count behind the marks. */
struct report_doc {
	const struct report_rows *rows;
	const struct report_rows *summary; /* report_agg_summary's rows, or NULL */
	const char *caption;       /* NULL, or a line above the table */
	int method;                /* the caption states the method: LaTeX keeps it as a comment */
	long marked;               /* results marked (STORE_IMPRECISE), for the footnote; -1: not counted */
	const char *caveat;        /* why values carry MARK_CAVEAT (report_notes_caveats), for its footnote */
	int append;                /* added after another table of the same report (--out not emptied) */
	const struct report_notes *notes;  /* the notes and warnings stderr had, which a page shows too; or NULL */
	const char *said;          /* what the results' own notes say (results.note), a footnote; or NULL */
	const char *conditions;    /* a page's conditions section (report_conditions_page), or NULL */
	const struct report_rows *pairs;   /* --score's figure: each prediction with its measure
					    * (report_query_score_pairs), or NULL */
};
/* Print d in out's format to its file or stdout. FAIL_UNSAFE or FAIL_IO after error(). */
int report_print(const struct report_out *out, const struct report_doc *d);
/* The same into f: the caption (or method), the table and the footnote. */
void report_print_to(const struct report_out *out, const struct report_doc *d, FILE *f);
/* out->path opened for writing into w->f (append: after what it holds) as store_out_open writes it (a
 * temporary file renamed into place by report_out_close; report_out_check's rule against out->db and
 * out->base_db), or stdout; closed (stdout flushed) with the error of any write, the old file intact.
 * FAIL_UNSAFE or FAIL_IO after error(). */
int report_out_open(const struct report_out *out, int append, struct store_out *w);
int report_out_close(struct store_out *w);
/* v as a report prints it in fmt: with digits (--digits; else sig) significant digits for reading, %.6g
 * (or digits) and empty for unknown for programs; a count (sig 0) as an integer. */
void report_print_num(const struct table_format *fmt, int digits, double v, int sig, char *buf, size_t n);
/* " and N, K" (the --pool keys, for a title: "median over passes and N"), or "". Owned. */
char *report_print_pooled(char *const *pool, int npool);

/* ---- report_plot.c: figures through gnuplot ---- */

/* The points of report_agg_points as a data file and a gnuplot script beside p->out.path, rendered by gnuplot
 * (when installed; else the command to render them is printed), each point with its interval (--errors)
 * and the legend saying what it is. FAIL_IO after error(). */
int report_plot_print(const struct report_plan *p, const struct report_rows *points);
/* s as a gnuplot single-quoted string: a quote doubled, and a newline (which would end the command and
 * start another, such as system("...")) or any control character '?', bytes that are not UTF-8 U+FFFD.
 * Single quotes keep gnuplot from expanding backquotes, @macros and escapes inside. */
void report_plot_str(struct strbuf *sb, const char *s);
/* v as a table prints it for programs (--format csv: 6 significant digits, empty for unknown): a figure's
 * data file holds the numbers its table holds. */
void report_plot_num(int digits, double v, int sig, struct strbuf *sb);
/* The scale that draws seconds whose largest is max in the unit that suits them (ns below 1 us, us below
 * 1 ms, ms below 1 s), its name in *unit; 1 (and *unit as it was) for max >= 1 s or none. */
double report_plot_seconds(double max, const char **unit);
/* The terminal of a picture at out (png, svg or pdf, from its extension), w x h times 900 x 560 pixels,
 * its output, and tab-separated data. */
void report_plot_terminal(struct strbuf *gp, const char *out, double w, double h);
/* out with its extension replaced by ext (".dat"). Owned. */
char *report_plot_beside(const char *out, const char *ext);
/* "set xtics (...)" (axis "x" or "y") on the n sorted grid values (on a log axis or when there are 10 or
 * fewer; else steps of 1, 2, 5 x 10^k, or of powers of two for sizes), labelled in binary prefixes when
 * bytes (64 KiB, 1 MiB), else in SI from 10000 on (16.4k, 1M). On an axis len font sizes long (0: any),
 * the ticks whose labels would come closer than a character to the previous one are left out. */
void report_plot_ticks(struct strbuf *gp, const char *axis, const double *grid, size_t n, int bytes, int logscale,
		       double len);
/* The unit of a metric or parameter sweep knows ("GB/s" for gbs), for an axis's label; NULL if none. */
const char *report_plot_unit(const char *name);
/* Whether key holds sizes in bytes: a parameter the sweep's kernel declares as a size, or one a command
 * sweep calls bytes (or NAME_bytes). */
int report_plot_key_bytes(const struct report_ctx *c, const char *key);
/* v as an axis labels it: a size in binary prefixes (64 KiB) when bytes, else a count in SI from 10000 on
 * (16.4k). */
void report_plot_label(double v, int bytes, char *buf, size_t n);
/* The characters of s (UTF-8: a continuation byte is no character), for the width of a label. */
size_t report_plot_chars(const char *s);
/* What the figures assume of the font: a character's width over the font's size (an upper bound for
 * digits and most letters of DejaVu Sans). */
#define PLOT_CHAR_W 0.62
/* A line of text as gnuplot spaces them (a margin's unit), in sizes of the font: 17 pixels at 11. */
#define PLOT_LINE_EM 1.57
/* The width of a panel at out (png, svg or pdf, from its extension) in sizes of its font. */
double report_plot_em(const char *out);
/* The width at which a legend's entry is wrapped. */
#define PLOT_WRAP 80
/* s wrapped at width characters (at spaces) as a gnuplot string expression: each line as report_plot_str
 * writes it (safe: nothing in single quotes is expanded), joined by ."\n". (a double-quoted string that
 * holds only the newline). Returns its lines. */
int report_plot_wrap(struct strbuf *sb, const char *s, size_t width);
/* The legend of a panel: nentry entries, the widest widest characters and each lines_each lines; the panel
 * col, row of a layout cols x rows; extra lines the x axis needs beyond a line of labels (labels turned
 * upright), below lines under the legend (footnotes). */
struct report_plot_key {
	double em;             /* report_plot_em */
	size_t nentry, widest;
	int lines_each;
	int col, row, cols, rows;
	int extra, below;
};
/* One more entry in k: its width (up to PLOT_WRAP) and its lines wrapped. */
void report_plot_key_add(struct report_plot_key *k, const char *title);
/* The lines a legend takes: its entries in the columns that fit the figure's width. */
int report_plot_key_lines(const struct report_plot_key *k);
/* "set key ..." and "set bmargin ...": the legend under the x axis's label, never over the plot, and the
 * bottom margin that holds the axis, the legend and the lines below it ("unset key" without entries). */
void report_plot_key(struct strbuf *gp, const struct report_plot_key *k);
/* Write the data and the script beside out (.dat, .gp) and render out with gnuplot; say: print what was
 * written (or, without gnuplot, how to render it) on stdout. None of the three is written over db, its side
 * files or another SQLite file (report_out_check). 0 when rendered, 1 when gnuplot is not installed,
 * FAIL_UNSAFE or FAIL_IO after error(). */
int report_plot_render(const char *db, const char *out, const char *dat, const char *gp, int say);

/* ---- report_figure.c ---- */

/*
 * d's table drawn as a figure at out (png, svg or pdf), its data and script beside it: a row per table row
 * from the top, labelled by its keys; the value as a point: the column with an interval (--compare's
 * ratio) with its bounds as a horizontal bar and a line at 1, else the last column (--limit's share) with
 * each --summary group's mean and 95 % t interval (d->summary's) as a band, else every number column but
 * counts. The data file holds the numbers as the table prints them for programs. say: as
 * report_plot_render, whose value it returns; 2 (nothing written) when no row has a value to draw.
 */
int report_figure_print(const struct report_plan *p, const struct report_doc *d, const char *out, int say);

/* ---- report_html.c ---- */

/* d as one self-contained HTML page at p->out.path or stdout: the table with its caption, marks and
 * footnotes, its figure inline as SVG (when it has one and gnuplot is installed) with the figure's data,
 * d's notes and warnings, the method and the conditions the numbers were measured under (d->conditions:
 * computed before, as everything the page prints). FAIL_UNSAFE or FAIL_IO after error(). */
int report_html_page(const struct report_plan *p, const struct report_doc *d);

#endif
