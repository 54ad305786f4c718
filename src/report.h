/* report.h: the reports of a database, as the commands call them (src/builtin/report.c, plot.c, predict.c,
 * and run and retry for --where). A report runs one way, each stage reading the one before and changing
 * nothing of it: the command line parsed into struct report_opts (builtin/, report.c), a read-only
 * context (report_ctx.c), the plan (report_plan.c), the statement (report_query.c over report_expr.c), its
 * rows (report_rows.c), pure aggregation (report_agg.c, report_pair.c), one printer (report_print.c over
 * table.c's formats; report_plot.c for gnuplot); report_run.c runs them per mode. One header a stage:
 * report_plan.h the plan, report_query.h the statements, report_print.h the printers, report_rows.h the
 * rows they pass on, report_agg.h the pure stages. */
#ifndef SWEEP_REPORT_H
#define SWEEP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "exitcode.h"
#include "stats.h"
#include "store.h"
#include "report_rows.h"
#include "table.h"
#include "util.h"

enum report_mode {
	REPORT_TABLE,              /* the plain and pivoted tables */
	REPORT_COMPARE,            /* --compare KEY=A/B: paired ratios with a bootstrap interval */
	REPORT_LIMIT,              /* --limit EXPR: shares of a limit from probes */
	REPORT_DRIFT,              /* --drift: control cells over time */
	REPORT_SCORE,              /* --score: predictions against results */
	REPORT_PLOT                /* sweep plot: a metric against a key, through gnuplot */
};

/*
 * The command line of a report, filled by the command and read-only after: no stage writes it. Strings
 * point into argv, except the lists and the compared key and arms, which report_opts_release frees.
 */
struct report_opts {
	enum report_mode mode;
	const char *db;
	const char *sweep;         /* --sweep, or NULL for the only sweep with results */
	char **rows, **cols;       /* --rows and --cols keys */
	int nrows, ncols;
	char **pool;               /* --pool KEYS: parameters aggregated over on purpose */
	int npool;
	const char *metric;        /* --metric (--y of a plot); NULL for --drift, optional for --score */
	const char *stat;          /* what report_opts_stat takes for the mode: median (mean for --compare) unless
				    * --stat */
	const char *where;         /* --where EXPR, or NULL */
	const char *out;           /* --out FILE, or NULL for stdout */
	const struct table_format *fmt;
	int digits;                /* significant digits: 0 for 4 (3 for ratios), %.6g for programs */
	int strict;                /* --strict: results marked (STORE_IMPRECISE) left out */
	int conditions;            /* --conditions: what the table's numbers were measured under, after it */
	const char *ledger;        /* --ledger FILE: every number with its conditions and provenance */
	int summary;               /* --summary[=KEY] */
	const char *summary_by;    /* the KEY of --summary=KEY, or NULL for one group */
	const char *unit;          /* --unit KEY: one value per KEY (a row key; "row": each row) in a summary;
				    * NULL: host, else replica, when a row key, else each row */
	int drop_first;            /* --drop-first: each worker's first control run left out of the drift */
	int exclude_unstable;      /* leave out the hosts --drift calls unstable */
	double threshold;          /* drift and noise threshold, a fraction (0.03) */

	char *cmp_key, *cmp_a, *cmp_b;     /* --compare KEY=A/B */
	const char *paired_by;     /* --paired-by item | KEY (default item) */
	double ci;                 /* interval level in (0, 1) */
	int boot;                  /* bootstrap resamples */
	uint64_t seed;
	enum stats_interval interval;      /* --interval percentile | bca */

	const char *base_db;       /* sweep compare: BASE (db is NEW) */
	int superseded;            /* sweep compare DB DB --superseded: base is the results --force superseded */
	int better;                /* --better: enum better (spec.h), BETTER_UNKNOWN when not given */
	double fail_above;         /* --fail-above PCT as a fraction; NaN when not given */
	int pair_params;           /* --pair-by params: cells paired by their parameters alone, not the host */

	const char *limit;         /* --limit EXPR */
	double bar;                /* --score --bar PCT as a percentage; NaN when not given */

	/* sweep plot */
	const char *x, *series, *facet, *title, *xlabel, *ylabel;
	int logx, logy;
	int errors;                /* enum report_errors: the interval drawn on each point */
	double spread;             /* --spread PCT as a fraction: the central range of the values; 0: min-max */
	int figure;                /* sweep plot --compare or --limit: the report's table drawn as a figure */
};
/* The interval on each point of a plot (--errors): the spread of the values the point aggregates (min-max,
 * or a central percentile range), none, or the interval of the median that results keep (ci_lo, ci_hi). */
enum report_errors { ERRORS_SPREAD, ERRORS_NONE, ERRORS_CI };
/* ---- report.c: the options ---- */

/* The defaults: median, Markdown, a 95 % interval of 10000 resamples with seed 1, threshold 3 %. */
void report_opts_init(struct report_opts *o);
void report_opts_release(struct report_opts *o);
/* --compare KEY=A/B into cmp_key, cmp_a, cmp_b, after the other options; FAIL_USAGE after error() for
 * another shape, or a compared key that is a row key or --paired-by. */
int report_opts_compare(struct report_opts *o, const char *arg);
/* Split "a,b,c" into owned strings; FAIL_USAGE after error() for an empty element. */
int report_opts_split(const char *what, const char *list, char ***out, int *n);
/*
 * FAIL_OK when mode takes stat: a table median, mean, geomean, min, max, stdev, cv (stdev / mean) or pNN
 * (the NNth percentile, 0 <= NN <= 100: p90, p99.9); --limit and a plot the first five; --compare mean
 * (the ratio of means) or geomean (the geometric mean of the ratios); --drift and --score none. Else
 * FAIL_USAGE after error() saying what the mode takes.
 */
int report_opts_stat(const char *stat, enum report_mode mode);
/* The percentile of a --stat pNN as a fraction in [0, 1], or NaN for another statistic. */
double report_opts_percentile(const char *stat);
/* A percentage given as 95 or 0.95, as a fraction in (0, 1) (--ci, --spread); FAIL_USAGE after error(). */
int report_opts_level(const char *opt, const char *s, double *out);
/* A number option: parsed, in [min, max], or FAIL_USAGE after error() saying what it takes ("--boot takes
 * 100 to 10000000 resamples"). */
int report_opts_number(const char *arg, long min, long max, const char *takes, long *out);
/* The bootstrap's options, name "ci" (a level), "boot" (100 to 10000000 resamples) or "seed" (an integer),
 * into o. FAIL_USAGE after error() for a bad value. */
int report_opts_bootstrap(struct report_opts *o, const char *name, const char *arg);
/* --interval percentile|bca into o->interval; FAIL_USAGE after error() for another word. */
int report_opts_interval(struct report_opts *o, const char *arg);
/* --errors none|spread|ci into o->errors; FAIL_USAGE after error() for another word. */
int report_opts_errors(struct report_opts *o, const char *arg);

/* --out's extension says its format (.md, .csv, .tex, .json, .txt, .html), unless --format was given. */
void report_opts_out_format(struct report_opts *o, int fmt_given);

/* ---- report_print.c, report_run.c: the report ---- */

/* Whether path (NULL: stdout), the output named what in messages ("--out"), may be written:
 * store_output_check's rule (never over a database, its side files, another file SQLite made or the
 * database db being read). FAIL_OK, or FAIL_UNSAFE after error() when it may not or cannot be checked. */
int report_out_check(const char *what, const char *path, const char *db);
/*
 * The report o asks for (any mode), printed to o->out or stdout (a plot: its files, and what was written
 * on stdout); notes on stderr. Returns an enum fail: FAIL_USAGE when the input cannot be reported (a
 * name, an expression, nothing left by the filters), FAIL_IO when SQL, a file or gnuplot failed.
 */
int report_run(const struct report_opts *o);

/* ---- report_compare.c ---- */

/*
 * `sweep compare`: the sweep's results in o->base_db and o->db (or, o->superseded, the superseded and the
 * ok results of o->db) paired cell by cell, the ratio NEW/BASE with its interval and a verdict, printed as
 * a report; the cells of one side only and the conditions that differ as notes. An enum fail: FAIL_WORSE
 * when a row is slower than o->fail_above (the table printed), else as report_run.
 */
int report_compare(const struct report_opts *o);

/* ---- report_predict.c ---- */

/*
 * `sweep predict`: the predictions of the CSV file at path (see its help) matched to the cells of db
 * (of sweep_arg, when the file has no sweep column and db more than one sweep) and registered with the
 * file's sha256 and the time; late allows cells that already have a result (marked not blind). Returns an
 * enum fail: FAIL_USAGE when the file or a prediction is refused (nothing registered), FAIL_IO on a
 * failure of the file or the database.
 */
int report_predict(const char *db, const char *path, const char *sweep_arg, int late);
/*
 * One record of a CSV file (RFC 4180: quoted fields with "" for a quote, CRLF or LF). *pos advances past
 * the record; the fields are owned by the caller (free each, then the array). Returns the number of
 * fields, 0 at the end of text, -1 with a reason in err for an unterminated quote.
 */
int report_csv_record(const char *text, size_t *pos, char ***fields, char *err, size_t errlen);

/* ---- report_ctx.c: the read-only context of a report ---- */

/* The database and the sweep a report reads, resolved once by report_ctx_open and read-only after. The
 * lists are sorted, NULL-terminated and owned (report_ctx_release). */

struct report_ctx {
	struct store *st;
	const char *db;
	char *sweep;               /* the sweep reported on */
	char **params;             /* its parameters */
	char **spec_order;         /* the same in the spec's order (a cell's), for notes and added row keys */
	char **metrics;            /* the metrics its ok results stored */
	char **probes;             /* the probe names of the database (any host) */
	size_t nparams, nmetrics, nprobes;
	int materialize;           /* SQLite knows "AS MATERIALIZED" (3.35) */
	char *kernel;              /* the sweep's kernel, NULL for a command sweep */
	int median_ci;             /* results keep the interval of their median (results.ci_lo, ci_hi) */
	struct report_order *orders;   /* the parameters with text values, in their spec's order */
	size_t norders;
	struct report_better {     /* which way each metric the spec declares improves (enum better) */
		char *metric;
		int better;
	} *betters;
	size_t nbetters;
};
/* The order of param (NULL: none, it sorts as SQLite sorts values). */
const struct report_order *report_ctx_order(const struct report_ctx *c, const char *param);
/* Which way metric improves as the stored spec declares it (its better:, else its unit), BETTER_UNKNOWN
 * when the spec says nothing of it. */
int report_ctx_better(const struct report_ctx *c, const char *metric);
/* Open db read-only and choose the sweep: sweep when given, else the only one with results (or the only
 * one). Says on stderr how many of its cells are retired (left out of reports). An enum fail: store_open's
 * kind for a path that is no sweep database (FAIL_MISSING, FAIL_NOT_SWEEP, FAIL_CORRUPT), FAIL_USAGE for
 * a sweep that is not there or a choice to make; FAIL_IO when SQL fails. c is released by
 * report_ctx_release whatever this returns. */
int report_ctx_open(struct report_ctx *c, const char *db, const char *sweep);
void report_ctx_release(struct report_ctx *c);

/* ---- report_query.c: a statement being built ---- */

/* SQL text and its text parameters ?1 .. ?nbind, in the order they appear (report_expr_bind). Owned:
 * report_query_release. */
struct report_query {
	struct strbuf sql;
	char **binds;
	size_t nbind, alloc_binds;
	char **joined;             /* probes joined as rp0, rp1, ... (report_query_probes) */
	size_t njoined;
	size_t hosts_at, hosts_len;        /* where the joins of workers and hosts are in sql (report_query_trim) */
	struct strbuf final;       /* when not empty: sql is the part of store_query_split, this its final */
	size_t slice_at;           /* the part's ?N of the first results.id of a slice (?N+1: the last) */
};
#define REPORT_QUERY_INIT { STRBUF_INIT, NULL, 0, 0, NULL, 0, 0, 0, STRBUF_INIT, 0 }
void report_query_release(struct report_query *q);

/* ---- report_expr.c: user expressions ---- */

enum report_expr_flags {
	EXPR_PROBES = 1            /* names may be probes of the result's host (--limit) */
};
/*
 * Translate a user expression into SQL appended to q. Only names, numbers, 'text', the operators
 * + - * / % < <= > >= = == != <>, parentheses, commas, AND OR NOT IN IS NULL BETWEEN LIKE CASE and a few
 * functions (abs, min, max, round, coalesce, sqrt, pow, exp, ln, log, log2, log10, floor, ceil) are
 * accepted; anything else is refused. Names become SQL of a key (host, gpu, pass, replica, sweep,
 * label.NAME, param.NAME or a parameter), a metric of the result, or (EXPR_PROBES) a probe of its host.
 * Text goes in as a bound parameter, never into the SQL. Division is always real ("M / K" does not
 * truncate). what names the option in messages ("--where"). FAIL_USAGE after error().
 */
int report_expr_sql(const struct report_ctx *c, struct report_query *q, const char *what, const char *expr,
		    int flags);

#endif
