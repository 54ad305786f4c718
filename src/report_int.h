/* report_int.h: the stages of a report (report.h says the order), shared by src/report*.c and their unit
 * tests: the plan, the statements, the rows, the pure aggregation functions and the printer. */
#ifndef SWEEP_REPORT_INT_H
#define SWEEP_REPORT_INT_H

#include "report.h"
#include "stats.h"

struct report_rows;

/* ---- report_ctx.c ---- */

/* "a, b, c" (the n names of v), or "none", appended to sb: what a message lists. */
void report_ctx_join(struct strbuf *sb, char *const *v, size_t n);

/* ---- report_plan.c: what the context and the options resolve to ---- */

/*
 * One report's plan: the options and the context it reads, and what they resolve to. Filled by the
 * report_plan_* functions before the first statement, read-only after. The strings and lists are owned
 * (report_plan_release).
 */
struct report_plan {
	const struct report_opts *o;
	const struct report_ctx *c;
	char *metric_base;         /* the stored metric (gflops for tflops), or "noise", "precision" */
	double metric_scale;       /* value = stored value * metric_scale */
	const char *metric_own;    /* the SQL of a figure of the results themselves (--metric noise or
				    * precision) over their columns, or NULL for a stored metric */
	int items;                 /* a key is item: the metric's per-item values are read (items table) */
	char **rows;               /* the row keys: --rows, then every parameter that varies inside a row */
	int nrows;
	char **excluded;           /* hosts left out (--exclude-unstable) */
	size_t nexcluded;
	const char *unit;          /* a --summary's unit: a row key (in rows), or NULL for each row */
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
/* Whether any result of the database has a note (one row, 1 or 0), then the notes the table's results
 * carry (results.note: "2 records of item r averaged") and how many results carry each, the most carried
 * first. */
int report_query_noted(const struct report_plan *p, struct report_query *q);
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
/* What sweep compare pairs within a cell: its items (averaged over passes), its passes, or its samples. */
enum report_unit { UNIT_ITEM, UNIT_PASS, UNIT_SAMPLE };
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

/* ---- report_rows.c: rows, and the notes a stage leaves ---- */

enum report_col_kind {
	RCOL_KEY,                  /* text of a key: for reading "-" for unknown, a blank-edged value quoted */
	RCOL_LABEL,                /* text: for reading "-" for unknown */
	RCOL_TEXT,                 /* text as it is; unknown empty */
	RCOL_NUM,                  /* a number */
	RCOL_SERIES,               /* numbers separated by spaces (%.17g), each printed as a number */
	RCOL_NOTE                  /* text for programs only (CSV, JSON): what a footnote says of the row for
				    * reading, which leaves the column out */
};
struct report_col {
	char *name;
	enum report_col_kind kind;
	int sig;                   /* NUM, SERIES: significant digits (4 unless set); 0 prints a count */
	int nosum;                 /* NUM: left out of --summary (a count) */
	int align;                 /* NUM: 0, or a group number: the columns of one group (one unit) print
				    * with the same decimals for reading; -1: each value with its own digits */
	int ci;                    /* NUM: followed by its interval's bounds, one cell with them for reading */
};
/*
 * Rows of typed cells: what a statement returns (every cell as text and as a number), what aggregation
 * makes of it and what a printer prints. Owns every string; report_rows_release.
 */
struct report_rows {
	int ncol;
	struct report_col *col;
	size_t n, alloc_text, alloc_num, alloc_mark;
	char **text;               /* n * ncol: NULL for unknown */
	double *num;               /* n * ncol: NaN for unknown or not a number */
	unsigned char *mark;       /* n * ncol: its marks (enum report_mark) */
	int group;                 /* the column of the --summary group, or -1 */
	char *ci_head;             /* the heading of an interval's cell for reading ("a/b [95% CI]") */
	const struct report_order *orders;   /* fetched rows: the context's text orders (borrowed), by which a
					      * pivot sorts its columns as SQL sorted the rows */
	size_t norders;
};
void report_rows_init(struct report_rows *r);
void report_rows_release(struct report_rows *r);
/* Add a column (kind, 4 significant digits); returns its index. Only before the first row. */
int report_rows_col(struct report_rows *r, const char *name, enum report_col_kind kind);
/* Add a row of unknown cells; returns its index. */
size_t report_rows_add(struct report_rows *r);
void report_rows_set_text(struct report_rows *r, size_t row, int col, const char *s);
void report_rows_set_num(struct report_rows *r, size_t row, int col, double v);
/* What a value's mark says; a printer shows MARK_IMPRECISE as table mark 0 (a precise column for programs),
 * MARK_CAVEAT as table mark 1 with report_notes' caveats as its footnote. */
enum report_mark {
	MARK_IMPRECISE = 1,        /* rests on a result whose median misses its precision (STORE_IMPRECISE) */
	MARK_CAVEAT = 2            /* a statistic to read with care: a warning on stderr says why */
};
void report_rows_mark(struct report_rows *r, size_t row, int col, enum report_mark kind);
static inline const char *report_rows_text(const struct report_rows *r, size_t row, int col)
{
	return r->text[row * (size_t)r->ncol + (size_t)col];
}
static inline double report_rows_num(const struct report_rows *r, size_t row, int col)
{
	return r->num[row * (size_t)r->ncol + (size_t)col];
}
/* A series cell: the numbers as text (%.17g, which reads back exact), and read back (owned, *n of them). */
void report_rows_set_series(struct report_rows *r, size_t row, int col, const double *v, size_t n);
double *report_rows_series(const struct report_rows *r, size_t row, int col, size_t *n);
/* A key's value for reading: an empty or blank-edged value in double quotes, so that "" and " " are not
 * both an empty cell (or an empty "v=" heading). Owned. */
char *report_rows_quote(const char *s);
/* The --summary group: the key column called by, else a new RCOL_LABEL column by (call it after the keys,
 * before the values). Sets r->group; returns its index. */
int report_rows_group(struct report_rows *r, const char *by);
/* Order the rows by their group (unknown first), keeping the order within a group. */
void report_rows_sort_group(struct report_rows *r);
/* Whether row a of x and row b of y have the same first nkey cells (as text; unknown equals unknown only). */
int report_rows_same_keys(const struct report_rows *x, size_t a, const struct report_rows *y, size_t b, int nkey);
/* "host=a model=m": the first nkey cells of row j named by keys, for notes; "all" without keys. Owned. */
char *report_rows_name(const struct report_rows *r, size_t j, const char *const *keys, int nkey);
/* Drop the last n columns of every row. */
void report_rows_drop(struct report_rows *r, int n);
/* The rows of q's statement on c, columns named as SQLite names them. FAIL_IO after error(). r is
 * initialised either way (release it). */
int report_rows_fetch(const struct report_ctx *c, const struct report_query *q, struct report_rows *r);

/*
 * Remarks a pure stage leaves, printed by the caller in order on stderr: notes ("note: ...") and warnings
 * ("sweep: warning: ..."), the statistics a table must not be read without; and the caveats, the reasons
 * values carry MARK_CAVEAT, each once, for the table's footnote.
 */
struct report_notes {
	char **v;
	unsigned char *warn;       /* v[i] is a warning */
	size_t n, alloc, alloc_warn;
	char **caveat;
	size_t ncaveat;
};
void report_notes_add(struct report_notes *nt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_notes_warn(struct report_notes *nt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add why some values carry MARK_CAVEAT ("an interval rests on fewer than 5 pairs"), unless said. */
void report_notes_caveat(struct report_notes *nt, const char *why);
/* The caveats joined for a footnote ("a; b"), or NULL without any. Owned. */
char *report_notes_caveats(const struct report_notes *nt);
void report_notes_print(const struct report_notes *nt);
void report_notes_release(struct report_notes *nt);
/* "note: ..." on stderr at once: remarks that must not end up inside a CSV or JSON table. */
void report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

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
/* Print d in o->fmt to o->out or stdout. FAIL_UNSAFE or FAIL_IO after error(). */
int report_print(const struct report_opts *o, const struct report_doc *d);
/* The same into f: the caption (or method), the table and the footnote. */
void report_print_to(const struct report_opts *o, const struct report_doc *d, FILE *f);
/* o->out opened for writing into w->f (append: after what it holds) as store_out_open writes it (a
 * temporary file renamed into place by report_out_close; report_out_check's rule against o->db and
 * o->base_db), or stdout; closed (stdout flushed) with the error of any write, the old file intact.
 * FAIL_UNSAFE or FAIL_IO after error(). */
int report_out_open(const struct report_opts *o, int append, struct store_out *w);
int report_out_close(const struct report_opts *o, struct store_out *w);
/* v as a report prints it in fmt: with digits (--digits; else sig) significant digits for reading, %.6g
 * (or digits) and empty for unknown for programs; a count (sig 0) as an integer. The format and the
 * digits are all it reads of the options. */
void report_print_num(const struct table_format *fmt, int digits, double v, int sig, char *buf, size_t n);
/* " and N, K" (the --pool keys, for a title: "median over passes and N"), or "". Owned. */
char *report_print_pooled(const struct report_opts *o);

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
void report_plot_num(const struct report_opts *o, double v, int sig, struct strbuf *sb);
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
