/* report_expr.c: user expressions (--where, --limit) checked token by token and translated into SQL. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report.h"

/*
 * Why a tokenizer and not the expression pasted into the query: the expression is user input that ends
 * up in SQL text. Only tokens from a closed set get through, each re-emitted by us: names become SQL we
 * write (with the name itself as a bound parameter), text becomes a bound parameter, numbers are checked
 * digit by digit, and tokens are separated by spaces so no "--" or "/ *" comment can form.
 */

static const char *const expr_keywords[] = {
	"AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", NULL,
};
static const char *const expr_functions[] = {
	"abs", "min", "max", "round", "coalesce", "ifnull", "sqrt", "pow", "power", "exp", "ln", "log", "log2",
	"log10", "floor", "ceil", NULL,
};
static const char expr_allowed[] = "names, numbers, 'text', + - * / % < <= > >= = != ( ) , AND OR NOT IN IS "
	"NULL BETWEEN LIKE CASE WHEN THEN ELSE END and the functions abs min max round coalesce ifnull sqrt pow "
	"exp ln log log2 log10 floor ceil";

static int word_in(const char *w, size_t len, const char *const *list, int nocase)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == len && !(nocase ? strncasecmp(w, list[i], len) : strncmp(w, list[i], len)))
			return i;
	return -1;
}

static int in_names(char **v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(v[i], s))
			return 1;
	return 0;
}

static void add_name(char ***v, size_t *n, const char *s)
{
	if (in_names(*v, *n, s))
		return;
	*v = xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = xstrdup(s);
}

static void metric_sql(struct report *r, struct strbuf *sql, const char *name, double scale)
{
	sb_adds(sql, "(SELECT value");
	if (scale != 1)
		sb_addf(sql, " * %.17g", scale);
	sb_adds(sql, " FROM metrics WHERE result = r.id AND name = ");
	report_bind(r, sql, name);
	sb_addc(sql, ')');
}

/* A probe of the result's host, from the report_probes table that report_probes_cte defines: joined as
 * rpN when report_from joins it, else looked up. */
static void probe_sql(struct report *r, struct strbuf *sql, const char *name)
{
	for (size_t i = 0; i < r->njoined; i++)
		if (!strcmp(r->joined[i], name)) {
			sb_addf(sql, "rp%zu.value", i);
			return;
		}
	sb_adds(sql, "(SELECT value FROM report_probes WHERE worker = r.worker AND name = ");
	report_bind(r, sql, name);
	sb_addc(sql, ')');
}

int report_probes_cte(struct report *r, const char *expr, struct strbuf *sql)
{
	for (size_t i = 0; i < r->njoined; i++)
		free(r->joined[i]);
	free(r->joined);
	r->joined = NULL;
	r->njoined = 0;
	if (report_expr_probes(r, expr, &r->joined, &r->njoined))
		return -1;
	/* Per worker and probe name, the newest value measured on the worker's host: the worker's own GPU
	 * first, then a host-wide probe (gpu NULL), then any GPU of that host. Hosts are matched by name:
	 * facts that change (a driver update) make a new hosts row for the same machine. Computed once for
	 * the few workers rather than for each of a million results; SQLite cannot use an outer row in a
	 * subquery's ORDER BY, so the preference and the id are packed into one number for max(). */
	sb_addf(sql, "WITH report_probes AS %s(SELECT w2.id AS worker, pn.name AS name,"
		" (SELECT value FROM probes WHERE id = (SELECT max(((p.gpu IS w2.gpu) * 2 + (p.gpu IS NULL))"
		" * 4294967296 + p.id) %% 4294967296 FROM probes p JOIN hosts ph ON ph.id = p.host"
		" WHERE ph.hostname = (SELECT hostname FROM hosts WHERE id = w2.host) AND p.value IS NOT NULL"
		" AND p.name = pn.name)) AS value"
		" FROM workers w2, (SELECT DISTINCT name FROM probes) AS pn) ",
		r->materialize ? "MATERIALIZED " : "");
	return 0;
}

static const struct {
	const char *name, *base;
	double scale;
} expr_alias[] = {
	{ "tflops", "gflops", 1e-3 }, { "tbs", "gbs", 1e-3 }, { "ms", "seconds", 1e3 }, { "us", "seconds", 1e6 },
};

/* A name into SQL: a key (host, label.x, a parameter), a metric of the result, a probe of its host. */
static int expr_name(struct report *r, const char *what, const char *name, int flags, struct strbuf *sql,
		     char ***probes, size_t *nprobes)
{
	struct strbuf known = STRBUF_INIT;

	if (!strncmp(name, "metric.", 7)) {
		metric_sql(r, sql, name + 7, 1);
		return 0;
	}
	if (!strncmp(name, "probe.", 6) && (flags & EXPR_PROBES)) {
		add_name(probes, nprobes, name + 6);
		probe_sql(r, sql, name + 6);
		return 0;
	}
	if (!strcmp(name, "host") || !strcmp(name, "gpu") || !strcmp(name, "pass") || !strcmp(name, "replica") ||
	    !strcmp(name, "sweep") || !strncmp(name, "label.", 6) || !strncmp(name, "param.", 6) ||
	    in_names(r->params, r->nparams, name))
		return report_key_sql(r, name, sql);
	if (in_names(r->metrics, r->nmetrics, name)) {
		metric_sql(r, sql, name, 1);
		return 0;
	}
	for (size_t i = 0; i < ARRAY_SIZE(expr_alias); i++)
		if (!strcmp(name, expr_alias[i].name) && in_names(r->metrics, r->nmetrics, expr_alias[i].base)) {
			metric_sql(r, sql, expr_alias[i].base, expr_alias[i].scale);
			return 0;
		}
	if ((flags & EXPR_PROBES) && in_names(r->probes, r->nprobes, name)) {
		add_name(probes, nprobes, name);
		probe_sql(r, sql, name);
		return 0;
	}
	sb_adds(&known, "parameters: ");
	for (size_t i = 0; i < r->nparams; i++)
		sb_addf(&known, "%s%s", i ? ", " : "", r->params[i]);
	sb_adds(&known, r->nparams ? "; metrics: " : "none; metrics: ");
	for (size_t i = 0; i < r->nmetrics; i++)
		sb_addf(&known, "%s%s", i ? ", " : "", r->metrics[i]);
	if (flags & EXPR_PROBES) {
		sb_adds(&known, "; probes: ");
		for (size_t i = 0; i < r->nprobes; i++)
			sb_addf(&known, "%s%s", i ? ", " : "", r->probes[i]);
		if (!r->nprobes)
			sb_adds(&known, "none measured ('sweep hosts probe' measures them)");
	}
	error("unknown name '%s' in %s (%s; also host, gpu, label.NAME%s)", name, what, known.buf,
	      flags & EXPR_PROBES ? "" : "; text goes in single quotes: dtype = 'f32'");
	sb_release(&known);
	return -1;
}

static int expr_walk(struct report *r, const char *what, const char *expr, int flags, struct strbuf *sql,
		     char ***probes, size_t *nprobes)
{
	const char *p = expr;
	int depth = 0, ntok = 0;

	while (*p) {
		const char *s = p;
		int col = (int)(p - expr) + 1;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		if (ntok++)
			sb_addc(sql, ' ');
		if (isalpha((unsigned char)*p) || *p == '_') {
			char *word;
			const char *q;
			int k;

			while (isalnum((unsigned char)*p) || *p == '_' ||
			       (*p == '.' && (isalpha((unsigned char)p[1]) || p[1] == '_')))
				p++;
			word = xstrndup(s, (size_t)(p - s));
			for (q = p; isspace((unsigned char)*q); q++)
				;
			if ((k = word_in(s, (size_t)(p - s), expr_keywords, 1)) >= 0) {
				sb_adds(sql, expr_keywords[k]);
			} else if (*q == '(') {
				if ((k = word_in(s, (size_t)(p - s), expr_functions, 1)) < 0) {
					error("unknown function '%s' at column %d of %s '%s' (allowed: %s)", word, col,
					      what, expr, expr_allowed);
					free(word);
					return -1;
				}
				sb_adds(sql, expr_functions[k]);
			} else if (expr_name(r, what, word, flags, sql, probes, nprobes)) {
				free(word);
				return -1;
			}
			free(word);
		} else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
			while (isdigit((unsigned char)*p))
				p++;
			if (*p == '.')
				for (p++; isdigit((unsigned char)*p); p++)
					;
			if ((*p == 'e' || *p == 'E') && (isdigit((unsigned char)p[1]) ||
			    ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
				p += 2;
				while (isdigit((unsigned char)*p))
					p++;
			}
			if (isalnum((unsigned char)*p) || *p == '_' || *p == '.')
				return error("malformed number at column %d of %s '%s'", col, what, expr);
			sb_add(sql, s, (size_t)(p - s));
		} else if (*p == '\'') {
			struct strbuf text = STRBUF_INIT;

			for (p++;; p++) {
				if (!*p) {
					sb_release(&text);
					return error("unterminated 'text' at column %d of %s '%s'", col, what, expr);
				}
				if (*p == '\'' && p[1] == '\'')
					p++;
				else if (*p == '\'')
					break;
				sb_addc(&text, *p);
			}
			p++;
			report_bind(r, sql, text.buf);
			sb_release(&text);
		} else if (*p == '"') {
			return error("text goes in single quotes, not double (column %d of %s '%s')", col, what,
				     expr);
		} else if (!strncmp(p, "<=", 2) || !strncmp(p, ">=", 2) || !strncmp(p, "<>", 2) ||
			   !strncmp(p, "!=", 2) || !strncmp(p, "==", 2)) {
			sb_add(sql, p, 2);
			p += 2;
		} else if (strchr("+-*%<>=,", *p)) {
			sb_addc(sql, *p++);
		} else if (*p == '/') {
			/* Real division: "M / K" on integer parameters must not truncate. Multiplying the left
			 * operand by 1.0 keeps the precedence, as * and / bind alike from the left. */
			sb_adds(sql, "* 1.0 /");
			p++;
		} else if (*p == '(') {
			depth++;
			sb_addc(sql, *p++);
		} else if (*p == ')') {
			if (--depth < 0)
				return error("unbalanced ')' at column %d of %s '%s'", col, what, expr);
			sb_addc(sql, *p++);
		} else {
			return error("unexpected '%c' at column %d of %s '%s' (allowed: %s)", *p, col, what, expr,
				     expr_allowed);
		}
	}
	if (depth)
		return error("unbalanced '(' in %s '%s'", what, expr);
	if (!ntok)
		return error("%s is empty", what);
	return 0;
}

int report_expr_sql(struct report *r, const char *what, const char *expr, int flags, struct strbuf *sql)
{
	char **probes = NULL;
	size_t n = 0;
	int ret = expr_walk(r, what, expr, flags, sql, &probes, &n);

	for (size_t i = 0; i < n; i++)
		free(probes[i]);
	free(probes);
	return ret;
}

int report_expr_probes(struct report *r, const char *expr, char ***names, size_t *n)
{
	struct strbuf sql = STRBUF_INIT;
	size_t nbind = r->nbind;
	int ret;

	*names = NULL;
	*n = 0;
	ret = expr_walk(r, "--limit", expr, EXPR_PROBES, &sql, names, n);
	/* the parameters bound for this throwaway SQL are dropped again */
	while (r->nbind > nbind)
		free(r->binds[--r->nbind]);
	sb_release(&sql);
	return ret;
}
