/* report_plan.h: the plan of a report (report_plan.c): the options resolved once, the context, the keys
 * and the metric they resolve to, and what the printers are told. Every later stage reads the plan, never
 * the options (tests/layers.py). The statements are report_query.h's, the printers report_print.h's. */
#ifndef SWEEP_REPORT_PLAN_H
#define SWEEP_REPORT_PLAN_H

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
	const char *paired_by;     /* --paired-by item | KEY: item unless given */
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
/* Resolve p->metric (itself, a derived one: tflops = gflops / 1000, tbs, ms, us; or noise, precision).
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

#endif
