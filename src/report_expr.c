/* report_expr.c: user expressions (--where, --limit) checked token by token and translated into SQL, and
 * the FROM ... WHERE every report query shares (the sweep, --where, excluded hosts). */
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
	struct report *r;
	const char *what;      /* the option, for messages */
	const char *text;      /* the whole expression */
	int flags;
	struct strbuf *sql;
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

/* "unknown name" with every name the expression could have used. */
static int expr_unknown(struct expr *e, const char *name)
{
	struct report *r = e->r;
	struct strbuf known = STRBUF_INIT;

	sb_adds(&known, "parameters: ");
	for (size_t i = 0; i < r->nparams; i++)
		sb_addf(&known, "%s%s", i ? ", " : "", r->params[i]);
	sb_adds(&known, r->nparams ? "; metrics: " : "none; metrics: ");
	for (size_t i = 0; i < r->nmetrics; i++)
		sb_addf(&known, "%s%s", i ? ", " : "", r->metrics[i]);
	if (e->flags & EXPR_PROBES) {
		sb_adds(&known, "; probes: ");
		for (size_t i = 0; i < r->nprobes; i++)
			sb_addf(&known, "%s%s", i ? ", " : "", r->probes[i]);
		if (!r->nprobes)
			sb_adds(&known, "none measured ('sweep hosts probe' measures them)");
	}
	error("unknown name '%s' in %s (%s; also host, gpu, label.NAME%s)", name, e->what, known.buf,
	      e->flags & EXPR_PROBES ? "" : "; text goes in single quotes: dtype = 'f32'");
	sb_release(&known);
	return -1;
}

/* A name into SQL: a key (host, label.x, a parameter), a metric of the result, a probe of its host.
 * The prefixes param., metric. and probe. settle a name that is more than one of these. */
static int expr_name(struct expr *e, const char *name)
{
	struct report *r = e->r;
	const char *base;
	double scale;

	if (!strncmp(name, "metric.", 7)) {
		metric_sql(r, e->sql, name + 7, 1);
		return 0;
	}
	if (!strncmp(name, "probe.", 6) && (e->flags & EXPR_PROBES)) {
		add_name(e->probes, e->nprobes, name + 6);
		probe_sql(r, e->sql, name + 6);
		return 0;
	}
	if (!strcmp(name, "host") || !strcmp(name, "gpu") || !strcmp(name, "pass") ||
	    !strcmp(name, "replica") || !strcmp(name, "sweep") || !strncmp(name, "label.", 6) ||
	    !strncmp(name, "param.", 6) || in_names(r->params, r->nparams, name))
		return report_key_sql(r, name, e->sql);
	if (report_metric_lookup(r, name, &base, &scale)) {
		metric_sql(r, e->sql, base, scale);
		return 0;
	}
	if ((e->flags & EXPR_PROBES) && in_names(r->probes, r->nprobes, name)) {
		add_name(e->probes, e->nprobes, name);
		probe_sql(r, e->sql, name);
		return 0;
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
		ret = error("unknown function '%s' at column %d of %s '%s' (allowed: %s)", word, col, e->what,
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
		return error("malformed number at column %d of %s '%s'", col, e->what, e->text);
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
			return error("unterminated 'text' at column %d of %s '%s'", col, e->what, e->text);
		}
		if (**p == '\'' && (*p)[1] == '\'')
			(*p)++;
		else if (**p == '\'')
			break;
		sb_addc(&text, **p);
	}
	(*p)++;
	report_bind(e->r, e->sql, text.buf);
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
				return -1;
		} else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
			if (expr_number(e, &p, col))
				return -1;
		} else if (*p == '\'') {
			if (expr_text(e, &p, col))
				return -1;
		} else if (*p == '"') {
			return error("text goes in single quotes, not double (column %d of %s '%s')", col,
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
				return error("unbalanced ')' at column %d of %s '%s'", col, e->what, e->text);
			sb_addc(e->sql, *p++);
		} else {
			return error("unexpected '%c' at column %d of %s '%s' (allowed: %s)", *p, col,
				     e->what, e->text, expr_allowed);
		}
	}
	if (depth)
		return error("unbalanced '(' in %s '%s'", e->what, e->text);
	if (!ntok)
		return error("%s is empty", e->what);
	return 0;
}

int report_expr_sql(struct report *r, const char *what, const char *expr, int flags, struct strbuf *sql)
{
	char **probes = NULL;
	size_t n = 0;
	struct expr e = { r, what, expr, flags, sql, &probes, &n };
	int ret = expr_walk(&e);

	for (size_t i = 0; i < n; i++)
		free(probes[i]);
	free(probes);
	return ret;
}

int report_expr_probes(struct report *r, const char *expr, char ***names, size_t *n)
{
	struct strbuf sql = STRBUF_INIT;
	size_t nbind = r->nbind;
	struct expr e = { r, "--limit", expr, EXPR_PROBES, &sql, names, n };
	int ret;

	*names = NULL;
	*n = 0;
	ret = expr_walk(&e);
	/* the parameters bound for this throwaway SQL are dropped again */
	while (r->nbind > nbind)
		free(r->binds[--r->nbind]);
	sb_release(&sql);
	return ret;
}

int report_from(struct report *r, struct strbuf *sql, int join)
{
	sb_adds(sql, " FROM results r JOIN cells c ON c.id = r.cell"
		" LEFT JOIN workers w ON w.id = r.worker LEFT JOIN hosts h ON h.id = w.host");
	if ((join & JOIN_METRIC) && r->metric_noise) {
		/* the result's own noise, as if it were a stored metric */
		sb_adds(sql, " JOIN (SELECT id AS result, noise AS value FROM results WHERE noise IS NOT NULL) m"
			" ON m.result = r.id");
	} else if (join & JOIN_METRIC) {
		sb_adds(sql, " JOIN metrics m ON m.result = r.id AND m.name = ");
		report_bind(r, sql, r->metric_base);
	}
	if (join & JOIN_ITEMS) {
		sb_adds(sql, " JOIN items i ON i.result = r.id AND i.metric = ");
		report_bind(r, sql, r->metric_base);
	}
	for (size_t i = 0; (join & JOIN_PROBES) && i < r->njoined; i++) {
		sb_addf(sql, " LEFT JOIN report_probes rp%zu ON rp%zu.worker = r.worker AND rp%zu.name = ",
			i, i, i);
		report_bind(r, sql, r->joined[i]);
	}
	/* Retired cells (no longer in the spec: sweep run --replan) keep their results, out of reports. */
	sb_adds(sql, " WHERE r.status = 'ok' AND c.state <> 'retired' AND c.sweep = ");
	report_bind(r, sql, r->sweep);
	if (r->strict)
		sb_adds(sql, " AND NOT (" STORE_IMPRECISE("r") ")");
	if (r->where) {
		sb_adds(sql, " AND (");
		if (report_expr_sql(r, "--where", r->where, 0, sql))
			return -1;
		sb_addc(sql, ')');
	}
	if (r->nexcluded) {
		sb_adds(sql, " AND coalesce(h.hostname, '') NOT IN (");
		for (size_t i = 0; i < r->nexcluded; i++) {
			if (i)
				sb_addc(sql, ',');
			report_bind(r, sql, r->excluded[i]);
		}
		sb_addc(sql, ')');
	}
	return 0;
}
