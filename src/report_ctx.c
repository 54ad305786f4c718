/* report_ctx.c: the read-only context of a report: the database, the sweep, its parameters, metrics and
 * the probe names, resolved once. */
#include <stdlib.h>
#include <string.h>

#include "report_plan.h"
#include "spec.h"

struct names {
	char **v;
	size_t n, alloc;
};

/* Collects the first column of every row as a NULL-terminated list. */
static int collect_name(const struct store_row *row, void *data)
{
	struct names *l = data;

	if (!row->text[0])
		return 0;
	ALLOC_GROW(l->v, l->n + 2, l->alloc);
	l->v[l->n++] = xstrdup(row->text[0]);
	l->v[l->n] = NULL;
	return 0;
}

static void free_list(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

/* The first column of sql's rows (bound to bind, when not NULL) as an owned NULL-terminated list. */
static int query_names(const struct report_ctx *c, const char *sql, const char *bind, char ***out, size_t *n)
{
	struct names l = { NULL, 0, 0 };
	const char *b[] = { bind };

	if (store_query(c->st, sql, b, bind ? 1 : 0, 1, collect_name, &l)) {
		free_list(l.v);
		return FAIL_IO;
	}
	*out = l.v ? l.v : xcalloc(1, sizeof(*l.v));
	if (n)
		*n = l.n;
	return FAIL_OK;
}

void report_ctx_join(struct strbuf *sb, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		sb_addf(sb, "%s%s", i ? ", " : "", v[i]);
	if (!n)
		sb_adds(sb, "none");
}

/* A sweep asked for by name: one that `sweep hosts probe` ran (probe.NAME.TIME) is reported too. */
static int choose_given(struct report_ctx *c, char **v, size_t n, const char *given)
{
	struct strbuf sb = STRBUF_INIT;
	char **p;
	size_t np;
	int ret;

	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], given))
			goto found;
	if ((ret = query_names(c, "SELECT name FROM sweeps WHERE name = ?1", given, &p, &np)))
		return ret;
	free_list(p);
	if (np)
		goto found;
	report_ctx_join(&sb, v, n);
	ret = fail_usage("no sweep '%s' in '%s' (it has: %s)", given, c->db, sb.buf);
	sb_release(&sb);
	return ret;
found:
	c->sweep = xstrdup(given);
	return FAIL_OK;
}

/* No sweep given: the only one with results, else the only one. */
static int choose_only(struct report_ctx *c, char **v, size_t n)
{
	struct strbuf sb = STRBUF_INIT;
	char **ok;
	size_t nok;
	int ret;

	if (!n) {
		if ((ret = query_names(c, "SELECT name FROM sweeps LIMIT 1", NULL, &ok, &nok)))
			return ret;
		free_list(ok);
		return fail_usage("'%s' holds no sweep yet%s", c->db, nok ? " (only the probe sweeps of `sweep hosts"
				  " probe`, whose values are in the table probes, for --limit)" : "");
	}
	if ((ret = query_names(c, "SELECT name FROM sweeps WHERE name NOT LIKE 'probe.%' AND EXISTS"
			       " (SELECT 1 FROM cells WHERE sweep = sweeps.name AND state = 'ok') ORDER BY name",
			       NULL, &ok, &nok)))
		return ret;
	if (nok > 1 || (!nok && n > 1)) {
		report_ctx_join(&sb, nok ? ok : v, nok ? nok : n);
		ret = fail_usage("'%s' holds several sweeps (%s): choose one with --sweep", c->db, sb.buf);
		sb_release(&sb);
	} else {
		c->sweep = xstrdup(nok ? ok[0] : v[0]);
	}
	free_list(ok);
	return ret;
}

/* The sweep: as given, else the only one with results (or the only one at all). The sweeps that `sweep
 * hosts probe` runs (probe.NAME.TIME) are never offered, listed or chosen: their results are in probes. */
static int choose_sweep(struct report_ctx *c, const char *given)
{
	char **v;
	size_t n;
	int ret;

	if ((ret = query_names(c, "SELECT name FROM sweeps WHERE name NOT LIKE 'probe.%' ORDER BY name", NULL,
			       &v, &n)))
		return ret;
	ret = given ? choose_given(c, v, n, given) : choose_only(c, v, n);
	free_list(v);
	return ret;
}

/* Whether the SQLite version (text such as "3.40.1") is at least 3.35, which knows AS MATERIALIZED. */
static int read_version(const struct store_row *row, void *data)
{
	int major = 0, minor = 0;

	if (row->text[0])
		sscanf(row->text[0], "%d.%d", &major, &minor);
	*(int *)data = major > 3 || (major == 3 && minor >= 35);
	return 0;
}

static int count_row(const struct store_row *row, void *data)
{
	*(double *)data = row->num[0];
	return 0;
}

/* Retired cells are left out of every report: said once, so that a table is not read as the whole plan.
 * Counted from cell_counts (as sweep status counts), not by reading each of a million cells. */
static int note_retired(const struct report_ctx *c)
{
	const char *bind[] = { c->sweep };
	double n = 0;

	if (store_query(c->st, "SELECT coalesce(sum(retired), 0) FROM cell_counts WHERE sweep = ?1", bind, 1, 1,
			count_row, &n))
		return FAIL_IO;
	if (n > 0)
		fprintf(stderr, "sweep: %s: %.0f retired cells (no longer in the spec: run --replan) left out\n",
			c->sweep, n);
	return FAIL_OK;
}

static int in_list(char **v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

/* The parameters in the spec's order (a cell's), then any a sample cell lacks. */
static int spec_order(struct report_ctx *c)
{
	size_t n;
	int ret;

	if ((ret = query_names(c, "SELECT j.key FROM (SELECT params FROM cells WHERE sweep = ?1 LIMIT 1)"
			       " AS c, json_each(c.params) AS j", c->sweep, &c->spec_order, &n)))
		return ret;
	for (size_t i = 0; i < c->nparams; i++)
		if (!in_list(c->spec_order, c->params[i])) {
			c->spec_order = xrealloc(c->spec_order, (n + 2) * sizeof(*c->spec_order));
			c->spec_order[n++] = xstrdup(c->params[i]);
			c->spec_order[n] = NULL;
		}
	return FAIL_OK;
}

/* The sweep's kernel (its declarations type the parameters: a size is in bytes), and whether results keep
 * the interval of their median (a database of a version that has results.ci_lo). */
static int kernel_and_ci(struct report_ctx *c)
{
	char **v;
	size_t n;
	int ret;

	if ((ret = query_names(c, "SELECT kernel FROM sweeps WHERE name = ?1", c->sweep, &v, &n)))
		return ret;
	c->kernel = n ? xstrdup(v[0]) : NULL;
	free_list(v);
	if ((ret = query_names(c, "SELECT name FROM pragma_table_info('results') WHERE name = 'ci_lo'", NULL, &v,
			       &n)))
		return ret;
	c->median_ci = n > 0;
	free_list(v);
	return FAIL_OK;
}

/* Each value of key once, in the order the axis lists them, when one of them is text; else n = 0. */
static void axis_text_values(const struct spec_axis *ax, int k, struct report_order *o)
{
	int text = 0;

	for (int pt = 0; pt < ax->npoints; pt++)
		text |= !ax->vals[(size_t)pt * (size_t)ax->nkeys + (size_t)k].is_num;
	for (int pt = 0; text && pt < ax->npoints; pt++) {
		const char *v = ax->vals[(size_t)pt * (size_t)ax->nkeys + (size_t)k].text;
		size_t i;

		for (i = 0; i < o->n && strcmp(o->values[i], v); i++)
			;
		if (i == o->n) {
			o->values = xrealloc(o->values, (o->n + 1) * sizeof(*o->values));
			o->values[o->n++] = xstrdup(v);
		}
	}
}

/* Text axes keep the spec's order (small, medium, large; 1M, 4M, 16M) wherever a report sorts by them:
 * read from the spec the sweep stored, leniently (this build may lack its kernel). */
/* Which way each metric s declares improves, for a verdict: read here once with the rest of the spec. */
static void spec_betters(struct report_ctx *c, const struct spec *s)
{
	c->betters = xcalloc((size_t)(s->nregex + s->njmetrics) + 1, sizeof(*c->betters));
	for (int i = 0; i < s->nregex + s->njmetrics; i++) {
		const char *name = i < s->nregex ? s->regex[i].name : s->jmetrics[i - s->nregex].name;

		c->betters[c->nbetters].metric = xstrdup(name);
		c->betters[c->nbetters++].better = spec_metric_better(s, name);
	}
}

/* What the report takes from the spec stored with the sweep, read once: the order of the parameters with
 * text values (as their axes list them) and which way each declared metric improves. */
static int spec_facts(struct report_ctx *c)
{
	struct spec s;
	char **text;
	size_t n;
	int ret;

	if ((ret = query_names(c, "SELECT spec FROM sweeps WHERE name = ?1", c->sweep, &text, &n)))
		return ret;
	if (n) {
		spec_read_leniently(text[0], strlen(text[0]), &s);
		spec_betters(c, &s);
	}
	free_list(text);
	for (int a = 0; n && a < s.naxes; a++)
		for (int k = 0; k < s.axes[a].nkeys; k++) {
			struct report_order o = { NULL, NULL, NULL, 0 };

			if (!in_list(c->params, s.axes[a].keys[k]) || report_ctx_order(c, s.axes[a].keys[k]))
				continue;
			axis_text_values(&s.axes[a], k, &o);
			if (!o.n)
				continue;
			o.param = xstrdup(s.axes[a].keys[k]);
			o.collation = xasprintf("sweep_order_%zu", c->norders);
			c->orders = xrealloc(c->orders, (c->norders + 1) * sizeof(*c->orders));
			c->orders[c->norders++] = o;
			if (store_order_text(c->st, o.collation, (const char *const *)o.values, o.n)) {
				ret = FAIL_IO;
				break;
			}
		}
	if (n)
		spec_release(&s);
	return ret;
}

int report_ctx_better(const struct report_ctx *c, const char *metric)
{
	for (size_t i = 0; i < c->nbetters; i++)
		if (!strcmp(c->betters[i].metric, metric))
			return c->betters[i].better;
	return BETTER_UNKNOWN;
}

const struct report_order *report_ctx_order(const struct report_ctx *c, const char *param)
{
	for (size_t i = 0; i < c->norders; i++)
		if (!strcmp(c->orders[i].param, param))
			return &c->orders[i];
	return NULL;
}

int report_ctx_open(struct report_ctx *c, const char *db, const char *sweep)
{
	int ret;

	memset(c, 0, sizeof(*c));
	c->db = db;
	/* a path that is no sweep database (missing, another file, a newer schema) is the user's to fix,
	 * a damaged one is not: store_open's kind says which */
	if ((ret = store_open(db, STORE_RO, &c->st)))
		return ret;
	if ((ret = choose_sweep(c, sweep)))
		return ret;
	/* Every cell of a sweep has the same parameter names, so a sample of cells finds them all; the
	 * metrics may differ between results (a command prints what it likes), so more are sampled. */
	if ((ret = query_names(c, "SELECT DISTINCT j.key FROM (SELECT params FROM cells WHERE sweep = ?1 LIMIT"
			       " 200) AS c, json_each(c.params) AS j ORDER BY 1", c->sweep, &c->params,
			       &c->nparams)) ||
	    (ret = query_names(c, "SELECT DISTINCT m.name FROM (SELECT r.id FROM cells c JOIN results r"
			       " ON r.cell = c.id AND r.status = 'ok' WHERE c.sweep = ?1 AND c.state = 'ok'"
			       " LIMIT 2000) AS x JOIN metrics m ON m.result = x.id ORDER BY 1", c->sweep,
			       &c->metrics, &c->nmetrics)) ||
	    (ret = query_names(c, "SELECT DISTINCT name FROM probes ORDER BY 1", NULL, &c->probes, &c->nprobes)))
		return ret;
	if (store_query(c->st, "SELECT sqlite_version()", NULL, 0, 1, read_version, &c->materialize))
		return FAIL_IO;
	if ((ret = note_retired(c)) || (ret = spec_order(c)) || (ret = kernel_and_ci(c)) || (ret = spec_facts(c)))
		return ret;
	return FAIL_OK;
}

void report_ctx_release(struct report_ctx *c)
{
	store_close(c->st);
	free(c->sweep);
	free(c->kernel);
	free_list(c->params);
	free_list(c->spec_order);
	free_list(c->metrics);
	free_list(c->probes);
	for (size_t i = 0; i < c->nbetters; i++)
		free(c->betters[i].metric);
	free(c->betters);
	for (size_t i = 0; i < c->norders; i++) {
		free(c->orders[i].param);
		free(c->orders[i].collation);
		for (size_t k = 0; k < c->orders[i].n; k++)
			free(c->orders[i].values[k]);
		free(c->orders[i].values);
	}
	free(c->orders);
	memset(c, 0, sizeof(*c));
}
