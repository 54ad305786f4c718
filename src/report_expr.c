/* report_expr.c: the SQL expressions of a report: bound values, keys, metrics, and the user's expressions
 * (--where, --limit) checked token by token and translated. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report_query.h"

/*
 * Why tokens and not the expression pasted into the query: the expression is user input that ends up in
 * SQL text. Only tokens from a closed set get through, in an order the grammar allows (report_expr_parse.c),
 * each re-emitted by us: names become SQL we write (with the name itself as a bound parameter), text
 * becomes a bound parameter, numbers are checked digit by digit, and tokens are separated by spaces so no
 * "--" or "/ *" comment can form.
 */

/* One expression being translated. */
struct expr {
	const struct report_ctx *c;
	struct report_query *q;
	const char *what;      /* the option, for messages */
	const char *text;      /* the whole expression */
	int flags;
	struct strbuf *sql;    /* q's */
	char ***probes;        /* the probe names used (owned by the caller) */
	size_t *nprobes;
	int ntok;              /* tokens written */
};

static int in_names(char **v, const char *s)
{
	for (size_t i = 0; v[i]; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

static void add_name(char ***v, size_t *n, const char *s)
{
	for (size_t i = 0; i < *n; i++)
		if (!strcmp((*v)[i], s))
			return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

/* ---- bound values, keys, metrics ---- */

void report_expr_bind(struct report_query *q, const char *value)
{
	ALLOC_GROW(q->binds, q->nbind + 1, q->alloc_binds);
	q->binds[q->nbind++] = xstrdup(value);
	sb_addf(&q->sql, "?%zu", q->nbind);
}

/* A JSON path for one object member, quoted so that any name but one holding '"' works. */
static int json_path(const char *prefix, const char *name, char *buf, size_t n)
{
	if (strchr(name, '"') || strchr(name, '\\'))
		return fail_usage("a key cannot hold '\"' or '\\': '%s'", name);
	snprintf(buf, n, "%s\"%s\"", prefix, name);
	return FAIL_OK;
}

/* fn(column, path): sweep_param (store_keys.c) for a cell's params, sweep_fact for a host's facts: what
 * json_extract gives, without parsing the JSON of each of a million rows. */
static int json_extract(struct report_query *q, const char *fn, const char *column, const char *prefix,
			const char *name)
{
	char path[512];
	int ret;

	if ((ret = json_path(prefix, name, path, sizeof(path))))
		return ret;
	sb_addf(&q->sql, "%s(%s, ", fn, column);
	report_expr_bind(q, path);
	sb_addc(&q->sql, ')');
	return FAIL_OK;
}

static const char *const special_key[][2] = {
	{ "host", "h.hostname" }, { "gpu", "w.gpu" }, { "pass", "c.pass" },
	{ "replica", "c.replica" }, { "sweep", "c.sweep" },
};

/* The parameter a key names (param.NAME or NAME), or NULL for any other key. */
static const char *key_param(const struct report_ctx *c, const char *key)
{
	const char *name = key;

	for (size_t i = 0; i < ARRAY_SIZE(special_key); i++)
		if (!strcmp(key, special_key[i][0]))
			return NULL;
	if (report_expr_is_item(c, key) || !strncmp(key, "label.", 6))
		return NULL;
	if (!strncmp(key, "param.", 6) && key[6])
		name = key + 6;
	return in_names(c->params, name) ? name : NULL;
}

int report_expr_key(const struct report_ctx *c, struct report_query *q, const char *key)
{
	struct strbuf known = STRBUF_INIT;
	const char *name = key_param(c, key), *near;

	for (size_t i = 0; i < ARRAY_SIZE(special_key); i++)
		if (!strcmp(key, special_key[i][0])) {
			sb_adds(&q->sql, special_key[i][1]);
			return FAIL_OK;
		}
	if (report_expr_is_item(c, key)) {
		sb_adds(&q->sql, "m.item");
		return FAIL_OK;
	}
	if (!strncmp(key, "label.", 6) && key[6])
		return json_extract(q, "sweep_fact", "h.id, h.facts", "$.labels.", key + 6);
	if (name) {
		const struct report_order *o = report_ctx_order(c, name);
		int ret = json_extract(q, "sweep_param", "c.params", "$.", name);

		if (!ret && o)
			sb_addf(&q->sql, " COLLATE %s", o->collation);
		return ret;
	}
	name = !strncmp(key, "param.", 6) && key[6] ? key + 6 : key;
	report_ctx_join(&known, c->params, c->nparams);
	near = c->nparams ? closest_name(name, (const char *const *)c->params) : NULL;
	error("unknown key '%s'%s%s%s: not a parameter of sweep '%s' (%s), nor host, gpu, pass, replica or "
	      "label.NAME", key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
	      c->sweep, known.buf);
	sb_release(&known);
	return FAIL_USAGE;
}

const char *report_expr_key_collation(const struct report_ctx *c, const char *key)
{
	const char *name = key_param(c, key);
	const struct report_order *o = name ? report_ctx_order(c, name) : NULL;

	return o ? o->collation : NULL;
}

/* Whether key is read from the result's worker or host: host, gpu, label.NAME. */
static int key_of_worker(const char *key)
{
	return !strcmp(key, "host") || !strcmp(key, "gpu") || (!strncmp(key, "label.", 6) && key[6]);
}

int report_expr_key_once(const struct report_ctx *c, struct report_query *q, const char *key)
{
	int ret;

	/* kw and kh, not w and h: report_query_trim drops the joins of w and h nothing reads */
	if (!strcmp(key, "host")) {
		sb_adds(&q->sql, "(SELECT kh.hostname FROM workers kw JOIN hosts kh ON kh.id = kw.host"
			" WHERE kw.id = r.worker)");
	} else if (!strcmp(key, "gpu")) {
		sb_adds(&q->sql, "(SELECT kw.gpu FROM workers kw WHERE kw.id = r.worker)");
	} else if (key_of_worker(key)) {
		sb_adds(&q->sql, "(SELECT ");
		if ((ret = json_extract(q, "sweep_fact", "kh.id, kh.facts", "$.labels.", key + 6)))
			return ret;
		sb_adds(&q->sql, " FROM workers kw JOIN hosts kh ON kh.id = kw.host WHERE kw.id = r.worker)");
	} else {
		return report_expr_key(c, q, key);
	}
	return FAIL_OK;
}

int report_expr_group_once(const struct report_ctx *c, struct report_query *q, const char *const *key, int n)
{
	const char **rest = xcalloc((size_t)n + 1, sizeof(*rest));
	int by_worker = 0, ret;

	for (int i = 0; i < n; i++)
		if (key[i] && key_of_worker(key[i]))
			by_worker = 1;
		else
			rest[i] = key[i];
	ret = report_expr_group(c, q, rest, n);
	if (!ret && by_worker)
		sb_adds(&q->sql, ", r.worker");
	free(rest);
	return ret;
}

int report_expr_group(const struct report_ctx *c, struct report_query *q, const char *const *key, int n)
{
	char path[512];
	int np = 0, ret;

	for (int i = 0; i < n; i++)
		np += key[i] && key_param(c, key[i]);
	sb_addf(&q->sql, "sweep_group(%s, %d", np ? "c.params" : "NULL", np);
	for (int i = 0; i < n; i++) {
		const char *name = key[i] ? key_param(c, key[i]) : NULL;

		if (!name)
			continue;
		if ((ret = json_path("$.", name, path, sizeof(path))))
			return ret;
		sb_adds(&q->sql, ", ");
		report_expr_bind(q, path);
	}
	for (int i = 0; i < n; i++) {
		if (!key[i] || key_param(c, key[i]))
			continue;
		sb_adds(&q->sql, ", ");
		if ((ret = report_expr_key(c, q, key[i])))
			return ret;
	}
	return FAIL_OK;
}

int report_expr_is_item(const struct report_ctx *c, const char *key)
{
	return key && !strcmp(key, "item") && !in_names(c->params, key);
}

void report_expr_metric(const struct report_plan *p, struct report_query *q)
{
	if (p->metric_scale == 1)
		sb_adds(&q->sql, "m.value");
	else
		sb_addf(&q->sql, "(m.value * %.17g)", p->metric_scale);
}

/* Metrics reports derive from stored ones: a GPU kernel stores gflops, a reader asks for tflops. */
static const struct {
	const char *name, *base;
	double scale;
} metric_alias[] = {
	{ "tflops", "gflops", 1e-3 }, { "tbs", "gbs", 1e-3 }, { "ms", "seconds", 1e3 },
	{ "us", "seconds", 1e6 },
};

int report_expr_metric_lookup(const struct report_ctx *c, const char *name, const char **base, double *scale)
{
	*base = name;
	*scale = 1;
	if (in_names(c->metrics, name))
		return 1;
	for (size_t i = 0; i < ARRAY_SIZE(metric_alias); i++)
		if (!strcmp(name, metric_alias[i].name) && in_names(c->metrics, metric_alias[i].base)) {
			*base = metric_alias[i].base;
			*scale = metric_alias[i].scale;
			return 1;
		}
	return 0;
}

/* The metrics sweep itself stores (measure.c, command_values.c, gang.c and the kernels' derive: *_gbs,
 * errors), with the way each improves: a time lower, a rate higher. */
static const struct {
	const char *name;
	int better;
} metric_better[] = {
	{ "seconds", BETTER_LOWER }, { "gflops", BETTER_HIGHER }, { "gbs", BETTER_HIGHER },
	{ "*_gbs", BETTER_HIGHER }, { "errors", BETTER_LOWER },
};

int report_expr_metric_better(const char *base)
{
	size_t n = strlen(base);

	for (size_t i = 0; i < ARRAY_SIZE(metric_better); i++) {
		const char *m = metric_better[i].name;

		if (!strcmp(m, base) || (*m == '*' && n > strlen(m) - 1 && !strcmp(base + n - strlen(m + 1), m + 1)))
			return metric_better[i].better;
	}
	return BETTER_UNKNOWN;
}

/* ---- the user's expressions ---- */

/* A stored metric of the result, by a subquery: an expression may name several. */
static void metric_sql(struct report_query *q, const char *name, double scale)
{
	sb_adds(&q->sql, "(SELECT value");
	if (scale != 1)
		sb_addf(&q->sql, " * %.17g", scale);
	sb_adds(&q->sql, " FROM metrics WHERE result = r.id AND name = ");
	report_expr_bind(q, name);
	sb_addc(&q->sql, ')');
}

/* A probe of the result's host, from the report_probes table that report_query_probes defines: joined as
 * rpN when the statement joins it, else looked up. */
static void probe_sql(struct report_query *q, const char *name)
{
	for (size_t i = 0; i < q->njoined; i++)
		if (!strcmp(q->joined[i], name)) {
			sb_addf(&q->sql, "rp%zu.value", i);
			return;
		}
	sb_adds(&q->sql, "(SELECT value FROM report_probes WHERE worker = r.worker AND name = ");
	report_expr_bind(q, name);
	sb_addc(&q->sql, ')');
}

/* "unknown name" with every name the expression could have used; a "name" in double quotes may have been
 * meant as text. */
static int expr_unknown(struct expr *e, const char *name, int col)
{
	int quoted = e->text[col - 1] == '"';

	const struct report_ctx *c = e->c;
	struct strbuf known = STRBUF_INIT;

	sb_adds(&known, "parameters: ");
	for (size_t i = 0; i < c->nparams; i++)
		sb_addf(&known, "%s%s", i ? ", " : "", c->params[i]);
	sb_adds(&known, c->nparams ? "; metrics: " : "none; metrics: ");
	for (size_t i = 0; i < c->nmetrics; i++)
		sb_addf(&known, "%s%s", i ? ", " : "", c->metrics[i]);
	if (e->flags & EXPR_PROBES) {
		sb_adds(&known, "; probes: ");
		for (size_t i = 0; i < c->nprobes; i++)
			sb_addf(&known, "%s%s", i ? ", " : "", c->probes[i]);
		if (!c->nprobes)
			sb_adds(&known, "none measured ('sweep hosts probe' measures them)");
	}
	if (quoted)
		error("unknown name \"%s\" at column %d of %s (%s; also host, gpu, label.NAME): text goes in single "
		      "quotes, not double: '%s'", name, col, e->what, known.buf, name);
	else
		error("unknown name '%s' in %s (%s; also host, gpu, label.NAME%s)", name, e->what, known.buf,
		      e->flags & EXPR_PROBES ? "" : "; text goes in single quotes: dtype = 'f32'");
	sb_release(&known);
	return FAIL_USAGE;
}

/* A name into SQL: a key (host, label.x, a parameter), a metric of the result, a probe of its host.
 * The prefixes param., metric. and probe. settle a name that is more than one of these. */
static int expr_name(struct expr *e, const char *name, int col)
{
	const struct report_ctx *c = e->c;
	const char *base;
	double scale;

	if (!strncmp(name, "metric.", 7)) {
		metric_sql(e->q, name + 7, 1);
		return FAIL_OK;
	}
	if (!strncmp(name, "probe.", 6) && (e->flags & EXPR_PROBES)) {
		add_name(e->probes, e->nprobes, name + 6);
		probe_sql(e->q, name + 6);
		return FAIL_OK;
	}
	if (!strcmp(name, "host") || !strcmp(name, "gpu") || !strcmp(name, "pass") ||
	    !strcmp(name, "replica") || !strcmp(name, "sweep") || !strncmp(name, "label.", 6) ||
	    !strncmp(name, "param.", 6) || in_names(c->params, name))
		return report_expr_key(c, e->q, name);
	if (report_expr_metric_lookup(c, name, &base, &scale)) {
		metric_sql(e->q, base, scale);
		return FAIL_OK;
	}
	if ((e->flags & EXPR_PROBES) && in_names(c->probes, name)) {
		add_name(e->probes, e->nprobes, name);
		probe_sql(e->q, name);
		return FAIL_OK;
	}
	return expr_unknown(e, name, col);
}

/* One token of the expression into SQL, after a space (so no "--" or "/ *" comment can form): a name as SQL
 * we write, text as a bound value, the rest as it is; division is real. */
static int expr_emit(void *arg, const struct report_token *t)
{
	struct expr *e = arg;

	if (e->ntok++)
		sb_addc(e->sql, ' ');
	switch (t->kind) {
	case TOK_NAME:
		return expr_name(e, t->text, t->col);
	case TOK_TEXT:
		report_expr_bind(e->q, t->text);
		return FAIL_OK;
	case TOK_OP:
		/* Real division: "M / K" on integer parameters must not truncate. Multiplying the left operand
		 * by 1.0 keeps the precedence: * and / bind alike, from the left. */
		sb_adds(e->sql, !strcmp(t->text, "/") ? "* 1.0 /" : t->text);
		return FAIL_OK;
	default:
		sb_adds(e->sql, t->text);
		return FAIL_OK;
	}
}

static int expr_walk(struct expr *e)
{
	return report_expr_parse(e->c, e->what, e->text, expr_emit, e);
}

int report_expr_sql(const struct report_ctx *c, struct report_query *q, const char *what, const char *expr,
		    int flags)
{
	char **probes = NULL;
	size_t n = 0;
	struct expr e = { c, q, what, expr, flags, &q->sql, &probes, &n, 0 };
	int ret = expr_walk(&e);

	for (size_t i = 0; i < n; i++)
		free(probes[i]);
	free(probes);
	return ret;
}

int report_expr_probes(const struct report_ctx *c, const char *expr, char ***names, size_t *n)
{
	struct report_query scratch = REPORT_QUERY_INIT;
	struct expr e = { c, &scratch, "--limit", expr, EXPR_PROBES, &scratch.sql, names, n, 0 };
	int ret;

	*names = NULL;
	*n = 0;
	ret = expr_walk(&e);
	/* the SQL and parameters of this throwaway translation are dropped */
	sb_release(&scratch.sql);
	for (size_t i = 0; i < scratch.nbind; i++)
		free(scratch.binds[i]);
	free(scratch.binds);
	return ret;
}
