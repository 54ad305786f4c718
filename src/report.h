/* report.h: the reports of a database (report*.c): the core every report shares (report.c, report_expr.c)
 * below the reports themselves (tables, compare, limit, drift, score, plot, predictions), which the
 * commands in src/builtin/ call. */
#ifndef SWEEP_REPORT_H
#define SWEEP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"
#include "table.h"
#include "util.h"

/*
 * One report: the options of the command line and what was looked up in the database. Strings of the
 * options point into argv; the lists (params, metrics, probes, excluded, binds) are owned and freed by
 * report_release.
 */
struct report {
	struct store *st;
	const char *db;
	const char *sweep_arg;     /* --sweep, or NULL */
	char *sweep;               /* the sweep reported on (owned, set by report_open) */
	char **rows, **cols;       /* row and column keys (owned, split from "a,b") */
	int nrows, ncols;
	char **pool;               /* --pool KEYS: parameters aggregated over on purpose (owned) */
	int npool;
	int strict;                /* --strict: results marked (STORE_IMPRECISE) left out */
	int metric_noise;          /* the metric is the results' own noise (--metric noise) */
	long noisy;                /* results marked (STORE_IMPRECISE) in the report (-1: not counted) */
	const char *metric;        /* as asked; see metric_base and metric_scale */
	const char *stat;          /* median | mean | geomean | min | max */
	const char *where;         /* --where EXPR, or NULL */
	const char *out;           /* --out FILE, or NULL for stdout */
	enum table_format fmt;
	int digits;                /* significant digits: 0 for 4 (3 for ratios), %.6g in csv and json */

	const char *compare;       /* --compare KEY=A/B */
	const char *paired_by;     /* --paired-by item | KEY (default item) */
	double ci;                 /* (0, 1) */
	int boot;
	uint64_t seed;

	const char *limit;         /* --limit EXPR */
	int summary;               /* --summary[=KEY] */
	const char *summary_by;    /* the KEY of --summary=KEY, or NULL for one group */
	int exclude_unstable;
	double threshold;          /* drift and noise threshold, a fraction (0.03) */
	int drift, score;
	double bar;                /* --bar PCT as a percentage; NaN when not given */

	/* Looked up by report_prepare. */
	char *metric_base;         /* the stored metric name (gflops for tflops) */
	double metric_scale;       /* value = stored value * metric_scale */
	char **params, **metrics, **probes;
	size_t nparams, nmetrics, nprobes;
	char **excluded;           /* hostnames left out by --exclude-unstable */
	size_t nexcluded, alloc_excluded;

	int materialize;           /* SQLite knows "AS MATERIALIZED" (3.35) */
	char **joined;             /* probes joined as rp0, rp1, ... (JOIN_PROBES); an expression reads
				    * them from there, others through a subquery */
	size_t njoined;

	/* Text parameters of the statement being built: ?1 .. ?nbind. */
	char **binds;
	size_t nbind, alloc_binds;
};

/* ---- report.c, report_table.c ---- */

/* Open the database read-only, choose the sweep (the only one with results unless given) and look up
 * its parameters, metrics and the probe names. -1 after error(). */
int report_open(struct report *r);
void report_release(struct report *r);
/* Append "?N" to sql for a new text parameter holding value. */
void report_bind(struct report *r, struct strbuf *sql, const char *value);
/* Forget the parameters (before building another statement). */
void report_binds_reset(struct report *r);
/* The stored metric and the factor for name: itself when the results store it, else a derived one
 * (tflops = gflops / 1000, tbs, ms, us). 1 when found, 0 (no message) when not. */
int report_metric_lookup(const struct report *r, const char *name, const char **base, double *scale);
/*
 * report_rows.c. A report never aggregates over a parameter the user did not name: every parameter (in spec order)
 * that varies inside a group of the row keys, the column keys and the named extra keys, and is not in
 * --pool, is appended to r->rows, with a note on stderr. Needs the metric resolved. -1 after error().
 */
int report_unpooled(struct report *r, const char *const *extra, int nextra);
/* The parameters (spec order, owned list) that vary inside a group of keys, less --pool's. -1 after
 * error(). */
int report_varying(struct report *r, const char *const *keys, int nkeys, char ***out, int *nout);
/* " and N, K" (the --pool keys, for a title: "median over passes and N"), or "" (static storage). */
const char *report_pooled(const struct report *r);
/* Resolve name into r->metric_base and r->metric_scale; -1 after error() (with the metrics there are). */
int report_metric(struct report *r, const char *name);
/* The SQL value of the resolved metric: "m.value" or "(m.value * scale)". */
void report_metric_value(struct report *r, struct strbuf *sql);
/*
 * Append the SQL expression of a row/column key over the aliases r (results), c (cells), w (workers) and
 * h (hosts): host, gpu, pass, replica, sweep, label.NAME (hosts.facts $.labels.NAME), param.NAME or a
 * parameter's name. -1 after error() (with the known names) when key is none of these.
 */
int report_key_sql(struct report *r, const char *key, struct strbuf *sql);
/*
 * Append "FROM results r JOIN cells c ... WHERE r.status = 'ok' AND c.sweep = ... " with --where and the
 * excluded hosts; join adds metrics m (the resolved metric of each result) or items i (its per-item
 * values) and the probes an expression uses. -1 after error() (bad --where).
 */
enum report_join {
	JOIN_NONE = 0,
	JOIN_METRIC = 1,           /* m: the resolved metric of each result */
	JOIN_ITEMS = 2,            /* i: its per-item values */
	JOIN_PROBES = 4            /* rp0, rp1, ...: the probes in r->joined (needs report_probes_cte) */
};
int report_from(struct report *r, struct strbuf *sql, int join);
/* report_rows.c: the results STORE_IMPRECISE marks among those report_from(JOIN_METRIC) selects without
 * --strict, into r->noisy; a note on stderr when --strict leaves them out (how many of how many). -1 after
 * error(). */
int report_count_noisy(struct report *r);
/* With --strict, when it left out every result there was: 1 after error() saying so (a report finds
 * nothing else to say "no ok results"), also when counting them failed; else 0. */
int report_strict_emptied(struct report *r);
/* The SQL aggregate of --stat ("median", "avg", ...). */
const char *report_stat_sql(const char *stat);
/* 0 when stat is one --stat takes (median, mean, geomean, min, max); else -1 after error(). */
int report_stat_check(const char *stat);
/* Format v with the report's digits (sig when digits is 0 and the format is for reading). */
void report_num(const struct report *r, double v, int sig, char *buf, size_t n);
/* "note: ..." on stderr: remarks that must not end up inside a CSV or JSON table. */
void report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Split "a,b,c" into owned strings; -1 after error() for an empty element. */
int report_split(const char *what, const char *list, char ***out, int *n);

/*
 * The table a report builds before it is printed: key columns (text) and value columns (numbers), one
 * value column a ratio followed by its interval (printed "1.03 [1.02, 1.04]" in md, text and LaTeX), and
 * an optional summary group per row for --summary.
 */
struct rtab {
	int nkeys, nvals;
	char **keyname, **valname;     /* owned */
	int *sig;                      /* per value column: significant digits; 0 for counts */
	int *nosum;                    /* per value column: left out of --summary (counts) */
	int *dgroup;                   /* per value column: columns of one non-zero group (one unit) are
					* printed with the same decimals */
	int ci_at;                     /* value column of a ratio followed by lo and hi, or -1 */
	const char *ci_head;           /* header of the merged ratio column */
	size_t n, alloc_key, alloc_val, alloc_group;
	char **key;                    /* n * nkeys, owned; NULL prints as "-" */
	double *val;                   /* n * nvals; NaN prints as "-" */
	char **group;                  /* n, owned, when --summary groups rows */
	unsigned char *noisy;          /* n * nvals: the value holds a result above its noise target */
	size_t alloc_noisy;
};
void rtab_init(struct rtab *t, int nkeys, const char *const *keyname, int nvals,
	       const char *const *valname);
/* Mark value column col of the last row: it holds a result above its noise target. */
void rtab_noisy(struct rtab *t, int col);
/* Add a row; group may be NULL. Copies the strings. */
void rtab_add(struct rtab *t, const char *const *key, const double *val, const char *group);
void rtab_release(struct rtab *t);
/* Print t (and the --summary rows) in the report's format to --out or stdout, under caption (md and
 * text only; may be NULL). -1 after error(). */
int report_print(struct report *r, const struct rtab *t, const char *caption);
/* Whether --out may be written: never over an SQLite file or the database being read. -1 after
 * error() when it may not (or cannot be checked). */
int report_out_check(const struct report *r);
/* Open --out (or stdout) and close it; -1 after error(). */
int report_out_open(struct report *r, FILE **f);
int report_out_close(struct report *r, FILE *f);

/* ---- report_expr.c ---- */

enum report_expr_flags {
	EXPR_PROBES = 1            /* names may be probes of the result's host (--limit) */
};
/*
 * Translate a user expression into SQL appended to sql. Only names, numbers, 'text', the operators
 * + - * / % < <= > >= = == != <>, parentheses, commas, AND OR NOT IN IS NULL BETWEEN LIKE and a few
 * functions (abs, min, max, round, coalesce, sqrt, pow, exp, ln, log, log2, log10, floor, ceil) are
 * accepted; anything else is refused. Names become SQL of a key (report_key_sql), a metric of the
 * result, or (EXPR_PROBES) a probe of its host. Text goes in as a bound parameter, never into the SQL.
 * Division is always real ("M / K" does not truncate). what names the option in messages ("--where").
 * -1 after error().
 */
int report_expr_sql(struct report *r, const char *what, const char *expr, int flags, struct strbuf *sql);
/* "WITH report_probes AS (...) ": the table probe names in an EXPR_PROBES expression read; a statement
 * using such an expression starts with it. Sets r->joined to the probes expr uses, for report_from's
 * JOIN_PROBES (faster than a subquery per result). -1 after error() (a bad expression). */
int report_probes_cte(struct report *r, const char *expr, struct strbuf *sql);
/* The names an expression uses that are probes, for messages about missing probes (owned list). */
int report_expr_probes(struct report *r, const char *expr, char ***names, size_t *n);

/* ---- the reports ---- */

int report_table(struct report *r);        /* report_table.c: the plain and pivoted tables */
int report_compare(struct report *r);      /* report_compare.c */
int report_limit(struct report *r);        /* report_limit.c */
int report_drift(struct report *r);        /* report_drift.c */
int report_score(struct report *r);        /* report_score.c */
/* The hosts the drift check flags, with the reason, for --exclude-unstable: appended to r->excluded
 * (and reasons printed as notes). 0 or -1 after error(). */
int report_unstable_hosts(struct report *r);

/* ---- report_plot.c ---- */

struct plot_opts {
	const char *x, *series, *facet, *title, *xlabel, *ylabel;
	int logx, logy;
};
/*
 * r->metric against o->x, one line per o->series value and one panel per o->facet value: r->out's
 * data (.dat) and gnuplot script (.gp) written beside it, then rendered (r->out ends in .png, .svg or
 * .pdf) unless gnuplot is missing (then the command to render them is printed). Opens r. Returns 0, -1
 * after error() when the input cannot be plotted (a name, no data), -2 after error() when SQL, a file or
 * gnuplot failed.
 */
int report_plot(struct report *r, const struct plot_opts *o);

/* ---- report_predict.c ---- */

/*
 * `sweep predict`: the predictions of the CSV file at path (see its help) matched to the cells of db
 * (of sweep_arg, when the file has no sweep column and db more than one sweep) and registered with the
 * file's sha256 and the time; late allows cells that already have a result (marked not blind). Returns
 * 0, -1 after error() when the file or a prediction is refused (nothing registered), -2 on a failure of
 * the database.
 */
int report_predict(const char *db, const char *path, const char *sweep_arg, int late);

/*
 * One record of a CSV file (RFC 4180: quoted fields with "" for a quote, CRLF or LF). *pos advances past
 * the record; the fields are owned by the caller (free each, then the array). Returns the number of
 * fields, 0 at the end of text, -1 with a reason in err for an unterminated quote.
 */
int report_csv_record(const char *text, size_t *pos, char ***fields, char *err, size_t errlen);

#endif
