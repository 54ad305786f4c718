/* report_compare.c: --compare KEY=A/B: per row, a ratio of means over paired items with a bootstrap CI. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "stats.h"

/* One SQL row: the row keys (and summary group), which arms it belongs to, the unit and its value (the
 * mean over passes of that unit in that arm). A/A comparisons give rows in both arms. */
struct cmp_unit {
	char **key;            /* nkey */
	int in_a, in_b;
	char *unit;
	double value;
	int noisy;             /* a result of the unit is above its noise target */
};

struct cmp_rows {
	int nkey;
	struct cmp_unit *v;
	size_t n, alloc;
};

static int cmp_collect(const struct store_row *row, void *data)
{
	struct cmp_rows *c = data;
	struct cmp_unit *u;

	ALLOC_GROW(c->v, c->n + 1, c->alloc);
	u = &c->v[c->n++];
	u->key = xcalloc((size_t)c->nkey + 1, sizeof(*u->key));
	for (int k = 0; k < c->nkey; k++)
		u->key[k] = row->text[k] ? xstrdup(row->text[k]) : NULL;
	u->in_a = row->num[c->nkey] == 1;
	u->in_b = row->num[c->nkey + 1] == 1;
	u->unit = xstrdup(row->text[c->nkey + 2] ? row->text[c->nkey + 2] : "");
	u->value = row->num[c->nkey + 3];
	u->noisy = row->num[c->nkey + 4] > 0;
	return 0;
}

static int same_key(const struct cmp_unit *a, const struct cmp_unit *b, int n)
{
	for (int k = 0; k < n; k++)
		if (!(!a->key[k] && !b->key[k]) && !(a->key[k] && b->key[k] && !strcmp(a->key[k], b->key[k])))
			return 0;
	return 1;
}

/* "host=a model=m", for notes about a row. */
static char *row_name(const struct report *r, const struct cmp_unit *u)
{
	struct strbuf sb = STRBUF_INIT;

	for (int k = 0; k < r->nrows; k++)
		sb_addf(&sb, "%s%s=%s", k ? " " : "", r->rows[k], u->key[k] ? u->key[k] : "-");
	if (!r->nrows)
		sb_adds(&sb, "all");
	return sb_detach(&sb);
}

struct arm_values {
	char **v;
	size_t n, alloc;
};

static int collect_text(const struct store_row *row, void *data)
{
	struct arm_values *a = data;

	ALLOC_GROW(a->v, a->n + 1, a->alloc);
	a->v[a->n++] = xstrdup(row->text[0] ? row->text[0] : "NULL");
	return 0;
}

/* Both arms must be values the key takes in the sweep: a typo would otherwise give an empty report. */
static int check_arms(struct report *r, const char *key, const char *a, const char *b)
{
	struct strbuf sql = STRBUF_INIT, known = STRBUF_INIT;
	struct arm_values vals = { NULL, 0, 0 };
	int ret = -1, found_a = 0, found_b = 0;

	report_binds_reset(r);
	sb_adds(&sql, "SELECT DISTINCT CAST(");
	if (report_key_sql(r, key, &sql))
		goto out;
	sb_adds(&sql, " AS TEXT)");
	if (report_from(r, &sql, JOIN_NONE))
		goto out;
	sb_adds(&sql, " ORDER BY 1");
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, collect_text, &vals))
		goto out;
	for (size_t i = 0; i < vals.n; i++) {
		found_a |= !strcmp(vals.v[i], a);
		found_b |= !strcmp(vals.v[i], b);
		sb_addf(&known, "%s%s", i ? ", " : "", vals.v[i]);
	}
	if (!found_a || !found_b)
		error("no ok results with %s=%s in sweep '%s' (%s takes: %s)", key, found_a ? b : a, r->sweep,
		      key, vals.n ? known.buf : "no value");
	else
		ret = 0;
out:
	for (size_t i = 0; i < vals.n; i++)
		free(vals.v[i]);
	free(vals.v);
	sb_release(&sql);
	sb_release(&known);
	return ret;
}

/* Say which units of a row lack a partner (the first few by name). */
static void note_unpaired(const struct report *r, const struct cmp_unit *first, char **only, int *arm,
			  size_t n, const char *key, const char *a, const char *b)
{
	struct strbuf sb = STRBUF_INIT;
	char *name = row_name(r, first);

	for (size_t i = 0; i < n && i < 10; i++)
		sb_addf(&sb, "%s%s (only %s=%s)", i ? ", " : "", only[i], key, arm[i] ? b : a);
	if (n > 10)
		sb_addf(&sb, " and %zu more", n - 10);
	report_note("%s: %zu %s without a partner, left out of the ratio: %s", name, n,
		    n == 1 ? "unit" : "units", sb.buf);
	free(name);
	sb_release(&sb);
}

int report_compare(struct report *r)
{
	struct strbuf sql = STRBUF_INIT;
	struct cmp_rows rows = { 0 };
	struct rtab t;
	const char *eq = strchr(r->compare, '='), *slash = eq ? strchr(eq + 1, '/') : NULL;
	const char *paired = r->paired_by ? r->paired_by : "item";
	int by_item = !strcmp(paired, "item");
	int ng = r->summary_by ? 1 : 0, nkey = r->nrows + ng, ret = -1, tab = 0;
	char *key = NULL, *a = NULL, *b = NULL, *ci_head = NULL, *names[6];
	double *xa = NULL, *xb = NULL;
	char **only = NULL;
	int *only_arm = NULL;

	if (!eq || eq == r->compare || !slash || slash == eq + 1 || !slash[1] || strchr(slash + 1, '/'))
		return error("--compare takes KEY=A/B (such as system=cache/baseline), not '%s'", r->compare);
	key = xstrndup(r->compare, (size_t)(eq - r->compare));
	a = xstrndup(eq + 1, (size_t)(slash - eq - 1));
	b = xstrdup(slash + 1);
	for (int i = 0; i < r->nrows; i++)
		if (!strcmp(r->rows[i], key)) {
			error("the compared key '%s' cannot also be a row key", key);
			goto out;
		}
	if (!by_item && !strcmp(paired, key)) {
		error("--paired-by %s: the pairs cannot be made by the compared key itself", paired);
		goto out;
	}
	if (report_metric(r, r->metric) || check_arms(r, key, a, b) ||
	    report_unpooled(r, (const char *const[]){ key, by_item ? NULL : paired, r->summary_by }, 3))
		goto out;
	nkey = r->nrows + ng;

	report_binds_reset(r);
	sb_adds(&sql, "SELECT ");
	for (int i = 0; i < r->nrows; i++) {
		if (report_key_sql(r, r->rows[i], &sql))
			goto out;
		sb_adds(&sql, ", ");
	}
	if (ng) {
		if (report_key_sql(r, r->summary_by, &sql))
			goto out;
		sb_adds(&sql, ", ");
	}
	sb_adds(&sql, "CAST(");
	report_key_sql(r, key, &sql);
	sb_adds(&sql, " AS TEXT) = ");
	report_bind(r, &sql, a);
	sb_adds(&sql, ", CAST(");
	report_key_sql(r, key, &sql);
	sb_adds(&sql, " AS TEXT) = ");
	report_bind(r, &sql, b);
	sb_adds(&sql, ", ");
	if (by_item) {
		sb_adds(&sql, "i.item, avg(i.value");
		if (r->metric_scale != 1)
			sb_addf(&sql, " * %.17g", r->metric_scale);
		sb_adds(&sql, ")");
	} else {
		sb_adds(&sql, "CAST(");
		if (report_key_sql(r, paired, &sql))
			goto out;
		sb_adds(&sql, " AS TEXT), avg(");
		report_metric_value(r, &sql);
		sb_adds(&sql, ")");
	}
	sb_adds(&sql, ", sum(" STORE_IMPRECISE("r") ")");
	if (report_from(r, &sql, by_item ? JOIN_ITEMS : JOIN_METRIC))
		goto out;
	sb_adds(&sql, " AND CAST(");
	report_key_sql(r, key, &sql);
	sb_adds(&sql, " AS TEXT) IN (");
	report_bind(r, &sql, a);
	sb_adds(&sql, ", ");
	report_bind(r, &sql, b);
	sb_adds(&sql, ") GROUP BY ");
	for (int i = 0; i < nkey + 3; i++)
		sb_addf(&sql, "%d, ", i + 1);
	sql.len -= 2;
	sql.buf[sql.len] = '\0';
	sb_adds(&sql, " ORDER BY ");
	for (int i = 0; i < nkey; i++)
		sb_addf(&sql, "%d, ", i + 1);
	sb_addf(&sql, "%d", nkey + 3);
	rows.nkey = nkey;
	if (store_query(r->st, sql.buf, (const char *const *)r->binds, (int)r->nbind, 1, cmp_collect, &rows))
		goto out;
	if (!rows.n) {
		if (by_item)
			error("no per-item values of '%s' for %s=%s or %s=%s in sweep '%s' (pair by a "
			      "parameter with --paired-by KEY)", r->metric, key, a, key, b, r->sweep);
		else if (!report_strict_emptied(r))
			error("no ok results of '%s' for %s=%s or %s=%s in sweep '%s'", r->metric, key, a,
			      key, b, r->sweep);
		goto out;
	}

	names[0] = "n";
	names[1] = xasprintf("%s_%s", r->metric, a);
	names[2] = xasprintf("%s_%s", r->metric, b);
	names[3] = "ratio";
	names[4] = "ci_lo";
	names[5] = "ci_hi";
	rtab_init(&t, r->nrows, (const char *const *)r->rows, 6, (const char *const *)names);
	tab = 1;
	free(names[1]);
	free(names[2]);
	t.sig[0] = 0;
	t.nosum[0] = 1;
	t.sig[3] = t.sig[4] = t.sig[5] = 3;
	t.dgroup[1] = t.dgroup[2] = 1;
	t.ci_at = 3;
	ci_head = xasprintf("%s/%s [%g%% CI]", a, b, r->ci * 100);
	t.ci_head = ci_head;
	xa = xmalloc(rows.n * sizeof(*xa));
	xb = xmalloc(rows.n * sizeof(*xb));
	only = xmalloc(rows.n * sizeof(*only));
	only_arm = xmalloc(rows.n * sizeof(*only_arm));
	for (size_t j = 0; j < rows.n;) {
		size_t e = j, np = 0, nonly = 0, seen_a = 0, seen_b = 0;
		double v[6] = { 0, NAN, NAN, NAN, NAN, NAN };
		int noisy_a = 0, noisy_b = 0;

		/* Rows arrive ordered by row key, then unit: a unit's arms are adjacent. */
		while (e < rows.n && same_key(&rows.v[j], &rows.v[e], nkey)) {
			size_t u = e;
			double va = NAN, vb = NAN;
			int has_a = 0, has_b = 0;

			for (; u < rows.n && same_key(&rows.v[j], &rows.v[u], nkey) &&
			     !strcmp(rows.v[u].unit, rows.v[e].unit); u++) {
				if (rows.v[u].in_a) {
					has_a = 1;
					va = rows.v[u].value;
					noisy_a |= rows.v[u].noisy;
				}
				if (rows.v[u].in_b) {
					has_b = 1;
					vb = rows.v[u].value;
					noisy_b |= rows.v[u].noisy;
				}
			}
			seen_a += has_a;
			seen_b += has_b;
			if (has_a && has_b && !isnan(va) && !isnan(vb)) {
				xa[np] = va;
				xb[np++] = vb;
			} else if (has_a != has_b) {
				only[nonly] = rows.v[e].unit;
				only_arm[nonly++] = has_b;
			}
			e = u;
		}
		if (!seen_a || !seen_b) {
			char *name = row_name(r, &rows.v[j]);

			report_note("%s: no results for %s=%s: nothing to compare", name, key,
				    seen_a ? b : a);
			free(name);
		} else if (nonly) {
			note_unpaired(r, &rows.v[j], only, only_arm, nonly, key, a, b);
		}
		v[0] = (double)np;
		if (np) {
			v[1] = stats_mean(xa, np);
			v[2] = stats_mean(xb, np);
			if (stats_ratio_ci(xa, xb, np, r->ci, r->boot, r->seed, &v[3], &v[4], &v[5])) {
				char *name = row_name(r, &rows.v[j]);

				report_note("%s: the mean of %s=%s is 0: no ratio", name, key, b);
				free(name);
			}
		}
		rtab_add(&t, (const char *const *)rows.v[j].key, v, ng ? rows.v[j].key[r->nrows] : NULL);
		if (noisy_a)
			rtab_noisy(&t, 1);
		if (noisy_b)
			rtab_noisy(&t, 2);
		if (noisy_a || noisy_b)
			rtab_noisy(&t, 3);     /* the ratio rests on them */
		j = e;
	}
	{
		char *cap = xasprintf("%s of %s=%s over %s=%s%s, paired by %s (ratio of means, %g%% percentile "
				      "bootstrap, %d resamples, seed %llu), sweep %s", r->metric, key, a, key,
				      b, report_pooled(r), paired, r->ci * 100, r->boot, (unsigned long long)r->seed, r->sweep);

		ret = report_print(r, &t, cap);
		free(cap);
	}
out:
	if (tab)
		rtab_release(&t);
	for (size_t i = 0; i < rows.n; i++) {
		for (int k = 0; k < nkey; k++)
			free(rows.v[i].key[k]);
		free(rows.v[i].key);
		free(rows.v[i].unit);
	}
	free(rows.v);
	free(xa);
	free(xb);
	free(only);
	free(only_arm);
	free(ci_head);
	free(key);
	free(a);
	free(b);
	sb_release(&sql);
	return ret;
}
