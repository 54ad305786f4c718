/* report_query.c: the statement of every report, SQL and its bound values: the FROM ... WHERE they share
 * (the sweep, --where, the excluded hosts, --strict) and one SELECT per mode. Nothing runs here. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report_query.h"

/* A result carries the mark when its median is not known to the precision asked (STORE_IMPRECISE): the one
 * place a report says so in SQL. */
static const char marked_sql[] = STORE_IMPRECISE("r");

void report_query_release(struct report_query *q)
{
	sb_release(&q->sql);
	for (size_t i = 0; i < q->nbind; i++)
		free(q->binds[i]);
	free(q->binds);
	for (size_t i = 0; i < q->njoined; i++)
		free(q->joined[i]);
	free(q->joined);
	sb_release(&q->final);
	memset(q, 0, sizeof(*q));
}

/* What a statement joins to the results r, the cells c, the workers w and the hosts h. */
enum join {
	JOIN_NONE = 0,
	JOIN_METRIC = 1,           /* m: the plan's metric of each result (of each item, for p->items) */
	JOIN_ITEMS = 2,            /* m: its per-item values, m.item the item */
	JOIN_PROBES = 4,           /* rp0, rp1, ...: the probes in q->joined (report_query_probes) */
	JOIN_SAMPLES = 8,          /* s: its timed samples */
	JOIN_SLICE = 16            /* the results of a slice only (q->slice_at: store_query_split) */
};

/*
 * Append "FROM results r JOIN cells c ... WHERE r.status = 'ok' AND c.sweep = ..." with --where, the
 * excluded hosts and (strict) the results not marked.
 */
static int from(const struct report_plan *p, struct report_query *q, int join, int strict)
{
	int ret;

	sb_adds(&q->sql, " FROM results r JOIN cells c ON c.id = r.cell");
	q->hosts_at = q->sql.len;
	sb_adds(&q->sql, " LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host");
	q->hosts_len = q->sql.len - q->hosts_at;
	if ((join & JOIN_METRIC) && p->metric_own) {
		/* a figure of the result itself (its noise, its precision), as if it were a stored metric */
		sb_addf(&q->sql, " JOIN (SELECT id AS result, value FROM (SELECT id, %s AS value FROM results)"
			" WHERE value IS NOT NULL) m ON m.result = r.id", p->metric_own);
	} else if ((join & JOIN_ITEMS) || ((join & JOIN_METRIC) && p->items)) {
		sb_adds(&q->sql, " JOIN items m ON m.result = r.id AND m.metric = ");
		report_expr_bind(q, p->metric_base);
	} else if (join & JOIN_METRIC) {
		sb_adds(&q->sql, " JOIN metrics m ON m.result = r.id AND m.name = ");
		report_expr_bind(q, p->metric_base);
	}
	if (join & JOIN_SAMPLES)
		sb_adds(&q->sql, " JOIN samples s ON s.result = r.id");
	for (size_t i = 0; (join & JOIN_PROBES) && i < q->njoined; i++) {
		sb_addf(&q->sql, " LEFT JOIN report_probes rp%zu ON rp%zu.worker = r.worker AND rp%zu.name = ",
			i, i, i);
		report_expr_bind(q, q->joined[i]);
	}
	/* Retired cells (no longer in the spec: sweep run --replan) keep their results, out of reports. */
	sb_addf(&q->sql, " WHERE r.status = '%s' AND c.state <> 'retired' AND c.sweep = ",
		p->superseded ? "superseded" : "ok");
	report_expr_bind(q, p->c->sweep);
	if (strict)
		sb_addf(&q->sql, " AND NOT (%s)", marked_sql);
	if (p->where) {
		sb_adds(&q->sql, " AND (");
		if ((ret = report_expr_sql(p->c, q, "--where", p->where, 0)))
			return ret;
		sb_addc(&q->sql, ')');
	}
	if (p->nexcluded) {
		sb_adds(&q->sql, " AND coalesce(h.hostname, '') NOT IN (");
		for (size_t i = 0; i < p->nexcluded; i++) {
			if (i)
				sb_addc(&q->sql, ',');
			report_expr_bind(q, p->excluded[i]);
		}
		sb_addc(&q->sql, ')');
	}
	if (join & JOIN_SLICE) {
		sb_adds(&q->sql, " AND r.id BETWEEN ");
		report_expr_bind(q, "0");
		q->slice_at = q->nbind;
		sb_adds(&q->sql, " AND ");
		report_expr_bind(q, "0");
	}
	return FAIL_OK;
}

/* Whether sql[from, to) names the alias w or h ("w.gpu", "h.hostname"; not "ph.id" or "w2.id"). */
static int names_hosts(const char *sql, size_t from, size_t to)
{
	for (size_t i = from; i + 1 < to; i++)
		if ((sql[i] == 'w' || sql[i] == 'h') && sql[i + 1] == '.' &&
		    (i == 0 || !(isalnum((unsigned char)sql[i - 1]) || sql[i - 1] == '_')))
			return 1;
	return 0;
}

void report_query_trim(struct report_query *q)
{
	struct strbuf *sb = &q->sql;
	size_t at = q->hosts_at, n = q->hosts_len;

	/* SQLite leaves out an unused LEFT JOIN only without GROUP BY or ORDER BY; a lookup of each of a
	 * million rows in two tables costs a tenth of a report */
	if (!n || names_hosts(sb->buf, 0, at) || names_hosts(sb->buf, at + n, sb->len))
		return;
	memmove(sb->buf + at, sb->buf + at + n, sb->len - at - n + 1);
	sb->len -= n;
	q->hosts_at = q->hosts_len = 0;
}

/* "k1, k2, " for each key, or the first failure. */
static int keys(const struct report_plan *p, struct report_query *q, const char *const *key, int n,
		const char *sep)
{
	int ret;

	for (int i = 0; i < n; i++) {
		if ((ret = report_expr_key(p->c, q, key[i])))
			return ret;
		sb_adds(&q->sql, sep);
	}
	return FAIL_OK;
}

/* keys() read once per group (report_expr_key_once), for a statement grouped by report_expr_group_once. */
static int keys_once(const struct report_plan *p, struct report_query *q, const char *const *key, int n)
{
	int ret;

	for (int i = 0; i < n; i++) {
		if ((ret = report_expr_key_once(p->c, q, key[i])))
			return ret;
		sb_adds(&q->sql, ", ");
	}
	return FAIL_OK;
}

/*
 * " GROUP BY sweep_group(...)" (report_expr_group_once): the rows of equal keys together, by one integer rather
 * than by the keys, which SQLite sorts more slowly and, for a parameter, reads from the JSON of each row;
 * each key, equal within a group, is read from one of its rows, and ORDER BY puts the groups in the keys'
 * order. n keys, NULL ones skipped.
 */
static int group_by(const struct report_plan *p, struct report_query *q, const char *const *key, int n)
{
	int ret;

	sb_adds(&q->sql, " GROUP BY ");
	if ((ret = report_expr_group_once(p->c, q, key, n)))
		return ret;
	sb_addc(&q->sql, ')');
	return FAIL_OK;
}

/* " GROUP BY 1, 2" or " ORDER BY 1, 2" into sb (a statement or a final): the column numbers 1..n, then the
 * extra ones (> 0). */
static void by(struct strbuf *sb, const char *what, int n, int extra1, int extra2)
{
	sb_addf(sb, " %s ", what);
	for (int i = 0; i < n; i++)
		sb_addf(sb, "%s%d", i ? ", " : "", i + 1);
	if (extra1 > 0)
		sb_addf(sb, "%s%d", n ? ", " : "", extra1);
	if (extra2 > 0)
		sb_addf(sb, ", %d", extra2);
}

/* Final's "cN" of a key (NULL: none), in the key's collation (report_expr_key_collation). */
static void final_key(const struct report_plan *p, struct report_query *q, const char *key, int col)
{
	const char *coll = key ? report_expr_key_collation(p->c, key) : NULL;

	sb_addf(&q->final, "c%d%s%s", col, coll ? " COLLATE " : "", coll ? coll : "");
}

/* Final's "SELECT c1, c2, " of the part's first n columns, the keys (final_key). */
static void final_keys(const struct report_plan *p, struct report_query *q, const char *const *key, int n)
{
	sb_adds(&q->final, "SELECT ");
	for (int i = 0; i < n; i++) {
		final_key(p, q, key[i], i + 1);
		sb_adds(&q->final, ", ");
	}
}

/* Final's "sweep_stat(...)" of the plan's --stat over the values in column col; of sweep_pairs' k-th
 * selection for k >= 0. */
static void stat_final(const struct report_plan *p, struct report_query *q, int col, int k)
{
	double pct = report_opts_percentile(p->stat);

	sb_addf(&q->final, "sweep_stat('%s', %.17g, c%d", isnan(pct) ? stats_def_find(p->stat)->name : "quantile",
		isnan(pct) ? 0 : pct, col);
	if (k >= 0)
		sb_addf(&q->final, ", %d", k);
	sb_addc(&q->final, ')');
}

/*
 * The table in slices (store_query_split). The part: row keys, column keys, the metric's values
 * (sweep_values), count, [group], marked results, and per candidate whether it varies and one of its
 * values; grouped, per slice. The final, over the slices' rows grouped again by the keys: row keys, column
 * keys, stat(metric) (sweep_stat), count, [group], marked results, 1 + whether each candidate varies.
 */
int report_query_table(const struct report_plan *p, struct report_query *q)
{
	int nr = p->nrows, nc = p->ncols, ng = p->summary_by ? 1 : 0, nk = nr + nc + ng, at = nr + nc + 3 + ng;
	const char **key = xcalloc((size_t)nk + 1, sizeof(*key));
	int ret;

	/* p->rows or p->cols is NULL when it holds no key: memcpy may not be given NULL */
	if (nr)
		memcpy(key, p->rows, (size_t)nr * sizeof(*key));
	if (nc)
		memcpy(key + nr, p->cols, (size_t)nc * sizeof(*key));
	if (ng)
		key[nr + nc] = p->summary_by;
	sb_adds(&q->sql, "SELECT ");
	if ((ret = keys_once(p, q, key, nr + nc)))
		goto out;
	sb_adds(&q->sql, "sweep_values(");
	report_expr_metric(p, q);
	sb_adds(&q->sql, "), count(m.value)");
	if (ng) {
		sb_adds(&q->sql, ", ");
		if ((ret = report_expr_key_once(p->c, q, p->summary_by)))
			goto out;
	}
	sb_addf(&q->sql, ", sum(%s)", marked_sql);
	/* report_plan_rows_later's question, answered in the same pass: 2 when it varies inside a row */
	for (int i = 0; i < p->ncand; i++)
		for (int k = 0; k < 2; k++) {
			sb_adds(&q->sql, k ? ", min(" : ", sweep_varies(");
			if ((ret = report_expr_key(p->c, q, p->cand[i])))
				goto out;
			sb_addc(&q->sql, ')');
		}
	if ((ret = from(p, q, JOIN_METRIC | JOIN_SLICE, p->strict)) || (nk && (ret = group_by(p, q, key, nk))))
		goto out;

	final_keys(p, q, key, nr + nc);
	stat_final(p, q, nr + nc + 1, -1);
	sb_addf(&q->final, ", sum(c%d)", nr + nc + 2);
	if (ng) {
		sb_adds(&q->final, ", ");
		final_key(p, q, p->summary_by, nr + nc + 3);
	}
	sb_addf(&q->final, ", sum(c%d)", at);
	for (int i = 0; i < p->ncand; i++)
		sb_addf(&q->final, ", 1 + (max(c%d) OR sweep_varies(c%d))", at + 1 + 2 * i, at + 2 + 2 * i);
	sb_adds(&q->final, " FROM temp.sweep_part");
	if (nk) {
		by(&q->final, "GROUP BY", nr + nc, ng ? nr + nc + 3 : 0, 0);
		/* a row's cells (row keys and summary group) come together, its columns after */
		by(&q->final, "ORDER BY", nr, ng ? nr + nc + 3 : 0, 0);
		for (int i = nr; i < nr + nc; i++)
			sb_addf(&q->final, "%s%d", i || ng ? ", " : "", i + 1);
	}
out:
	free(key);
	return ret;
}

int report_query_ledger(const struct report_plan *p, struct report_query *q)
{
	int nr = p->nrows, ret;

	sb_adds(&q->sql, "SELECT ");
	if ((ret = keys(p, q, (const char *const *)p->rows, nr, ", ")))
		return ret;
	sb_adds(&q->sql, "r.id, c.key, c.params, ");
	report_expr_metric(p, q);
	sb_adds(&q->sql, ", (SELECT version FROM runs WHERE id = r.run), (SELECT revision FROM runs WHERE id = r.run),"
		" (SELECT inputs FROM runs WHERE id = r.run), h.hostname, w.gpu, w.conditions, h.facts,"
		" json_extract(h.facts, '$.labels')");
	if ((ret = from(p, q, JOIN_METRIC, p->strict)))
		return ret;
	by(&q->sql, "ORDER BY", nr, nr + 1, 0);
	return FAIL_OK;
}

int report_query_marked(const struct report_plan *p, struct report_query *q)
{
	int ret;

	/* distinct: a result has a row per item in a report keyed by item */
	sb_addf(&q->sql, "SELECT count(DISTINCT CASE WHEN %s THEN r.id END), count(DISTINCT r.id)", marked_sql);
	if ((ret = from(p, q, JOIN_METRIC, 0)))
		return ret;
	return FAIL_OK;
}

int report_query_notes(const struct report_plan *p, struct report_query *q)
{
	int ret;

	sb_adds(&q->sql, "SELECT r.note, count(DISTINCT r.id)");
	if ((ret = from(p, q, JOIN_METRIC, p->strict)))
		return ret;
	sb_adds(&q->sql, " AND r.note IS NOT NULL GROUP BY r.note ORDER BY 2 DESC, 1");
	return FAIL_OK;
}

/* "CAST(key AS TEXT) = ?arm": whether a result is in that arm. The key was checked by report_plan_arms. */
static void arm_test(const struct report_plan *p, struct report_query *q, const char *arm)
{
	sb_adds(&q->sql, "CAST(");
	report_expr_key(p->c, q, p->arms.key);
	sb_adds(&q->sql, " AS TEXT) = ");
	report_expr_bind(q, arm);
}

int report_query_arms_found(const struct report_plan *p, struct report_query *q)
{
	int ret;

	/* each EXISTS stops at the first result of its arm */
	for (int b = 0; b < 2; b++) {
		sb_adds(&q->sql, b ? ", EXISTS (SELECT 1" : "SELECT EXISTS (SELECT 1");
		if ((ret = from(p, q, JOIN_NONE, p->strict)))
			return ret;
		sb_adds(&q->sql, " AND ");
		arm_test(p, q, b ? p->arms.b : p->arms.a);
		sb_addc(&q->sql, ')');
	}
	return FAIL_OK;
}

int report_query_arms(const struct report_plan *p, struct report_query *q)
{
	int ret;

	sb_adds(&q->sql, "SELECT DISTINCT CAST(");
	if ((ret = report_expr_key(p->c, q, p->arms.key)))
		return ret;
	sb_adds(&q->sql, " AS TEXT)");
	if ((ret = from(p, q, JOIN_NONE, p->strict)))
		return ret;
	sb_adds(&q->sql, " ORDER BY 1");
	return FAIL_OK;
}

/* The unit a comparison pairs: m.item, or the --paired-by key as text. */
static int unit_sql(const struct report_plan *p, struct report_query *q, int by_item)
{
	int ret;

	if (by_item) {
		sb_adds(&q->sql, "m.item");
		return FAIL_OK;
	}
	sb_adds(&q->sql, "CAST(");
	if ((ret = report_expr_key(p->c, q, p->paired_by)))
		return ret;
	sb_adds(&q->sql, " AS TEXT)");
	return FAIL_OK;
}

static int compare_sql(const struct report_plan *p, struct report_query *q, const char *const *key, int nkey,
		       int by_item)
{
	const char **gkey;
	int ret;

	sb_adds(&q->sql, "SELECT ");
	if ((ret = keys_once(p, q, key, nkey)))
		return ret;
	arm_test(p, q, p->arms.a);
	sb_adds(&q->sql, ", ");
	arm_test(p, q, p->arms.b);
	sb_adds(&q->sql, ", ");
	if ((ret = unit_sql(p, q, by_item)))
		return ret;
	sb_adds(&q->sql, ", sweep_values(");
	report_expr_metric(p, q);
	sb_adds(&q->sql, "), count(m.value)");
	sb_addf(&q->sql, ", sum(%s)", marked_sql);
	if ((ret = from(p, q, (by_item ? JOIN_ITEMS : JOIN_METRIC) | JOIN_SLICE, p->strict)))
		return ret;
	sb_adds(&q->sql, " AND CAST(");
	report_expr_key(p->c, q, p->arms.key);
	sb_adds(&q->sql, " AS TEXT) IN (");
	report_expr_bind(q, p->arms.a);
	sb_adds(&q->sql, ", ");
	report_expr_bind(q, p->arms.b);
	sb_adds(&q->sql, ")");
	/* the keys and the compared key (a parameter read once per params, like the keys), of whose text the
	 * arm tests are functions; the unit. The final groups by the arm tests. */
	gkey = xcalloc((size_t)nkey + 2, sizeof(*gkey));
	memcpy(gkey, key, (size_t)nkey * sizeof(*gkey));
	gkey[nkey] = p->arms.key;
	sb_adds(&q->sql, " GROUP BY ");
	ret = report_expr_group_once(p->c, q, gkey, nkey + 1);
	free(gkey);
	if (ret)
		return ret;
	sb_adds(&q->sql, ", ");
	unit_sql(p, q, by_item);
	sb_addc(&q->sql, ')');
	/* the final: the slices' groups of one unit and arm merged, the mean over all their values */
	final_keys(p, q, key, nkey);
	sb_addf(&q->final, "c%d, c%d, c%d, sweep_stat('mean', 0, c%d), sum(c%d), sum(c%d) FROM temp.sweep_part",
		nkey + 1, nkey + 2, nkey + 3, nkey + 4, nkey + 5, nkey + 6);
	by(&q->final, "GROUP BY", nkey + 3, 0, 0);
	/* the keys, the unit, then b's row before a's, as grouping by every column ordered them */
	by(&q->final, "ORDER BY", nkey, nkey + 3, nkey + 1);
	sb_addf(&q->final, ", %d", nkey + 2);
	return FAIL_OK;
}

int report_query_compare(const struct report_plan *p, struct report_query *q)
{
	int nkey = p->nrows + (p->summary_by ? 1 : 0), ret;
	const char **key = xcalloc((size_t)nkey + 1, sizeof(*key));

	if (p->nrows)
		memcpy(key, p->rows, (size_t)p->nrows * sizeof(*key));
	key[p->nrows] = p->summary_by;
	ret = compare_sql(p, q, key, nkey, !strcmp(p->paired_by, "item"));
	free(key);
	return ret;
}

int report_query_baseline(const struct report_plan *p, enum report_unit unit, const char *const *key, int nkey,
			  struct report_query *q)
{
	static const int join[] = { [UNIT_ITEM] = JOIN_ITEMS, [UNIT_PASS] = JOIN_METRIC,
				    [UNIT_SAMPLE] = JOIN_SAMPLES };
	int ret;

	sb_adds(&q->sql, "SELECT ");
	if ((ret = keys(p, q, key, nkey, ", ")))
		return ret;
	if (unit == UNIT_ITEM) {
		sb_addf(&q->sql, "m.item, avg(m.value * %.17g)", p->metric_scale);
	} else if (unit == UNIT_PASS) {
		sb_adds(&q->sql, "c.pass, avg(");
		report_expr_metric(p, q);
		sb_adds(&q->sql, ")");
	} else {
		/* samples are times: report_compare asks for them only for seconds and what derives from it */
		sb_addf(&q->sql, "s.i, avg(s.seconds * %.17g)", p->metric_scale);
	}
	/* the replicate: a pass of a run (a day's, a host's), whose units may all shift together */
	sb_addf(&q->sql, ", sum(%s), c.pass || '/' || coalesce(r.run, 0)", marked_sql);
	if ((ret = from(p, q, join[unit], p->strict)))
		return ret;
	by(&q->sql, "GROUP BY", nkey + 1, nkey + 4, 0);
	by(&q->sql, "ORDER BY", nkey + 1, nkey + 4, 0);
	return FAIL_OK;
}

/*
 * "WITH report_probes AS (...) ": the table the probe names of a --limit expression read; joined as rp0,
 * rp1, ... for the probes the expression uses (q->joined), faster than a subquery per result. Its host is
 * the worker's hostname (or "(unknown host)"), for the note of the hosts without the probe.
 */
static int probes_cte(const struct report_plan *p, struct report_query *q)
{
	int ret;

	if ((ret = report_expr_probes(p->c, p->limit, &q->joined, &q->njoined)))
		return ret;
	/* Per worker and probe name, the newest value measured on the worker's host: the worker's own GPU
	 * first, then a host-wide probe (gpu NULL), then any GPU of that host. Hosts are matched by name:
	 * facts that change (a driver update) make a new hosts row for the same machine. Computed once for
	 * the few workers rather than for each of a million results; SQLite cannot use an outer row in a
	 * subquery's ORDER BY, so the preference and the id are packed into one number for max(). */
	sb_addf(&q->sql, "WITH report_probes AS %s(SELECT w2.id AS worker, pn.name AS name,"
		" (SELECT value FROM probes WHERE id = (SELECT max(((p.gpu IS w2.gpu) * 2 + (p.gpu IS NULL))"
		" * 4294967296 + p.id) %% 4294967296 FROM probes p JOIN hosts ph ON ph.id = p.host"
		" WHERE ph.hostname = (SELECT hostname FROM hosts WHERE id = w2.host) AND p.value IS NOT NULL"
		" AND p.name = pn.name)) AS value,"
		" coalesce((SELECT hostname FROM hosts WHERE id = w2.host), '(unknown host)') AS host"
		" FROM workers w2, (SELECT DISTINCT name FROM probes) AS pn) ",
		p->c->materialize ? "MATERIALIZED " : "");
	return FAIL_OK;
}

static int limit_sql(const struct report_plan *p, struct report_query *q, const char *const *key, int nkey)
{
	int at = nkey + 3 + (int)q->njoined, ret;

	/* The limit is computed for each result (its host's probes, its parameters and metrics), then the
	 * row aggregates the metric and the limit alike; the share is the statistic of the metric over that
	 * of the limit, of the results that have both (report_agg_limit divides). One pass: each result's
	 * metric and limit go as a pair (sweep_pairs), whose four statistics the final takes. */
	if ((ret = probes_cte(p, q)))
		return ret;
	sb_adds(&q->sql, "SELECT ");
	if ((ret = keys_once(p, q, key, nkey)))
		return ret;
	sb_adds(&q->sql, "count(");
	report_expr_metric(p, q);
	sb_adds(&q->sql, "), sweep_pairs(");
	report_expr_metric(p, q);
	sb_adds(&q->sql, ", (");
	if ((ret = report_expr_sql(p->c, q, "--limit", p->limit, EXPR_PROBES)))
		return ret;
	sb_adds(&q->sql, "))");
	for (size_t i = 0; i < q->njoined; i++)
		sb_addf(&q->sql, ", group_concat(DISTINCT CASE WHEN rp%zu.value IS NULL"
			" THEN coalesce(rp%zu.host, '(unknown host)') END)", i, i);
	sb_addf(&q->sql, ", sum(%s)", marked_sql);
	if ((ret = from(p, q, JOIN_METRIC | JOIN_PROBES | JOIN_SLICE, p->strict)) ||
	    (nkey && (ret = group_by(p, q, key, nkey))))
		return ret;
	/* the final: the slices' groups merged, each statistic over all their pairs */
	final_keys(p, q, key, nkey);
	sb_addf(&q->final, "sum(c%d)", nkey + 1);
	for (int k = 0; k < 4; k++) {
		sb_adds(&q->final, ", ");
		stat_final(p, q, nkey + 2, k);
	}
	for (size_t i = 0; i < q->njoined; i++)
		sb_addf(&q->final, ", group_concat(c%d)", nkey + 3 + (int)i);
	sb_addf(&q->final, ", sum(c%d) FROM temp.sweep_part", at);
	if (nkey) {
		by(&q->final, "GROUP BY", nkey, 0, 0);
		by(&q->final, "ORDER BY", nkey, 0, 0);
	}
	return FAIL_OK;
}

int report_query_limit(const struct report_plan *p, struct report_query *q)
{
	int nkey = p->nrows + (p->summary_by ? 1 : 0), ret;
	const char **key = xcalloc((size_t)nkey + 1, sizeof(*key));

	if (p->nrows)
		memcpy(key, p->rows, (size_t)p->nrows * sizeof(*key));
	key[p->nrows] = p->summary_by;
	ret = limit_sql(p, q, key, nkey);
	free(key);
	return ret;
}

/* The predictions' own FROM: each scored against every ok result of its cell's parameters and pass (the
 * cell itself, or the per-host replicas of a template cell). error = 100 (measured - predicted) /
 * predicted. */
static int score_from(const struct report_plan *p, struct report_query *q)
{
	int ret;

	sb_adds(&q->sql, "p.metric AS metric, p.blind AS blind, 100.0 * (m.value - p.value) / p.value AS err"
		" FROM predictions p JOIN cells c0 ON c0.key = p.key"
		" JOIN cells c ON c.sweep = c0.sweep AND c.params = c0.params AND c.pass = c0.pass"
		"  AND c.state != 'template'"
		" LEFT JOIN results r ON r.cell = c.id AND r.status = 'ok'"
		" LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host"
		" LEFT JOIN metrics m ON m.result = r.id AND m.name = p.metric"
		" WHERE p.sweep = ");
	report_expr_bind(q, p->c->sweep);
	if (p->metric) {
		sb_adds(&q->sql, " AND p.metric = ");
		report_expr_bind(q, p->metric);
	}
	if (p->where) {
		sb_adds(&q->sql, " AND (");
		if ((ret = report_expr_sql(p->c, q, "--where", p->where, 0)))
			return ret;
		sb_addc(&q->sql, ')');
	}
	for (size_t i = 0; i < p->nexcluded; i++) {
		sb_adds(&q->sql, " AND coalesce(h.hostname, '') != ");
		report_expr_bind(q, p->excluded[i]);
	}
	return FAIL_OK;
}

int report_query_score(const struct report_plan *p, struct report_query *q)
{
	int n = p->nasked, ret;

	sb_adds(&q->sql, "SELECT ");
	for (int i = 0; i < n; i++)
		sb_addf(&q->sql, "k%d, ", i);
	sb_adds(&q->sql, "metric, blind, count(err), avg(err * err), avg(err), count(*) - count(err)"
		" FROM (SELECT ");
	for (int i = 0; i < n; i++) {
		if ((ret = report_expr_key(p->c, q, p->asked[i])))
			return ret;
		sb_addf(&q->sql, " AS k%d, ", i);
	}
	if ((ret = score_from(p, q)))
		return ret;
	sb_adds(&q->sql, ") GROUP BY ");
	for (int i = 0; i < n; i++)
		sb_addf(&q->sql, "k%d, ", i);
	sb_adds(&q->sql, "metric, blind ORDER BY ");
	for (int i = 0; i < n; i++)
		sb_addf(&q->sql, "k%d, ", i);
	sb_adds(&q->sql, "metric, blind DESC");
	return FAIL_OK;
}

int report_query_score_pairs(const struct report_plan *p, struct report_query *q)
{
	int ret;

	sb_adds(&q->sql, "SELECT metric, blind, predicted, measured"
		" FROM (SELECT p.value AS predicted, m.value AS measured, ");
	if ((ret = score_from(p, q)))
		return ret;
	sb_adds(&q->sql, ") WHERE measured IS NOT NULL ORDER BY metric, blind DESC, predicted, measured");
	return FAIL_OK;
}

int report_query_drift(const struct report_plan *p, struct report_query *q)
{
	sb_adds(&q->sql, "SELECT h.hostname, w.run, w.rank, w.gpu, ctl.params, ctl.median, ctl.noise"
		" FROM controls ctl LEFT JOIN workers w ON w.id = ctl.worker"
		" LEFT JOIN hosts h ON h.id = w.host"
		" WHERE ctl.sweep = ");
	report_expr_bind(q, p->c->sweep);
	sb_adds(&q->sql, " AND ctl.error IS NULL AND ctl.median > 0"
		" ORDER BY h.hostname, w.run, w.rank, ctl.params, ctl.started, ctl.id");
	return FAIL_OK;
}

/*
 * How a metric follows the median time, for the interval of the median (results.ci_lo, ci_hi, in seconds):
 * 1 when it is the time itself (seconds, and ms and us derived from it), -1 when it is work over the time
 * (gflops, gbs and their derived tflops, tbs), 0 for a command's own metric, which the median's interval
 * says nothing about.
 */
static int time_direction(const char *base)
{
	return !strcmp(base, "seconds") ? 1 : !strcmp(base, "gflops") || !strcmp(base, "gbs") ? -1 : 0;
}

/* The bound of the median's interval of each result, in the metric: metric * ci_lo / median (a time) or
 * metric * median / ci_hi (a rate) for the lower one. */
static void ci_bound(const struct report_plan *p, struct report_query *q, int upper)
{
	int dir = time_direction(p->metric_base);

	report_expr_metric(p, q);
	if (dir > 0)
		sb_addf(&q->sql, " * r.%s / r.median", upper ? "ci_hi" : "ci_lo");
	else
		sb_addf(&q->sql, " * r.median / r.%s", upper ? "ci_lo" : "ci_hi");
}

/*
 * A plot point's interval (--errors), two columns: the spread of the values it aggregates (min and max, or
 * the quantiles of a central range), the --stat of its results' median intervals (unknown unless every
 * result has one), or NULL, NULL.
 */
static int plot_interval(const struct report_plan *p, struct report_query *q)
{
	if (p->look.errors == ERRORS_NONE) {
		sb_adds(&q->final, ", NULL, NULL");
		return FAIL_OK;
	}
	if (p->look.errors == ERRORS_SPREAD) {
		/* of the values in c4 (the point's statistic's) */
		for (int hi = 0; hi < 2; hi++)
			sb_addf(&q->final, ", sweep_stat('%s', %.17g, c4)", !p->look.spread ? (hi ? "max" : "min") :
				"quantile", (1 + (hi ? 1 : -1) * p->look.spread) / 2);
		return FAIL_OK;
	}
	if (!p->c->median_ci)
		return fail_usage("--errors ci: the results of '%s' keep no interval of their median (a database "
				  "of an older sweep); --errors spread draws the spread of the values", p->c->db);
	if (p->metric_own || !time_direction(p->metric_base))
		return fail_usage("--errors ci: the interval of the median is of the time, and '%s' is not "
				  "seconds, ms, us or a rate of a kernel (gflops, gbs, tflops, tbs); --errors spread "
				  "draws the spread of the values", p->metric);
	/* the part: how many results have an interval, and the bounds' values; unknown unless all have one */
	sb_adds(&q->sql, ", count(r.ci_lo)");
	for (int hi = 0; hi < 2; hi++) {
		sb_adds(&q->sql, ", sweep_values(");
		ci_bound(p, q, hi);
		sb_addc(&q->sql, ')');
		sb_adds(&q->final, ", CASE WHEN sum(c6) = sum(c5) THEN ");
		stat_final(p, q, 7 + hi, -1);
		sb_adds(&q->final, " END");
	}
	return FAIL_OK;
}

/* The distinct (row keys, group, host) of the statement's results, then the distinct (group, host). */
int report_query_shared(const struct report_plan *p, struct report_query *q)
{
	int ret;

	for (int pass = 0; pass < 2; pass++) {
		sb_adds(&q->sql, pass ? ", (SELECT count(*) FROM (SELECT DISTINCT " : "SELECT (SELECT count(*) FROM "
			"(SELECT DISTINCT ");
		if ((!pass && (ret = keys(p, q, (const char *const *)p->rows, p->nrows, ", "))) ||
		    (ret = keys(p, q, &p->summary_by, p->summary_by ? 1 : 0, ", ")))
			return ret;
		sb_adds(&q->sql, "h.hostname");
		if ((ret = from(p, q, JOIN_METRIC, p->strict)))
			return ret;
		sb_adds(&q->sql, "))");
	}
	return FAIL_OK;
}

/*
 * A plot in slices (store_query_split). The part: facet, series, x (NULL for none), the metric's values,
 * count, [results with an interval, the bounds' values]; the final: facet, series, x, stat(metric), count,
 * low, high, grouped and ordered by the three.
 */
int report_query_plot(const struct report_plan *p, struct report_query *q)
{
	const char *const key[] = { p->look.facet, p->look.series, p->look.x };
	int ret;

	sb_adds(&q->sql, "SELECT ");
	for (int i = 0; i < 3; i++) {
		if (!key[i])
			sb_adds(&q->sql, "NULL, ");
		else if ((ret = keys_once(p, q, &key[i], 1)))
			return ret;
	}
	final_keys(p, q, key, 3);
	sb_adds(&q->sql, "sweep_values(");
	report_expr_metric(p, q);
	sb_adds(&q->sql, "), count(m.value)");
	stat_final(p, q, 4, -1);
	sb_adds(&q->final, ", sum(c5)");
	if ((ret = plot_interval(p, q)) || (ret = from(p, q, JOIN_METRIC | JOIN_SLICE, p->strict)) ||
	    (ret = group_by(p, q, key, 3)))
		return ret;
	sb_adds(&q->final, " FROM temp.sweep_part");
	by(&q->final, "GROUP BY", 3, 0, 0);
	by(&q->final, "ORDER BY", 3, 0, 0);
	return FAIL_OK;
}

int report_query_varying(const struct report_plan *p, const char *const *key, int nkeys,
			 const char *const *cand, int ncand, struct report_query *q)
{
	int ret, n = 0;

	/* 2 where a candidate varies inside a group, else 1: report_agg_varying asks for more than one */
	sb_adds(&q->sql, "SELECT ");
	for (int i = 0; i < ncand; i++)
		sb_addf(&q->sql, "%s1 + max(v%d)", i ? ", " : "", i);
	sb_adds(&q->sql, " FROM (SELECT ");
	for (int i = 0; i < ncand; i++) {
		sb_addf(&q->sql, "%ssweep_varies(", i ? ", " : "");
		if ((ret = report_expr_key(p->c, q, cand[i])))
			return ret;
		sb_addf(&q->sql, ") AS v%d", i);
	}
	if ((ret = from(p, q, JOIN_METRIC, p->strict)))
		return ret;
	for (int i = 0; i < nkeys; i++)
		n += key[i] != NULL;
	if (n && (ret = group_by(p, q, key, nkeys)))
		return ret;
	sb_addc(&q->sql, ')');
	return FAIL_OK;
}
