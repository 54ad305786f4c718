/* report_expr_parse.c: a user expression (--where, --limit) read into tokens and checked against its
 * grammar, so that what reaches SQL is always an expression SQLite takes, and any other is refused here
 * with the column at fault: no SQL error ever stands for a mistake in an expression. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "report_query.h"

/*
 * The grammar, a subset of SQLite's expressions (what docs/reports.md "Filters" allows), stricter where
 * SQLite is odd (one comparison, not a chain):
 *   expr    := and { OR and }                  and  := not { AND not }       not := NOT not | cmp
 *   cmp     := sum [ op sum | IS [NOT] sum | [NOT] IN ( expr {, expr} ) | [NOT] BETWEEN sum AND sum
 *                  | [NOT] LIKE sum ]           op: = == != <> < <= > >=
 *   sum     := product { (+|-) product }       product := unary { (*|/|%) unary }
 *   unary   := (-|+) unary | primary
 *   primary := number | 'text' | NULL | name | "name" | function ( expr {, expr} ) | ( expr )
 *            | CASE [expr] WHEN expr THEN expr { WHEN expr THEN expr } [ELSE expr] END
 * A word of the syntax is a keyword wherever it stands; a parameter or metric of that name is written in
 * double quotes ("case"), as SQL quotes identifiers.
 */

static const char *const keywords[] = {
	"AND", "OR", "NOT", "IN", "IS", "NULL", "BETWEEN", "LIKE", "CASE", "WHEN", "THEN", "ELSE", "END", NULL,
};
/* SQLite's scalar functions of these names, and how many arguments each takes (min and max with one
 * argument are aggregates, which a condition on one result cannot use). */
static const struct {
	const char *name;
	int min, max;
} functions[] = {
	{ "abs", 1, 1 }, { "min", 2, 100 }, { "max", 2, 100 }, { "round", 1, 2 }, { "coalesce", 2, 100 },
	{ "ifnull", 2, 2 }, { "sqrt", 1, 1 }, { "pow", 2, 2 }, { "power", 2, 2 }, { "exp", 1, 1 },
	{ "ln", 1, 1 }, { "log", 1, 2 }, { "log2", 1, 1 }, { "log10", 1, 1 }, { "floor", 1, 1 },
	{ "ceil", 1, 1 },
};
static const char allowed[] = "names, \"names\", numbers, 'text', + - * / % < <= > >= = != ( ) , AND OR NOT IN "
	"IS NULL BETWEEN LIKE CASE WHEN THEN ELSE END and the functions abs min max round coalesce ifnull "
	"sqrt pow exp ln log log2 log10 floor ceil";

/* Nesting (parentheses, functions, CASE, NOT and signs) and the height of the expression's tree are
 * bounded: SQLite refuses trees deeper than 1000, and the translation adds a level per division. */
#define MAX_NESTING 64
#define MAX_HEIGHT 200

/* An expression being read. */
struct rd {
	const struct report_ctx *c;
	const char *what, *text;
	int (*emit)(void *arg, const struct report_token *t);
	void *arg;
	struct report_token *t;
	size_t n, alloc, at;
	int nesting;
};

static int word_in(const char *w, size_t len, const char *const *list)
{
	for (int i = 0; list[i]; i++)
		if (strlen(list[i]) == len && !strncasecmp(w, list[i], len))
			return i;
	return -1;
}

static int function_of(const char *w, size_t len)
{
	for (size_t i = 0; i < ARRAY_SIZE(functions); i++)
		if (strlen(functions[i].name) == len && !strncasecmp(w, functions[i].name, len))
			return (int)i;
	return -1;
}

static void add(struct rd *r, enum report_tok kind, char *text, int col)
{
	ALLOC_GROW(r->t, r->n + 1, r->alloc);
	r->t[r->n++] = (struct report_token){ kind, text, col };
}

/* ---- tokens ---- */

/* A word at *p: a keyword, a function (followed by '('), or a name (label.x and the like included). */
static int read_word(struct rd *r, const char **p, int col)
{
	const char *s = *p, *q;
	size_t len;
	int k;

	while (isalnum((unsigned char)**p) || **p == '_' ||
	       (**p == '.' && (isalpha((unsigned char)(*p)[1]) || (*p)[1] == '_')))
		(*p)++;
	len = (size_t)(*p - s);
	for (q = *p; isspace((unsigned char)*q); q++)
		;
	if ((k = word_in(s, len, keywords)) >= 0) {
		add(r, TOK_KEYWORD, xstrdup(keywords[k]), col);
	} else if (*q == '(' && (k = function_of(s, len)) >= 0) {
		add(r, TOK_FUNC, xstrdup(functions[k].name), col);
	} else if (*q == '(') {
		char *word = xstrndup(s, len);
		int ret = fail_usage("unknown function '%s' at column %d of %s '%s' (allowed: %s)", word, col,
				     r->what, r->text, allowed);

		free(word);
		return ret;
	} else {
		add(r, TOK_NAME, xstrndup(s, len), col);
	}
	return FAIL_OK;
}

/* A number at *p: digits, a fraction, an exponent; nothing may stick to it ("12abc", "1e"). */
static int read_number(struct rd *r, const char **p, int col)
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
		return fail_usage("malformed number at column %d of %s '%s'", col, r->what, r->text);
	add(r, TOK_NUM, xstrndup(s, (size_t)(*p - s)), col);
	return FAIL_OK;
}

/* 'text' or "name" at *p, the quote doubled inside for itself. */
static int read_quoted(struct rd *r, const char **p, int col)
{
	struct strbuf sb = STRBUF_INIT;
	char quote = **p;

	sb_add(&sb, "", 0);
	for ((*p)++;; (*p)++) {
		if (!**p) {
			sb_release(&sb);
			return quote == '\'' ?
			       fail_usage("unterminated 'text' at column %d of %s '%s'", col, r->what, r->text) :
			       fail_usage("unterminated \"name\" at column %d of %s '%s'", col, r->what, r->text);
		}
		if (**p == quote && (*p)[1] == quote)
			(*p)++;
		else if (**p == quote)
			break;
		sb_addc(&sb, **p);
	}
	(*p)++;
	if (quote == '"' && !sb.len) {
		sb_release(&sb);
		return fail_usage("empty \"name\" at column %d of %s '%s'", col, r->what, r->text);
	}
	add(r, quote == '\'' ? TOK_TEXT : TOK_NAME, sb_detach(&sb), col);
	return FAIL_OK;
}

static int read_tokens(struct rd *r)
{
	static const char *const two[] = { "<=", ">=", "<>", "!=", "==" };
	const char *p = r->text;

	while (*p) {
		int col = (int)(p - r->text) + 1, ret = FAIL_OK, k;

		if (isspace((unsigned char)*p)) {
			p++;
			continue;
		}
		for (k = 0; k < (int)ARRAY_SIZE(two) && strncmp(p, two[k], 2); k++)
			;
		if (isalpha((unsigned char)*p) || *p == '_') {
			ret = read_word(r, &p, col);
		} else if (isdigit((unsigned char)*p) || (*p == '.' && isdigit((unsigned char)p[1]))) {
			ret = read_number(r, &p, col);
		} else if (*p == '\'' || *p == '"') {
			ret = read_quoted(r, &p, col);
		} else if (k < (int)ARRAY_SIZE(two)) {
			add(r, TOK_OP, xstrndup(p, 2), col);
			p += 2;
		} else if (strchr("+-*/%<>=(),", *p)) {
			add(r, *p == '(' ? TOK_OPEN : *p == ')' ? TOK_CLOSE : *p == ',' ? TOK_COMMA : TOK_OP,
			    xstrndup(p, 1), col);
			p++;
		} else {
			return fail_usage("unexpected '%c' at column %d of %s '%s' (allowed: %s)", *p, col, r->what,
					  r->text, allowed);
		}
		if (ret)
			return ret;
	}
	if (!r->n)
		return fail_usage("%s is empty", r->what);
	return FAIL_OK;
}

/* ---- the grammar ---- */

static const struct report_token *peek(const struct rd *r)
{
	static const struct report_token end = { TOK_OP, NULL, 0 };

	return r->at < r->n ? &r->t[r->at] : &end;
}

static int is_kw(const struct rd *r, const char *kw)
{
	return peek(r)->kind == TOK_KEYWORD && !strcmp(peek(r)->text, kw);
}

static int is_op(const struct rd *r, const char *const *ops)
{
	for (int i = 0; peek(r)->kind == TOK_OP && peek(r)->text && ops[i]; i++)
		if (!strcmp(peek(r)->text, ops[i]))
			return 1;
	return 0;
}

/* The next token, handed to the caller's emit in the expression's order (so that a name it does not know
 * is refused before a mistake further on). */
static int take(struct rd *r)
{
	return r->emit(r->arg, &r->t[r->at++]);
}

/* The keyword written where a name of the same spelling was meant ("case" for a parameter case): the
 * hint of a refusal, or "". */
static const char *keyword_hint(const struct rd *r, char *buf, size_t n)
{
	buf[0] = '\0';
	for (size_t i = 0; i < r->n; i++) {
		const struct report_token *t = &r->t[i];
		const char *w = r->text + t->col - 1;
		size_t len = strlen(t->text);

		if (t->kind != TOK_KEYWORD)
			continue;
		for (size_t k = 0; k < r->c->nparams + r->c->nmetrics; k++) {
			const char *name = k < r->c->nparams ? r->c->params[k] : r->c->metrics[k - r->c->nparams];

			if (strlen(name) == len && !strncmp(name, w, len)) {
				snprintf(buf, n, " ('%s' is a word of the syntax: the %s of that name is written \"%s\")",
					 name, k < r->c->nparams ? "parameter" : "metric", name);
				return buf;
			}
		}
	}
	return buf;
}

/* What the next token should have been, refused at its column. */
static int expected(const struct rd *r, const char *what)
{
	const struct report_token *t = peek(r);
	char hint[256];

	keyword_hint(r, hint, sizeof(hint));
	if (!t->text && r->nesting > 0 && !strcmp(what, "')'"))
		return fail_usage("unbalanced '(' in %s '%s'%s", r->what, r->text, hint);
	if (!t->text)
		return fail_usage("%s '%s' ends where %s should follow%s", r->what, r->text, what, hint);
	if (t->kind == TOK_CLOSE && r->nesting <= 0)
		return fail_usage("unbalanced ')' at column %d of %s '%s'%s", t->col, r->what, r->text, hint);
	return fail_usage("'%s' at column %d of %s '%s': expected %s%s", t->text, t->col, r->what, r->text, what,
			  hint);
}

static int expr(struct rd *r, int *h);

/* Take the keyword kw, or refuse. */
static int take_kw(struct rd *r, const char *kw, const char *what)
{
	return is_kw(r, kw) ? take(r) : expected(r, what);
}

/* A nested part (parentheses, a function's arguments, CASE, NOT, a sign): bounded, so that neither our
 * stack nor SQLite's limit on depth is reached. */
static int nest(struct rd *r, int (*part)(struct rd *, int *), int *h)
{
	int ret;

	if (++r->nesting > MAX_NESTING)
		return fail_usage("%s '%s' nests deeper than %d at column %d", r->what, r->text, MAX_NESTING,
				  r->t[r->at ? r->at - 1 : 0].col);
	ret = part(r, h);
	r->nesting--;
	(*h)++;
	return ret;
}

/* "( expr {, expr} )" of a function or IN; *count, the expressions. */
static int list(struct rd *r, int *h, int *count)
{
	int ret, hi;

	if (peek(r)->kind != TOK_OPEN)
		return expected(r, "'('");
	if ((ret = take(r)))
		return ret;
	*count = 0;
	*h = 0;
	for (;;) {
		if ((ret = nest(r, expr, &hi)))
			return ret;
		*h = hi > *h ? hi : *h;
		++*count;
		if (peek(r)->kind != TOK_COMMA)
			break;
		if ((ret = take(r)))
			return ret;
	}
	return peek(r)->kind == TOK_CLOSE ? take(r) : expected(r, "',' or ')'");
}

/* The most of *h and another part's height. */
static int higher(int *h, int ret, int other)
{
	*h = other > *h ? other : *h;
	return ret;
}

static int case_expr(struct rd *r, int *h)
{
	int ret, hi = 0, whens = 0;

	*h = 0;
	if (!is_kw(r, "WHEN") && (ret = expr(r, h)))
		return ret;
	while (is_kw(r, "WHEN")) {
		if ((ret = take(r)) || (ret = higher(h, expr(r, &hi), hi)) || (ret = take_kw(r, "THEN", "THEN")) ||
		    (ret = higher(h, expr(r, &hi), hi)))
			return ret;
		whens++;
	}
	if (!whens)
		return expected(r, "WHEN");
	if (is_kw(r, "ELSE") && ((ret = take(r)) || (ret = higher(h, expr(r, &hi), hi))))
		return ret;
	return take_kw(r, "END", "WHEN, ELSE or END");
}

static int paren(struct rd *r, int *h)
{
	int ret = expr(r, h);

	if (ret)
		return ret;
	return peek(r)->kind == TOK_CLOSE ? take(r) : expected(r, "')'");
}

/* A function's call, its arguments counted. */
static int call(struct rd *r, int *h)
{
	const struct report_token *t = peek(r);
	int k = function_of(t->text, strlen(t->text)), col = t->col, ret, count;

	if ((ret = take(r)) || (ret = list(r, h, &count)))
		return ret;
	if (count < functions[k].min || count > functions[k].max)
		return fail_usage("%s() at column %d of %s '%s' takes %d%s argument%s, not %d", functions[k].name,
				  col, r->what, r->text, functions[k].min,
				  functions[k].max == functions[k].min ? "" : functions[k].max == 2 ? " or 2" : " or more",
				  functions[k].max > 1 ? "s" : "", count);
	return FAIL_OK;
}

static int primary(struct rd *r, int *h)
{
	const struct report_token *t = peek(r);
	int ret;

	*h = 1;
	if (t->kind == TOK_NUM || t->kind == TOK_TEXT || t->kind == TOK_NAME ||
	    (t->kind == TOK_KEYWORD && !strcmp(t->text, "NULL")))
		return take(r);
	if (t->kind == TOK_OPEN)
		return (ret = take(r)) ? ret : nest(r, paren, h);
	if (t->kind == TOK_KEYWORD && !strcmp(t->text, "CASE"))
		return (ret = take(r)) ? ret : nest(r, case_expr, h);
	if (t->kind == TOK_FUNC)
		return nest(r, call, h);
	return expected(r, "a name, a number, 'text', '(', CASE or a function");
}

static int unary(struct rd *r, int *h)
{
	static const char *const sign[] = { "+", "-", NULL };
	int ret;

	if (is_op(r, sign))
		return (ret = take(r)) ? ret : nest(r, unary, h);
	return primary(r, h);
}

/* A chain of left-associative operators over part: a + b - c, a AND b. */
static int chain(struct rd *r, int (*part)(struct rd *, int *), const char *const *ops, const char *kw, int *h)
{
	int ret, hr;

	if ((ret = part(r, h)))
		return ret;
	while (kw ? is_kw(r, kw) : is_op(r, ops)) {
		if ((ret = take(r)) || (ret = part(r, &hr)))
			return ret;
		*h = (hr > *h ? hr : *h) + 1;
		if (*h > MAX_HEIGHT)
			return fail_usage("%s '%s' is too long a chain of operators (more than %d)", r->what, r->text,
					  MAX_HEIGHT);
	}
	return FAIL_OK;
}

static int product(struct rd *r, int *h)
{
	static const char *const ops[] = { "*", "/", "%", NULL };

	return chain(r, unary, ops, NULL, h);
}

static int sum(struct rd *r, int *h)
{
	static const char *const ops[] = { "+", "-", NULL };

	return chain(r, product, ops, NULL, h);
}

/* What follows the left side of a comparison, its height into *h. */
static int compared(struct rd *r, int *h)
{
	static const char *const ops[] = { "=", "==", "!=", "<>", "<", "<=", ">", ">=", NULL };
	int ret, h2 = 0, count;

	if (is_op(r, ops))
		return (ret = take(r)) ? ret : sum(r, h);
	if (is_kw(r, "IS")) {
		if ((ret = take(r)) || (is_kw(r, "NOT") && (ret = take(r))))
			return ret;
		return sum(r, h);
	}
	if (is_kw(r, "NOT") && (ret = take(r)))
		return ret;
	if (is_kw(r, "IN"))
		return (ret = take(r)) ? ret : list(r, h, &count);
	if (is_kw(r, "LIKE"))
		return (ret = take(r)) ? ret : sum(r, h);
	if (!is_kw(r, "BETWEEN"))
		return expected(r, "IN, BETWEEN or LIKE after NOT");
	if ((ret = take(r)) || (ret = sum(r, h)) || (ret = take_kw(r, "AND", "AND")) || (ret = sum(r, &h2)))
		return ret;
	return higher(h, FAIL_OK, h2);
}

static int cmp(struct rd *r, int *h)
{
	static const char *const ops[] = { "=", "==", "!=", "<>", "<", "<=", ">", ">=", NULL };
	int ret, hr = 0;

	if ((ret = sum(r, h)))
		return ret;
	if (!is_op(r, ops) && !is_kw(r, "IS") && !is_kw(r, "NOT") && !is_kw(r, "IN") && !is_kw(r, "BETWEEN") &&
	    !is_kw(r, "LIKE"))
		return FAIL_OK;
	ret = compared(r, &hr);
	*h = (hr > *h ? hr : *h) + 1;
	return ret;
}

static int negation(struct rd *r, int *h)
{
	int ret;

	if (is_kw(r, "NOT"))
		return (ret = take(r)) ? ret : nest(r, negation, h);
	return cmp(r, h);
}

static int conjunction(struct rd *r, int *h)
{
	return chain(r, negation, NULL, "AND", h);
}

static int expr(struct rd *r, int *h)
{
	return chain(r, conjunction, NULL, "OR", h);
}

static void tokens_free(struct report_token *tok, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(tok[i].text);
	free(tok);
}

int report_expr_parse(const struct report_ctx *c, const char *what, const char *text,
		      int (*emit)(void *arg, const struct report_token *t), void *arg)
{
	struct rd r = { c, what, text, emit, arg, NULL, 0, 0, 0, 0 };
	int ret, h;

	if (!(ret = read_tokens(&r)) && !(ret = expr(&r, &h)) && r.at < r.n)
		ret = expected(&r, "AND, OR or an operator");
	tokens_free(r.t, r.n);
	return ret;
}
