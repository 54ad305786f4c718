/* report_agg.h: the pure stages of a report, rows in and rows out (report_agg.c, report_pair.c,
 * report_verdict.c): no database, no output, no message but the notes they leave. */
#ifndef SWEEP_REPORT_AGG_H
#define SWEEP_REPORT_AGG_H

#include <stdint.h>

#include "better.h"
#include "report_rows.h"
#include "stats.h"
#include "util.h"

/* ---- report_agg.c, report_pair.c: pure aggregation, rows in and rows out ---- */

/*
 * The table of report_query_table's rows (nkey row keys called keys, ncolkey column keys called colkeys,
 * grouped: a group column): without column keys the row keys, n and the metric; with them the row keys
 * and one column per combination of column keys ("N=256 K=8", in SQLite's order), its row's values laid
 * out under them. A value resting on a marked result (STORE_IMPRECISE) is marked. out is initialised.
 */
void report_agg_table(const struct report_rows *in, const char *const *keys, int nkey,
		      const char *const *colkeys, int ncolkey, const char *group, const char *metric,
		      struct report_rows *out);
/* The marked results (STORE_IMPRECISE) the table's rows rest on (the sum of the marked column). */
long report_agg_marked(const struct report_rows *in);
/* The candidates of report_query_varying's one row that vary (take more than one value in a group), in
 * order: an owned list of *n names. */
char **report_agg_varying(const struct report_rows *in, const char *const *cand, int ncand, int *n);

/* The statistics of a --summary, one row each, in this order. */
enum report_sum { SUM_MEDIAN, SUM_MIN, SUM_MAX, SUM_MEAN, SUM_LO, SUM_HI, SUM_N, NSUM };
extern const char *const report_sum_name[NSUM];
/*
 * The --summary of rows: per group (each group of in->group in order, or all rows when in->group is -1)
 * and statistic, one row: stat (text), group (text, unknown for all rows), then one column per number
 * column of in (same names, a count or a column marked nosum left unknown), holding the median, min,
 * max, mean, its 95 % Student t interval and n over the group's units: one value per unit, the mean of
 * its rows' values (a unit without a value left out). The units are the values of in's key column named
 * unit (unknown is one), each row when unit is NULL: the sample is the machines of a table of machines,
 * not their rows. A group with fewer than 5 units is warned of in nt and its interval marked MARK_CAVEAT.
 * Rows of an unknown group are in no summary. in's rows are read in order; sort them by group first.
 */
void report_agg_summary(const struct report_rows *in, const char *unit, struct report_rows *out,
			struct report_notes *nt);

/* --limit: report_query_limit's rows (nkey keys, a group when group) as the table n, metric, limit, share,
 * the share being stat(metric) / stat(limit) over the results that have both (its one rule); per probe of
 * joined, a note naming the hosts without it. */
void report_agg_limit(const struct report_rows *in, const char *const *keys, int nkey, const char *group,
		      const char *metric, const char *const *joined, size_t njoined, struct report_rows *out,
		      struct report_notes *nt);

/* --drift: report_query_drift's rows as one row per worker (and set of control parameters; its first run
 * left out when drop_first and it has more): host, run, worker, gpu, n, medians (a series, in time
 * order), reference (their median), drift (max |median / reference - 1|) and noise (the largest a run
 * stored; without any, as for a command's runs of one sample, the relative standard deviation of the
 * medians; NaN for one run), both fractions. */
void report_agg_drift(const struct report_rows *in, int drop_first, struct report_rows *out);
/* Why a worker of report_agg_drift is unstable at threshold ("drift 4.1% > 3%"), or NULL. Owned. */
char *report_agg_unstable(const struct report_rows *workers, size_t row, double threshold);
/* The table of the workers: host, run, worker, gpu, n, median_s (the reference), ratio_over_time (up to 8
 * ratios to it, spread evenly, first and last included), max_drift_%, noise_%, status; *nunstable counts
 * the unstable. */
void report_agg_drift_table(const struct report_rows *workers, double threshold, struct report_rows *out,
			    int *nunstable);

/* What a --score reports besides its table. */
struct report_score_counts {
	int pending;               /* predicted results not measured yet */
	int groups, met;           /* groups judged against --bar, and those that met it */
};
/* --score: report_query_score's rows (nkey keys) as keys, metric, predictions (blind or late), n,
 * rms_err_%, mean_err_% and, with a bar (not NaN), met or missed; rows without a result left out. */
void report_agg_score(const struct report_rows *in, const char *const *keys, int nkey, double bar,
		      struct report_rows *out, struct report_score_counts *counts);

/* A plot's points: report_query_plot's rows that have an x and a value: facet, series, x, y, n, lo, hi. */
void report_agg_points(const struct report_rows *in, struct report_rows *out);

/* --compare: how units are paired and the ratio computed. Two arms of rows paired by a key: nothing here
 * knows where the rows came from. */
struct report_pairing {
	const char *const *keys;   /* the row keys, for notes ("host=a model=m") */
	int nkey;
	const char *group;         /* the --summary group, or NULL */
	const char *key, *a, *b;   /* the compared key and its arms */
	const char *metric;
	double ci;                 /* interval level, (0, 1) */
	int boot;                  /* resamples; 0: the ratio alone */
	uint64_t seed;
	enum stats_pair_stat stat; /* the ratio of means (default) or the geometric mean of the ratios */
	enum stats_interval interval;      /* percentile (default) or BCa */
};
/* The columns of a ratio A/B after the keys: count (a count of pairs), METRIC_a, METRIC_b, ratio (its
 * interval's cell for reading headed "a/b [95% CI]"), ci_lo, ci_hi. Returns the count's column. */
int report_pair_cols(struct report_rows *out, const char *count, const char *metric, const char *a, const char *b,
		     double ci);
/*
 * report_query_compare's rows (ordered by row key, then unit) as one row per row key: the keys, [the
 * group], n (pairs), each arm over the pairs (the mean; the geometric mean for the geometric mean of
 * ratios), the statistic A/B of pp->stat and its bootstrap interval resampling pairs (stats_paired_ci;
 * none for one pair). A unit in one arm only is left out with a note, as is a row with no result in an
 * arm; a zero mean of B gives no ratio, with a note. A ratio to read with care is marked MARK_CAVEAT and
 * warned of in nt, one warning per reason naming its rows: fewer than 5 pairs, fewer than 1000 resamples,
 * a value <= 0 in an arm, a unit with unequal passes in the two arms, an undefined BCa interval.
 */
void report_pair(const struct report_rows *in, const struct report_pairing *pp, struct report_rows *out,
		 struct report_notes *nt);

/* Rows a warning names: the first ten, then a count. Zeroed to start; sb released by the user. */
struct report_warned {
	struct strbuf sb;
	size_t n;
};
void report_warned_add(struct report_warned *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The rows of a warning, "a; b and 3 more". Owned. */
char *report_warned_list(const struct report_warned *w);
/* Fewer pairs than this, or fewer resamples than REPORT_BOOT_FEW: the interval is marked and warned of. */
#define REPORT_FEW_PAIRS 5
#define REPORT_BOOT_FEW 1000
/* The warnings and footnote caveats both comparisons share (report --compare, sweep compare): the rows
 * resting on fewer than REPORT_FEW_PAIRS pairs (few), and a --boot under REPORT_BOOT_FEW (0: none). */
void report_warn_few(struct report_notes *nt, const struct report_warned *few, int boot);

/* ---- report_verdict.c: sweep compare's pairing and verdict, pure ---- */

/*
 * The verdict on a ratio NEW/BASE with its interval [lo, hi], on the slowdown (the ratio for a metric where
 * lower is better, its inverse where higher is) and its interval: "slower" when the whole interval lies
 * above 1 + threshold (a fraction: 0.02), "faster" when it lies wholly below 1 / (1 + threshold),
 * "unchanged" when it lies wholly within [1 / (1 + threshold), 1 + threshold], else "inconclusive". NULL
 * (no verdict) when the direction is unknown or there is no interval.
 */
const char *report_verdict(double ratio, double lo, double hi, int better, double threshold);
/* Whether NEW is slower by more than above (a fraction; NaN: never) with the whole interval past it. */
int report_verdict_worse(double ratio, double lo, double hi, int better, double above);

/* How sweep compare pairs and judges. */
struct report_baseline {
	const char *const *keys;   /* the keys cells are paired by, named as in the rows */
	int nkey;
	const char *metric;
	double ci;                 /* interval level, (0, 1) */
	int boot;
	uint64_t seed;
	int better;                /* enum better (spec.h) */
	double threshold;          /* the verdict's, a fraction */
	double fail_above;         /* --fail-above as a fraction, NaN when not given */
};
struct report_baseline_counts {
	size_t only_base, only_new;    /* cells on one side only */
	size_t worse;                  /* rows slower than fail_above */
};
/*
 * report_query_baseline's rows of both sides (the same keys) as one row per cell of both: the keys, pairs
 * (pairs of units), the mean of BASE and of NEW over the pairs, the ratio NEW/BASE with its percentile
 * bootstrap interval resampling pairs (none under 2 pairs) and the verdict. Rows are in NEW's order. A
 * cell on one side only is a note naming it and its value; units without a partner are counted in a note.
 */
void report_baseline(const struct report_rows *base, const struct report_rows *nw,
		     const struct report_baseline *bl, struct report_rows *out, struct report_baseline_counts *counts,
		     struct report_notes *nt);

#endif
