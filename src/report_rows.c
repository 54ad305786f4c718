/* report_rows.c: what a report may not hide: the parameters it would otherwise aggregate over (which
 * become row keys, or are refused by a plot), and the results above their noise target. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void free_list(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

static int in_list(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

struct names {
	char **v;
	size_t n;
};

static int collect_name(const struct store_row *row, void *data)
{
	struct names *l = data;

	if (!row->text[0])
		return 0;
	l->v = xrealloc(l->v, (l->n + 2) * sizeof(*l->v));
	l->v[l->n++] = xstrdup(row->text[0]);
	l->v[l->n] = NULL;
	return 0;
}

static int in_keys(const char *const *v, int n, const char *s)
{
	for (int i = 0; i < n; i++)
		if (v[i] && (!strcmp(v[i], s) || (!strncmp(v[i], "param.", 6) && !strcmp(v[i] + 6, s))))
			return 1;
	return 0;
}

struct varying {
	int n;
	int *max;              /* per candidate: the most distinct values inside one group */
};

static int read_varying(const struct store_row *row, void *data)
{
	struct varying *v = data;

	for (int i = 0; i < v->n; i++)
		v->max[i] = isnan(row->num[i]) ? 0 : (int)row->num[i];
	return 0;
}

int report_varying(struct report *r, const char *const *keys, int nkeys, char ***out, int *nout)
{
	struct strbuf sql = STRBUF_INIT;
	struct varying v = { 0, NULL };
	char **order = NULL, **cand;
	size_t norder = 0;
	int ncand = 0, ret = -1;

	*out = NULL;
	*nout = 0;
	for (int i = 0; i < r->npool; i++) {
		struct strbuf scratch = STRBUF_INIT;
		size_t nbind = r->nbind;
		int bad = report_key_sql(r, r->pool[i], &scratch);

		while (r->nbind > nbind)
			free(r->binds[--r->nbind]);
		sb_release(&scratch);
		if (bad)
			return -1;
	}
	/* spec order: the order of the keys in a cell's parameters */
	{
		struct names l = { NULL, 0 };
		const char *b[] = { r->sweep };

		if (store_query(r->st, "SELECT j.key FROM (SELECT params FROM cells WHERE sweep = ?1 LIMIT 1)"
				" AS c, json_each(c.params) AS j", b, 1, 1, collect_name, &l)) {
			free_list(l.v, l.n);
			return -1;
		}
		order = l.v;
		norder = l.n;
	}
	for (size_t i = 0; i < r->nparams; i++)
		if (!in_list(order, norder, r->params[i])) {
			order = xrealloc(order, (norder + 2) * sizeof(*order));
			order[norder++] = xstrdup(r->params[i]);
			order[norder] = NULL;
		}
	cand = xcalloc(norder + 1, sizeof(*cand));
	for (size_t i = 0; i < norder; i++)
		if (!in_keys(keys, nkeys, order[i]) && !in_keys((const char *const *)r->pool, r->npool, order[i]))
			cand[ncand++] = order[i];
	if (!ncand) {
		ret = 0;
		goto out;
	}
	report_binds_reset(r);
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < ncand; i++)
		sb_addf(&sql, "%smax(v%d)", i ? ", " : "", i);
	sb_adds(&sql, " FROM (SELECT ");
	for (int i = 0; i < ncand; i++) {
		sb_addf(&sql, "%scount(DISTINCT ", i ? ", " : "");
		if (report_key_sql(r, cand[i], &sql))
			goto out;
		sb_addf(&sql, ") AS v%d", i);
	}
	if (report_from(r, &sql, JOIN_METRIC))
		goto out;
	for (int i = 0, k = 0; i < nkeys; i++) {
		if (!keys[i])
			continue;
		sb_adds(&sql, k++ ? ", " : " GROUP BY ");
		if (report_key_sql(r, keys[i], &sql))
			goto out;
	}
	sb_addc(&sql, ')');
	v.n = ncand;
	v.max = xcalloc((size_t)ncand, sizeof(*v.max));
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, read_varying, &v))
		goto out;
	for (int i = 0; i < ncand; i++)
		if (v.max[i] > 1) {
			*out = xrealloc(*out, (size_t)(*nout + 1) * sizeof(**out));
			(*out)[(*nout)++] = xstrdup(cand[i]);
		}
	ret = 0;
out:
	report_binds_reset(r);
	free(v.max);
	free(cand);
	free_list(order, norder);
	sb_release(&sql);
	return ret;
}

int report_unpooled(struct report *r, const char *const *extra, int nextra)
{
	int nk = r->nrows + r->ncols + nextra, nv;
	const char **keys = xcalloc((size_t)nk + 1, sizeof(*keys));
	char **v;
	struct strbuf sb = STRBUF_INIT;

	for (int i = 0; i < r->nrows; i++)
		keys[i] = r->rows[i];
	for (int i = 0; i < r->ncols; i++)
		keys[r->nrows + i] = r->cols[i];
	for (int i = 0; i < nextra; i++)
		keys[r->nrows + r->ncols + i] = extra[i];
	if (report_varying(r, keys, nk, &v, &nv)) {
		free(keys);
		return -1;
	}
	free(keys);
	if (!nv)
		return 0;
	r->rows = xrealloc(r->rows, (size_t)(r->nrows + nv) * sizeof(*r->rows));
	for (int i = 0; i < nv; i++) {
		sb_addf(&sb, "%s%s", i ? "," : "", v[i]);
		r->rows[r->nrows++] = v[i];
	}
	report_note("rows also split by %s, which %s inside a row (--rows names it; --pool %s "
		    "aggregates over it)", sb.buf, nv > 1 ? "vary" : "varies", sb.buf);
	free(v);
	sb_release(&sb);
	return 0;
}

const char *report_pooled(const struct report *r)
{
	static char buf[512];
	size_t len = 0;

	buf[0] = '\0';
	for (int i = 0; i < r->npool && len < sizeof(buf); i++)
		len += (size_t)snprintf(buf + len, sizeof(buf) - len, "%s%s", i ? ", " : " and ", r->pool[i]);
	return buf;
}

static int read_counts(const struct store_row *row, void *data)
{
	long *n = data;

	n[0] = isnan(row->num[0]) ? 0 : (long)row->num[0];
	n[1] = isnan(row->num[1]) ? 0 : (long)row->num[1];
	return 0;
}

/* n[0]: the results STORE_IMPRECISE marks among those report_from(JOIN_METRIC) selects without
 * --strict; n[1]: all of those. */
static int count_imprecise(struct report *r, long n[2])
{
	struct strbuf sql = STRBUF_INIT;
	int strict = r->strict, ret = -1;

	report_binds_reset(r);
	r->strict = 0;
	sb_adds(&sql, "SELECT sum(" STORE_IMPRECISE("r") "), count(*)");
	if (!report_from(r, &sql, JOIN_METRIC))
		ret = store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, read_counts, n);
	r->strict = strict;
	report_binds_reset(r);
	sb_release(&sql);
	return ret;
}

int report_count_noisy(struct report *r)
{
	long n[2] = { 0, 0 };

	if (count_imprecise(r, n))
		return -1;
	r->noisy = n[0];
	if (r->strict && r->noisy > 0)
		report_note("--strict left out %ld of %ld results: %s median not known to the precision asked",
			    r->noisy, n[1], r->noisy == 1 ? "its" : "their");
	return 0;
}

int report_strict_emptied(struct report *r)
{
	long n[2] = { 0, 0 };

	if (!r->strict)
		return 0;
	if (count_imprecise(r, n))
		return 1;
	if (n[1] == 0 || n[0] < n[1])
		return 0;
	error("--strict left out all %ld results of sweep '%s'%s: no median is known to the precision asked "
	      "(report without --strict to see them, marked)", n[1], r->sweep,
	      r->where || r->nexcluded ? " that pass the filters" : "");
	return 1;
}
