/* report_limit.c: --limit EXPR: a limit per row from parameters, metrics and probes, and the share of it. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

struct limit_rows {
	struct report *r;
	struct rtab *t;
	int nkey, ng;
	char ***missing;       /* per joined probe: the hostnames without it (owned lists) */
	size_t *nmissing;
};

static void add_host(char ***v, size_t *n, const char *s, size_t len)
{
	for (size_t i = 0; i < *n; i++)
		if (strlen((*v)[i]) == len && !strncmp((*v)[i], s, len))
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrndup(s, len);
}

static int limit_row(const struct store_row *row, void *data)
{
	struct limit_rows *l = data;
	int at = l->nkey + l->ng;

	rtab_add(l->t, row->text, &row->num[at], l->ng ? row->text[l->nkey] : NULL);
	/* after the 4 values, per probe: the hosts of the row that lack it, joined by commas (which a
	 * hostname cannot hold) */
	for (size_t i = 0; i < l->r->njoined; i++) {
		const char *s = row->text[at + 4 + (int)i];

		while (s && *s) {
			size_t len = strcspn(s, ",");

			add_host(&l->missing[i], &l->nmissing[i], s, len);
			s += len + (s[len] == ',');
		}
	}
	if (row->num[at + 4 + (int)l->r->njoined] > 0) {
		rtab_noisy(l->t, 1);   /* the metric, and the share that rests on it */
		rtab_noisy(l->t, 3);
	}
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Say which hosts of the report have no value for a probe the limit uses: their rows show "-". */
static void note_missing_probes(struct limit_rows *l)
{
	for (size_t i = 0; i < l->r->njoined; i++) {
		struct strbuf sb = STRBUF_INIT;
		size_t n = l->nmissing[i];

		if (!n)
			continue;
		qsort(l->missing[i], n, sizeof(char *), cmp_str);
		for (size_t k = 0; k < n; k++)
			sb_addf(&sb, "%s%s", k ? ", " : "", l->missing[i][k]);
		report_note("no probe '%s' for %s %s: the limit and share of %s rows are '-'",
			    l->r->joined[i], n == 1 ? "host" : "hosts", sb.buf, n == 1 ? "its" : "their");
		sb_release(&sb);
	}
}

int report_limit(struct report *r)
{
	struct strbuf sql = STRBUF_INIT;
	const char *names[] = { "n", r->metric, "limit", "share" };
	const char *stat = report_stat_sql(r->stat);
	int nkey = r->nrows, ng = r->summary_by ? 1 : 0, ret = -1, tab = 0;
	struct limit_rows l = { r, NULL, nkey, ng, NULL, NULL };
	struct rtab t;
	char *cap;

	if (report_metric(r, r->metric) ||
	    report_unpooled(r, (const char *const[]){ r->summary_by }, r->summary_by ? 1 : 0))
		return -1;
	nkey = l.nkey = r->nrows;
	report_binds_reset(r);
	/* The limit is computed for each result (its host's probes, its parameters and metrics), then the
	 * row aggregates like the metric: the share is the statistic of metric / limit over the row. */
	if (report_probes_cte(r, r->limit, &sql))
		goto out;
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < nkey + ng; i++)
		sb_addf(&sql, "k%d, ", i);
	sb_addf(&sql, "count(v), %s(v), %s(lim), %s(v * 1.0 / lim)", stat, stat, stat);
	for (size_t i = 0; i < r->njoined; i++)
		sb_addf(&sql, ", group_concat(DISTINCT miss%zu)", i);
	sb_adds(&sql, ", sum(noisy) FROM (SELECT ");
	for (int i = 0; i < nkey + ng; i++) {
		if (report_key_sql(r, i < nkey ? r->rows[i] : r->summary_by, &sql))
			goto out;
		sb_addf(&sql, " AS k%d, ", i);
	}
	report_metric_value(r, &sql);
	sb_adds(&sql, " AS v, (");
	if (report_expr_sql(r, "--limit", r->limit, EXPR_PROBES, &sql))
		goto out;
	sb_adds(&sql, ") AS lim, " STORE_IMPRECISE("r") " AS noisy");
	for (size_t i = 0; i < r->njoined; i++)
		sb_addf(&sql, ", CASE WHEN rp%zu.value IS NULL"
			" THEN coalesce(h.hostname, '(unknown host)') END AS miss%zu", i, i);
	if (report_from(r, &sql, JOIN_METRIC | JOIN_PROBES))
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
	tab = 1;
	t.sig[0] = 0;
	t.nosum[0] = 1;
	t.sig[3] = 3;
	t.dgroup[1] = t.dgroup[2] = 1;     /* the metric and its limit have one unit */
	l.t = &t;
	l.missing = xcalloc(r->njoined + 1, sizeof(*l.missing));
	l.nmissing = xcalloc(r->njoined + 1, sizeof(*l.nmissing));
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, limit_row, &l))
		goto out;
	if (!t.n || (!nkey && t.val[0] == 0)) {
		if (!report_strict_emptied(r))
			error("no ok results of sweep '%s' with metric '%s'%s", r->sweep, r->metric,
			      r->where || r->nexcluded ? " that pass the filters" : "");
		goto out;
	}
	note_missing_probes(&l);
	cap = xasprintf("%s of %s%s, limit = %s, share = %s / limit, sweep %s", r->stat, r->metric,
			report_pooled(r), r->limit,
			r->metric, r->sweep);
	ret = report_print(r, &t, cap);
	free(cap);
out:
	if (tab)
		rtab_release(&t);
	for (size_t i = 0; l.missing && i < r->njoined; i++) {
		for (size_t k = 0; k < l.nmissing[i]; k++)
			free(l.missing[i][k]);
		free(l.missing[i]);
	}
	free(l.missing);
	free(l.nmissing);
	sb_release(&sql);
	return ret;
}
