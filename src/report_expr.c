/* report_expr.c: the SQL expressions of a report: bound values, keys, metrics, and the user's expressions
 * (--where, --limit) checked token by token and translated. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report_int.h"

/*
 * Why a tokenizer and not the expression pasted into the query: the expression is user input that ends
 * up in SQL text. Only tokens from a closed set get through, each re-emitted by us: names become SQL we
 * write (with the name itself as a bound parameter), text becomes a bound parameter, numbers are checked
 * digit by digit, and tokens are separated by spaces so no "--" or "/ *" comment can form.
 */

static const char *const expr_keywords[] = {
	"AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END",
	NULL,
};
static const char *const expr_functions[] = {
	"abs", "min", "max", "round", "coalesce", "ifnull", "sqrt", "pow", "power", "exp", "ln", "log",
	"log2", "log10", "floor", "ceil", NULL,
};
static const char expr_allowed[] = "names, numbers, 'text', + - * / % < <= > >= = != ( ) , AND OR NOT IN "
	"IS NULL BETWEEN LIKE CASE WHEN THEN ELSE END and the functions abs min max round coalesce ifnull "
	"sqrt pow exp ln log log2 log10 floor ceil";

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
};

/* Index of the word (len bytes at w) in list, ignoring case; -1 when absent. */
static int word_in(const char *w, size_t len, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == len && !strncasecmp(w, list[i], len))
			return i;
	return -1;
}

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

static int json_extract(struct report_query *q, const char *column, const char *prefix, const char *name)
{
	char path[512];
	int ret;

	if ((ret = json_path(prefix, name, path, sizeof(path))))
		return ret;
	sb_addf(&q->sql, "json_extract(%s, ", column);
	report_expr_bind(q, path);
	sb_addc(&q->sql, ')');
	return FAIL_OK;
}

int report_expr_key(const struct report_ctx *c, struct report_query *q, const char *key)
{
	static const char *const special[][2] = {
		{ "host", "h.hostname" }, { "gpu", "w.gpu" }, { "pass", "c.pass" },
		{ "replica", "c.replica" }, { "sweep", "c.sweep" },
	};
	struct strbuf known = STRBUF_INIT;
	const char *name = key, *near;

	for (size_t i = 0; i < ARRAY_SIZE(special); i++)
		if (!strcmp(key, special[i][0])) {
			sb_adds(&q->sql, special[i][1]);
			return FAIL_OK;
		}
	if (!strncmp(key, "label.", 6) && key[6])
		return json_extract(q, "h.facts", "$.labels.", key + 6);
	if (!strncmp(key, "param.", 6) && key[6])
		name = key + 6;
	if (in_names(c->params, name))
		return json_extract(q, "c.params", "$.", name);
	report_ctx_join(&known, c->params, c->nparams);
	near = c->nparams ? closest_name(name, (const char *const *)c->params) : NULL;
	error("unknown key '%s'%s%s%s: not a parameter of sweep '%s' (%s), nor host, gpu, pass, replica or "
	      "label.NAME", key, near ? " (did you mean '" : "", near ? near : "", near ? "'?)" : "",
	      c->sweep, known.buf);
	sb_release(&known);
	return FAIL_USAGE;
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

/* "unknown name" with every name the expression could have used. */
static int expr_unknown(struct expr *e, const char *name)
{
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
	error("unknown name '%s' in %s (%s; also host, gpu, label.NAME%s)", name, e->what, known.buf,
	      e->flags & EXPR_PROBES ? "" : "; text goes in single quotes: dtype = 'f32'");
	sb_release(&known);
	return FAIL_USAGE;
}

/* A name into SQL: a key (host, label.x, a parameter), a metric of the result, a probe of its host.
 * The prefixes param., metric. and probe. settle a name that is more than one of these. */
static int expr_name(struct expr *e, const char *name)
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
	return expr_unknown(e, name);
}

/* A word at *p: a keyword, a function (followed by '('), or a name. */
static int expr_word(struct expr *e, const char **p, int col)
{
	const char *s = *p, *q;
	char *word;
	int k, ret = 0;

	while (isalnum((unsigned char)**p) || **p == '_' ||
	       (**p == '.' && (isalpha((unsigned char)(*p)[1]) || (*p)[1] == '_')))
		(*p)++;
	word = xstrndup(s, (size_t)(*p - s));
	for (q = *p; isspace((unsigned char)*q); q++)
		;
	if ((k = word_in(s, (size_t)(*p - s), expr_keywords)) >= 0)
		sb_adds(e->sql, expr_keywords[k]);
	else if (*q == '(' && (k = word_in(s, (size_t)(*p - s), expr_functions)) >= 0)
		sb_adds(e->sql, expr_functions[k]);
	else if (*q == '(')
		ret = fail_usage("unknown function '%s' at column %d of %s '%s' (allowed: %s)", word, col, e->what,
			    e->text, expr_allowed);
	else
		ret = expr_name(e, word);
	free(word);
	return ret;
}

/* A number at *p: digits, a fraction, an exponent; nothing may stick to it ("12abc", "1e"). */
static int expr_number(struct expr *e, const char **p, int col)
{
	const char *s = *p;

	while (isdigit((unsigned char)**p))
		(*p)++;
	if (**p == '.')
		for ((*p)++; isdigit((unsigned char)**p); (*p)++)
			;
	if ((**p == 'e' || **p == 'E') && (isdigit((unsigned char)(*p)[1]) ||
	    (((*p)[1] == '+' || (*p)[1] == '-') && isdigit((unsigned char)(*p)[2])))) {
		*p += 2;
		while (isdigit((unsigned char)**p))
			(*p)++;
	}
	if (isalnum((unsigned char)**p) || **p == '_' || **p == '.')
		return fail_usage("malformed number at column %d of %s '%s'", col, e->what, e->text);
	sb_add(e->sql, s, (size_t)(*p - s));
	return 0;
}

/* 'text' at *p ('' for a quote), bound as a parameter. */
static int expr_text(struct expr *e, const char **p, int col)
{
	struct strbuf text = STRBUF_INIT;

	for ((*p)++;; (*p)++) {
		if (!**p) {
			sb_release(&text);
			return fail_usage("unterminated 'text' at column %d of %s '%s'", col, e->what, e->text);
		}
		if (**p == '\'' && (*p)[1] == '\'')
			(*p)++;
		else if (**p == '\'')
			break;
		sb_addc(&text, **p);
	}
	(*p)++;
	report_expr_bind(e->q, text.buf);
	sb_release(&text);
	return 0;
}

static int expr_walk(struct expr *e)
{
	const char *p = e->text;
	int depth = 0, ntok = 0;

	while (*p) {
		int col = (int)(p - e->text) + 1;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (ntok++)
			sb_addc(e->sql, ' ');
		if (isalpha((unsigned char)*p) || *p == '_') {
			if (expr_word(e, &p, col))
				return FAIL_USAGE;
		} else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
			if (expr_number(e, &p, col))
				return FAIL_USAGE;
		} else if (*p == '\'') {
			if (expr_text(e, &p, col))
				return FAIL_USAGE;
		} else if (*p == '"') {
			return fail_usage("text goes in single quotes, not double (column %d of %s '%s')", col,
				     e->what, e->text);
		} else if (!strncmp(p, "<=", 2) || !strncmp(p, ">=", 2) || !strncmp(p, "<>", 2) ||
			   !strncmp(p, "!=", 2) || !strncmp(p, "==", 2)) {
			sb_add(e->sql, p, 2);
			p += 2;
		} else if (strchr("+-*%<>=,", *p)) {
			sb_addc(e->sql, *p++);
		} else if (*p == '/') {
			/* Real division: "M / K" on integer parameters must not truncate. Multiplying the
			 * left operand by 1.0 keeps the precedence: * and / bind alike, from the left. */
			sb_adds(e->sql, "* 1.0 /");
			p++;
		} else if (*p == '(') {
			depth++;
			sb_addc(e->sql, *p++);
		} else if (*p == ')') {
			if (--depth < 0)
				return fail_usage("unbalanced ')' at column %d of %s '%s'", col, e->what, e->text);
			sb_addc(e->sql, *p++);
		} else {
			return fail_usage("unexpected '%c' at column %d of %s '%s' (allowed: %s)", *p, col,
				     e->what, e->text, expr_allowed);
		}
	}
	if (depth)
		return fail_usage("unbalanced '(' in %s '%s'", e->what, e->text);
	if (!ntok)
		return fail_usage("%s is empty", e->what);
	return 0;
}

int report_expr_sql(const struct report_ctx *c, struct report_query *q, const char *what, const char *expr,
		    int flags)
{
	char **probes = NULL;
	size_t n = 0;
	struct expr e = { c, q, what, expr, flags, &q->sql, &probes, &n };
	int ret = expr_walk(&e);

	for (size_t i = 0; i < n; i++)
		free(probes[i]);
	free(probes);
	return ret;
}

int report_expr_probes(const struct report_ctx *c, const char *expr, char ***names, size_t *n)
{
	struct report_query scratch = REPORT_QUERY_INIT;
	struct expr e = { c, &scratch, "--limit", expr, EXPR_PROBES, &scratch.sql, names, n };
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
