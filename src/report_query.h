/* report_query.h: the statements of a report (report_query.c over report_expr.c and report_expr_parse.c)
 * and the rows they are read into (report_rows.c): what reads the database, after the plan. */
#ifndef SWEEP_REPORT_QUERY_H
#define SWEEP_REPORT_QUERY_H

#include "report_plan.h"

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
/*
 * The same for a statement grouped by report_expr_group_once: a key of the result's worker or host (host,
 * gpu, label.NAME) read by its worker (r.worker) in a subquery, once per group rather than through the
 * joins of each row; any other key as report_expr_key.
 */
int report_expr_key_once(const struct report_ctx *c, struct report_query *q, const char *key);
/* report_expr_group with the keys of the worker or host (host, gpu, label.NAME) replaced by one, r.worker:
 * each group is of one worker, which report_expr_key_once reads. */
int report_expr_group_once(const struct report_ctx *c, struct report_query *q, const char *const *key, int n);
/* The collation report_expr_key gives key (a parameter in its spec's order), or NULL. */
const char *report_expr_key_collation(const struct report_ctx *c, const char *key);
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

#endif
