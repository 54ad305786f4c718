/* report_limit.c: --limit EXPR: a limit per row from parameters, metrics and probes, and the share of it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct limit_rows {
	struct rtab *t;
	int nkey, ng;
};

static int limit_row(const struct store_row *row, void *data)
{
	struct limit_rows *l = data;
	const double *v = &row->num[l->nkey + l->ng];

	rtab_add(l->t, row->text, v, l->ng ? row->text[l->nkey] : NULL);
	return 0;
}

struct host_list {
	struct strbuf sb;
	size_t n;
};

static int collect_host(const struct store_row *row, void *data)
{
	struct host_list *h = data;

	sb_addf(&h->sb, "%s%s", h->n++ ? ", " : "", row->text[0] ? row->text[0] : "(unknown host)");
	return 0;
}

/* Say which hosts of the report have no value for a probe the limit uses: their rows show "-". */
static int note_missing_probes(struct report *r)
{
	char **probes;
	size_t n;
	int ret = 0;

	if (report_expr_probes(r, r->limit, &probes, &n))
		return -1;
	for (size_t i = 0; i < n && !ret; i++) {
		struct strbuf sql = STRBUF_INIT;
		struct host_list h = { STRBUF_INIT, 0 };

		report_binds_reset(r);
		sb_adds(&sql, "SELECT DISTINCT h.hostname");
		if (report_from(r, &sql, JOIN_NONE)) {
			ret = -1;
		} else {
			sb_adds(&sql, " AND NOT EXISTS (SELECT 1 FROM probes p JOIN hosts ph ON ph.id = p.host"
				" WHERE ph.hostname = h.hostname AND p.value IS NOT NULL AND p.name = ");
			report_bind(r, &sql, probes[i]);
			sb_adds(&sql, ") ORDER BY 1");
			ret = store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1,
					  collect_host, &h);
			if (!ret && h.n)
				report_note("no probe '%s' for %s %s: the limit and share of %s rows are '-'",
					    probes[i], h.n == 1 ? "host" : "hosts", h.sb.buf, h.n == 1 ? "its" : "their");
		}
		sb_release(&h.sb);
		sb_release(&sql);
	}
	for (size_t i = 0; i < n; i++)
		free(probes[i]);
	free(probes);
	return ret;
}

int report_limit(struct report *r)
{
	struct strbuf sql = STRBUF_INIT;
	const char *names[] = { "n", r->metric, "limit", "share" };
	const char *stat = report_stat_sql(r->stat);
	int nkey = r->nrows, ng = r->summary_by ? 1 : 0, ret = -1;
	struct limit_rows l = { NULL, nkey, ng };
	struct rtab t;
	char *cap;

	if (report_metric(r, r->metric))
		return -1;
	report_binds_reset(r);
	/* The limit is computed for each result (its host's probes, its parameters and metrics), then the
	 * row aggregates like the metric: the share is the statistic of metric / limit over the row. */
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < nkey + ng; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_addf(&sql, "count(v), %s(v), %s(lim), %s(v * 1.0 / lim) FROM (SELECT ", stat, stat, stat);
	for (int i = 0; i < nkey + ng; i++) {
		if (report_key_sql(r, i < nkey ? r->rows[i] : r->summary_by, &sql))
			goto out;
		sb_addf(&sql, " AS k%d, ", i);
	}
	report_metric_value(r, &sql);
	sb_adds(&sql, " AS v, (");
	if (report_expr_sql(r, "--limit", r->limit, EXPR_PROBES, &sql))
		goto out;
	sb_adds(&sql, ") AS lim");
	if (report_from(r, &sql, JOIN_METRIC))
		goto out;
	sb_adds(&sql, ")");
	if (nkey + ng) {
		sb_adds(&sql, " GROUP BY ");
		for (int i = 0; i < nkey + ng; i++)
			sb_addf(&sql, "%sk%d", i ? ", " : "", i);
		sb_adds(&sql, " ORDER BY ");
		for (int i = 0; i < nkey + ng; i++)
			sb_addf(&sql, "%sk%d", i ? ", " : "", i);
	}
	rtab_init(&t, nkey, (const char *const *)r->rows, 4, names);
	t.sig[0] = 0;
	t.nosum[0] = 1;
	t.sig[3] = 3;
	l.t = &t;
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, limit_row, &l))
		goto out_t;
	if (!t.n || (!nkey && t.val[0] == 0)) {
		error("no ok results of sweep '%s' with metric '%s'%s", r->sweep, r->metric,
		      r->where || r->nexcluded ? " that pass the filters" : "");
		goto out_t;
	}
	if (note_missing_probes(r))
		goto out_t;
	cap = xasprintf("%s of %s, limit = %s, share = %s / limit, sweep %s", r->stat, r->metric, r->limit,
			r->metric, r->sweep);
	ret = report_print(r, &t, cap);
	free(cap);
out_t:
	rtab_release(&t);
out:
	sb_release(&sql);
	return ret;
}
