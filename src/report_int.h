/* report_int.h: the stages of a report that read the database or write the output (report.h says the
 * order), shared by src/report*.c and their unit tests: the plan, the statements, the printers. The rows
 * are report_rows.h's and the pure aggregation report_agg.h's: a pure stage includes only those. */
#ifndef SWEEP_REPORT_INT_H
#define SWEEP_REPORT_INT_H

#include "report.h"
#include "report_agg.h"
#include "report_rows.h"
#include "stats.h"

/* ---- report_ctx.c ---- */

/* "a, b, c" (the n names of v), or "none", appended to sb: what a message lists. */
void report_ctx_join(struct strbuf *sb, char *const *v, size_t n);

/* ---- report_plan.c: what the context and the options resolve to ---- */

/* What a printer is told besides its rows: the format, the significant digits (--digits; 0: each column's
 * own), the file (--out; NULL: stdout) and the databases that file must not be (report_out_open). */
struct report_out {
	const struct table_format *fmt;
	int digits;
	const char *path;
	const char *db, *base_db;
};

/* --compare KEY=A/B: the key compared and its two values (key NULL: no comparison). */
struct report_arms {
	const char *key, *a, *b;
};
/* A bootstrap interval: its level in (0, 1), resamples, seed and kind (--ci, --boot, --seed, --interval). */
struct report_boot {
	double ci;
	int resamples;
	uint64_t seed;
	enum stats_interval interval;
};
/* A figure: its keys (--x, --series, --facet), labels, scales and the interval on each point. */
struct report_look {
	const char *x, *series, *facet;
	const char *title, *xlabel, *ylabel;
	int logx, logy;
	int errors;                /* enum report_errors */
	double spread;             /* --spread as a fraction; 0: min-max */
};

/*
 * One report's plan: the options resolved once, the context it reads, and what they resolve to. Filled by
 * report_plan_init and the report_plan_* functions before the first statement, read-only after; no stage
 * reads the options themselves. The strings of the options are borrowed (the options outlive the plan);
 * those the plan makes are owned (report_plan_release).
 */
struct report_plan {
	const struct report_ctx *c;
	enum report_mode mode;
	const char *db;            /* the database read (sweep compare: the new one) */
	struct report_out out;     /* what the printers are told */
	char *pooled;              /* " and N, K": the --pool keys for a caption (report_print_pooled) */
	char *const *pool;         /* --pool: parameters aggregated over on purpose */
	int npool;
	const char *metric;        /* --metric as asked (tflops): the name the output uses; NULL for --drift */
	char *metric_base;         /* the stored metric (gflops for tflops), or "noise", "precision" */
	double metric_scale;       /* value = stored value * metric_scale */
	const char *metric_own;    /* the SQL of a figure of the results themselves (--metric noise or
				    * precision) over their columns, or NULL for a stored metric */
	const char *stat;          /* the statistic over passes (report_opts_stat's word) */
	const char *where;         /* --where EXPR, or NULL */
	const char *limit;         /* --limit EXPR, or NULL */
	int strict;                /* results marked imprecise left out */
	int items;                 /* a key is item: the metric's per-item values are read (items table) */
	char *const *asked;        /* --rows as given */
	int nasked;
	char **rows;               /* the row keys: --rows, then every parameter that varies inside a row */
	int nrows;
	char *const *cols;         /* --cols */
	int ncols;
	int summary;               /* --summary */
	const char *summary_by;    /* --summary=KEY's key, or NULL for one group */
	const char *unit_asked;    /* --unit KEY as given, or NULL */
	const char *unit;          /* a --summary's unit: a row key (in rows), or NULL for each row */
	struct report_arms arms;   /* --compare */
	const char *paired_by;     /* --paired-by item | KEY, or NULL (item) */
	struct report_boot boot;
	double threshold;          /* drift, noise and verdict threshold, a fraction */
	double fail_above;         /* --fail-above as a fraction, NaN when not given */
	double bar;                /* --score --bar as a percentage, NaN when not given */
	int better;                /* --better: enum better, BETTER_UNKNOWN when not given */
	int pair_params;           /* --pair-by params */
	int drop_first;            /* --drop-first */
	int conditions;            /* --conditions */
	const char *ledger;        /* --ledger FILE, or NULL */
	int figure;                /* the table drawn as a figure (sweep plot --compare, --limit) */
	struct report_look look;
	char **excluded;           /* hosts left out (--exclude-unstable) */
	size_t nexcluded;
	int superseded;            /* read the results --force or --replan superseded, not the ok ones (the
				    * base of `sweep compare DB DB --superseded`) */
	const char **cand;         /* report_plan_rows_later: the parameters the table asks whether they vary
				    * inside a row (the context's names; the array owned) */
	int ncand;
};
void report_plan_init(struct report_plan *p, const struct report_opts *o, const struct report_ctx *c);
void report_plan_release(struct report_plan *p);
/* Resolve o->metric (itself, a derived one: tflops = gflops / 1000, tbs, ms, us; or noise, precision).
 * FAIL_USAGE after error() naming the metrics there are, or for a figure of results in a report keyed by
 * item. */
int report_plan_metric(struct report_plan *p);
/* A report never aggregates over a parameter the user did not name: every parameter (in spec order) that
 * varies inside a group of the row keys, the column keys and the named extra keys (NULL ones skipped), and
 * is not in --pool, becomes a row key after --rows, with a note on stderr. Needs the metric. */
int report_plan_rows(struct report_plan *p, const char *const *extra, int nextra);
/* The same in the table's own statement rather than one of its own: the parameters that may vary inside a
 * row are kept in p->cand, the table asks of each (report_query_table's last columns), and
 * report_plan_split reads the answer. FAIL_USAGE after error() for a --pool key that is none. */
int report_plan_rows_later(struct report_plan *p, const char *const *extra, int nextra);
/* Drop p->cand's columns from the table's rows in; those that vary inside a row become row keys, with the
 * note report_plan_rows writes: 1 then (run the statement again), else 0. */
int report_plan_split(struct report_plan *p, struct report_rows *in);
/* The same for a plot, whose points are grouped by --x, --series and --facet: such a parameter is
 * refused (FAIL_USAGE), naming it. */
int report_plan_points(struct report_plan *p);
/* Build p's statement with build and run it into rows (initialised either way: release it). */
int report_plan_query(const struct report_plan *p,
		      int (*build)(const struct report_plan *, struct report_query *), struct report_rows *rows);
/* Both arms of --compare are values the compared key takes: a typo would otherwise give an empty
 * report. FAIL_USAGE naming the values there are, or when the compared key is item. */
int report_plan_arms(const struct report_plan *p);
/* The hosts --drift finds unstable (the reasons as notes) into p->excluded, for --exclude-unstable. */
int report_plan_exclude(struct report_plan *p);
/* A --summary's unit into p->unit, once the row keys are known: --unit KEY, which must be a row key (or
 * "row": each row); else host, else replica, when a row key; else each row. FAIL_USAGE after error() for
 * a --unit that is no row key. */
int report_plan_unit(struct report_plan *p);

/* ---- report_expr.c: SQL expressions of names, values and the user's expressions ---- */

/* Append "?N" to q for a new text parameter holding value. */
void report_expr_bind(struct report_query *q, const char *value);
/*
 * The SQL of a row or column key over the aliases r (results), c (cells), w (workers) and h (hosts):
 * host, gpu, pass, replica, sweep, label.NAME (hosts.facts $.labels.NAME), param.NAME or a parameter's
 * name; item is m.item, for a statement that joins the per-item values as m (a plan's items). FAIL_USAGE
 * after error() (with the known names) when key is none of these.
 */
int report_expr_key(const struct report_ctx *c, struct report_query *q, const char *key);
/*
 * "sweep_group(..." (store_keys.c) of the n keys (NULL ones skipped), left open for the caller's other
 * values (", x") and its ')': one integer for each distinct tuple of their values, to GROUP BY; the
 * parameters among them read once per distinct params. FAIL_USAGE after error() as report_expr_key.
 */
int report_expr_group(const struct report_ctx *c, struct report_query *q, const char *const *key, int n);
/* Whether key is the item of per-item values: "item", unless the sweep has a parameter of that name
 * (parameters keep their names; param.item is the same). */
int report_expr_is_item(const struct report_ctx *c, const char *key);
/* The SQL value of the plan's metric over the alias m: "m.value" or "(m.value * scale)". */
void report_expr_metric(const struct report_plan *p, struct report_query *q);
/* The stored metric and the factor for name: itself when the results store it, else a derived one. 1
 * when found, 0 (no message) when not. */
int report_expr_metric_lookup(const struct report_ctx *c, const char *name, const char **base,
			      double *scale);
/* Which way base, a metric sweep itself stores, improves (enum better (spec.h)): seconds lower, gflops, gbs
 * and a kernel's *_gbs higher, errors lower; BETTER_UNKNOWN for any other (a command's own). */
int report_expr_metric_better(const char *base);
/* The names in expr that are probes (owned list, for the join of report_query_probes). FAIL_USAGE after
 * error() for a bad expression. */
int report_expr_probes(const struct report_ctx *c, const char *expr, char ***names, size_t *n);

/* ---- report_expr_parse.c: a user expression's tokens, checked against its grammar ---- */

enum report_tok {
	TOK_KEYWORD,               /* AND OR NOT IN IS NULL BETWEEN LIKE CASE WHEN THEN ELSE END: upper case */
	TOK_FUNC,                  /* a function's name, lower case (a '(' follows) */
	TOK_NAME,                  /* a name, or a "name" (quotes undone): a key, a metric or a probe */
	TOK_NUM,                   /* a number as written */
	TOK_TEXT,                  /* 'text' (quotes undone): a bound value */
	TOK_OP,                    /* + - * / % < <= > >= = == != <> */
	TOK_OPEN, TOK_CLOSE, TOK_COMMA
};
struct report_token {
	enum report_tok kind;
	char *text;
	int col;                   /* where it starts in the expression, from 1 */
};
/*
 * Read the expression text (of the option what) into tokens and check them against the grammar the
 * docs/reports.md "Filters" allows (report_expr_parse.c writes it out), handing each token to emit, in order, as it is
 * taken; emit returns FAIL_OK or stops the reading with its failure. Any expression refused here would
 * have been refused by SQLite: FAIL_USAGE after error() with the column and what was expected (with a
 * hint when a word of the syntax is the name of one of c's parameters or metrics, which double quotes
 * make a name).
 */
int report_expr_parse(const struct report_ctx *c, const char *what, const char *text,
		      int (*emit)(void *arg, const struct report_token *t), void *arg);

/* ---- report_query.c: the statement of every report ---- */

/*
 * Each builds one statement into q (empty before): SQL and its bound values, nothing else. The columns
 * each returns are the contract with the aggregation that reads them, written at each function. A
 * statement reads only the sweep's ok results of cells that are not retired, passing --where, outside
 * the excluded hosts, and (--strict) not marked (STORE_IMPRECISE). FAIL_USAGE after error() for a bad key
 * or expression.
 */
/* The plain or pivoted table: row keys, column keys, stat(metric), count, [group], marked results. */
int report_query_table(const struct report_plan *p, struct report_query *q);
/* --conditions, --ledger: each result of the table: row keys, result id, cell key, params, value, and what
 * it was measured under: sweep version, commit, files (runs.inputs), host, gpu, worker conditions. */
int report_query_ledger(const struct report_plan *p, struct report_query *q);
/* Among the results of the table, --strict or not: the marked ones (STORE_IMPRECISE), and all of them. */
int report_query_marked(const struct report_plan *p, struct report_query *q);
/* The notes the table's results carry (results.note: "2 records of item r averaged") and how many results
 * carry each, the most carried first; the partial index results_noted finds them without reading the
 * others. */
int report_query_notes(const struct report_plan *p, struct report_query *q);
/* Drop from q's statement the joins of workers and hosts when nothing else in it reads them (w., h.): before
 * it runs. */
void report_query_trim(struct report_query *q);
/* The values the compared key takes (as text, "NULL" for none), sorted. */
int report_query_arms(const struct report_plan *p, struct report_query *q);
/* --compare KEY=A/B: one row, whether results of A are there (1 or 0), and of B; cheaper than the arms. */
int report_query_arms_found(const struct report_plan *p, struct report_query *q);
/* --compare, one row per row key, [group], unit and arm: row keys, [group], in A, in B, unit, the mean of
 * the unit over passes, the passes (results) it holds, marked results. Units are items, or the values of
 * --paired-by KEY. */
int report_query_compare(const struct report_plan *p, struct report_query *q);
/* --limit: row keys, [group], count, stat(metric), stat(limit), then stat(metric) and stat(limit) over the
 * results that have both, per joined probe the hosts without it (comma-separated), marked results. */
int report_query_limit(const struct report_plan *p, struct report_query *q);
/* --score: row keys, metric, blind, n, mean(err^2), mean(err), predictions not measured yet. */
int report_query_score(const struct report_plan *p, struct report_query *q);
/* --score's predictions with a measure, one row each: metric, blind (1, or 0 for late), predicted, measured;
 * by metric, blind first, then predicted. */
int report_query_score_pairs(const struct report_plan *p, struct report_query *q);
/* --drift: the control runs: host, run, rank, gpu, params, median, noise, by worker and in time order. */
int report_query_drift(const struct report_plan *p, struct report_query *q);
/* Whether a summary's rows share hosts: the distinct (row keys, group, host) of the table's results, and
 * the distinct (group, host); more of the first than the second means a host in two rows of a group. */
int report_query_shared(const struct report_plan *p, struct report_query *q);
/* A plot: facet, series, x, stat(metric), count, and the point's interval (--errors): low, high; an
 * interval of the median (ci) FAIL_USAGE where results keep none or the metric does not follow the time. */
int report_query_plot(const struct report_plan *p, struct report_query *q);
/* sweep compare, one side: the nkey keys (key: names report_expr_key knows), the unit (item name, pass or
 * sample index), the mean of the metric over the unit's results in one replicate, marked results, the
 * replicate ("pass/run": a pass of a run); a row per unit and replicate, ordered by keys, unit and
 * replicate. The pass is never a key: cells that differ only in pass are one cell of the comparison. */
int report_query_baseline(const struct report_plan *p, enum report_unit unit, const char *const *key, int nkey,
			  struct report_query *q);
/* Per candidate parameter, 2 when it takes more than one value inside a group of keys (NULL keys skipped),
 * else 1. */
int report_query_varying(const struct report_plan *p, const char *const *keys, int nkeys,
			 const char *const *cand, int ncand, struct report_query *q);

/* ---- report_rows.c: what a statement's rows are read into ---- */

/* The rows of q's statement on c, columns named as SQLite names them. FAIL_IO after error(). r is
 * initialised either way (release it). */
int report_rows_fetch(const struct report_ctx *c, const struct report_query *q, struct report_rows *r);

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

/* The points of report_agg_points as a data file and a gnuplot script beside o->out, rendered by gnuplot
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

/* d as one self-contained HTML page at o->out or stdout: the table with its caption, marks and footnotes,
 * its figure inline as SVG (when it has one and gnuplot is installed) with the figure's data, d's notes
 * and warnings, the method and the conditions the numbers were measured under (d->conditions: computed
 * before, as everything the page prints).
 * FAIL_UNSAFE or FAIL_IO after error(). */
int report_html_page(const struct report_plan *p, const struct report_doc *d);

#endif
