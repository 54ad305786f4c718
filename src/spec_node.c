/* spec_node.c: problems kept at the YAML node they are about, and typed values read from nodes. */
#include "spec_int.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Problems kept and printed: past a hundred the rest is noise caused by the first ones. */
#define SPEC_MAX_PROBLEMS 100

struct spec_problem {
	int line, col, seq;
	char *msg;
};

static void problem_add(struct sp *p, int line, int col, const char *fmt, va_list ap)
{
	struct strbuf sb = STRBUF_INIT;

	p->nproblems++;
	if (p->nprobs >= SPEC_MAX_PROBLEMS)
		return;
	sb_vaddf(&sb, fmt, ap);
	ALLOC_GROW(p->probs, p->nprobs + 1, p->probs_alloc);
	p->probs[p->nprobs].line = line;
	p->probs[p->nprobs].col = col;
	p->probs[p->nprobs].seq = (int)p->nprobs;
	p->probs[p->nprobs].msg = sb_detach(&sb);
	p->nprobs++;
}

void spec_node_problem_at(struct sp *p, int line, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem_add(p, line, col, fmt, ap);
	va_end(ap);
}

void spec_node_problem(struct sp *p, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem_add(p, n->line, n->col, fmt, ap);
	va_end(ap);
}

static int cmp_problems(const void *a, const void *b)
{
	const struct spec_problem *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int spec_node_flush(struct sp *p, int quiet)
{
	if (p->nprobs)
		qsort(p->probs, p->nprobs, sizeof(*p->probs), cmp_problems);
	for (size_t i = 0; i < p->nprobs; i++) {
		if (!quiet)
			error("%s:%d:%d: %s", p->path, p->probs[i].line, p->probs[i].col, p->probs[i].msg);
		free(p->probs[i].msg);
	}
	if (!quiet && (size_t)p->nproblems > p->nprobs)
		error("%s: %d more problems not shown", p->path, p->nproblems - (int)p->nprobs);
	free(p->probs);
	return p->nproblems ? -1 : 0;
}

const char *spec_node_hint(struct sp *p, char buf[HINT_BUF], const char *s, const char *const *cands)
{
	char a[SHOW_BUF];
	const char *c;

	buf[0] = '\0';
	/* Edit distance is quadratic: a long name is no typo of a short one anyway, and a message past
	 * the cap is never printed (aliases can repeat one mistake thousands of times). */
	if (!cands || strlen(s) > SHOW_MAX || p->nprobs >= SPEC_MAX_PROBLEMS)
		return buf;
	c = closest_name(s, cands);
	if (c)
		snprintf(buf, HINT_BUF, " (did you mean '%s'?)", spec_shown(a, c));
	return buf;
}

const char *spec_node_kind(const struct ynode *n)
{
	switch (n->kind) {
	case YNODE_SCALAR: return "a scalar";
	case YNODE_SEQ: return "a list";
	case YNODE_MAP: return "a mapping";
	}
	return "nothing";
}

const char *spec_node_scalar(struct sp *p, const struct ynode *n, const char *what)
{
	char a[SHOW_BUF];

	if (n->kind != YNODE_SCALAR) {
		spec_node_problem(p, n, "expected a scalar for '%s', got %s", spec_shown(a, what),
			spec_node_kind(n));
		return NULL;
	}
	if (strlen(n->text) != n->len) {
		spec_node_problem(p, n, "NUL byte in the value of '%s'", spec_shown(a, what));
		return NULL;
	}
	return n->text;
}

const char *spec_node_key(struct sp *p, const struct ynode *k)
{
	if (k->kind != YNODE_SCALAR) {
		spec_node_problem(p, k, "expected a scalar key, got %s", spec_node_kind(k));
		return NULL;
	}
	if (strlen(k->text) != k->len) {
		spec_node_problem(p, k, "NUL byte in a key");
		return NULL;
	}
	return k->text;
}

int spec_node_is_num(const struct ynode *n, double *v)
{
	double d;

	if (n->kind != YNODE_SCALAR || !n->plain || parse_double(n->text, &d) || !isfinite(d))
		return 0;
	if (v)
		*v = d;
	return 1;
}

int spec_node_is_null(const struct ynode *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (n->kind != YNODE_SCALAR || !n->plain)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(nulls); i++)
		if (!strcmp(n->text, nulls[i]))
			return 1;
	return 0;
}

int spec_node_fields(struct sp *p, const struct ynode *n, const char *where, const char *const *names,
		     const struct ynode **vals, const struct ynode **keys)
{
	char a[SHOW_BUF], h[HINT_BUF];

	if (n->kind != YNODE_MAP) {
		if (where)
			spec_node_problem(p, n, "expected a mapping for %s, got %s", where,
				spec_node_kind(n));
		else
			spec_node_problem(p, n, "expected a mapping at the top level, got %s",
				spec_node_kind(n));
		return -1;
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *k = ydoc_key(n, j);
		const char *name = spec_node_key(p, k);
		int i;

		if (!name)
			continue;
		for (i = 0; names[i] && strcmp(names[i], name); i++)
			;
		if (!names[i])
			spec_node_problem(p, k, "unknown key '%s'%s%s%s", spec_shown(a, name),
				where ? " in " : "", where ? where : "", spec_node_hint(p, h, name, names));
		else if (vals[i])
			spec_node_problem(p, k, "duplicate key '%s' (first at %d:%d)", names[i],
				keys[i]->line, keys[i]->col);
		else {
			vals[i] = ydoc_value(n, j);
			keys[i] = k;
		}
	}
	return 0;
}

int spec_node_reserve(struct sp *p, const struct ynode *at, size_t n)
{
	if (n <= SPEC_MAX_VALUES && p->nvalues + n <= SPEC_MAX_VALUES) {
		p->nvalues += n;
		return 0;
	}
	if (!p->values_reported)
		spec_node_problem(p, at, "too many values: a spec holds at most %d", SPEC_MAX_VALUES);
	p->values_reported = 1;
	return -1;
}

int spec_node_long(struct sp *p, const struct ynode *n, const char *what, long min, long max, long *out)
{
	char a[SHOW_BUF];
	const char *t = spec_node_scalar(p, n, what);
	long v;

	if (!t)
		return -1;
	if (parse_long(t, &v)) {
		spec_node_problem(p, n, "expected an integer for '%s', got '%s'", what, spec_shown(a, t));
		return -1;
	}
	if (v < min || v > max) {
		if (max >= INT_MAX)
			spec_node_problem(p, n, "'%s' must be at least %ld, got %ld", what, min, v);
		else
			spec_node_problem(p, n, "'%s' must be between %ld and %ld, got %ld", what, min, max,
				v);
		return -1;
	}
	*out = v;
	return 0;
}

int spec_node_int(struct sp *p, const struct ynode *n, const char *what, int min, int *out)
{
	long v;

	if (spec_node_long(p, n, what, min, INT_MAX, &v))
		return -1;
	*out = (int)v;
	return 0;
}

int spec_node_double(struct sp *p, const struct ynode *n, const char *what, double min, int above,
		     double max, double *out)
{
	char a[SHOW_BUF];
	const char *t = spec_node_scalar(p, n, what);
	double v;

	if (!t)
		return -1;
	if (parse_double(t, &v) || !isfinite(v)) {
		spec_node_problem(p, n, "expected a number for '%s', got '%s'", what, spec_shown(a, t));
		return -1;
	}
	if (above ? v <= min : v < min) {
		spec_node_problem(p, n, "'%s' must be %s %g, got %s", what,
			above ? "greater than" : "at least", min, spec_shown(a, t));
		return -1;
	}
	if (v > max) {
		spec_node_problem(p, n, "'%s' must be at most %g, got %s", what, max, spec_shown(a, t));
		return -1;
	}
	*out = v;
	return 0;
}

int spec_node_enum(struct sp *p, const struct ynode *n, const char *what, const char *const *names)
{
	char a[SHOW_BUF], h[HINT_BUF];
	struct strbuf all = STRBUF_INIT;
	const char *t = spec_node_scalar(p, n, what);

	if (!t)
		return -1;
	for (int i = 0; names[i]; i++)
		if (!strcmp(t, names[i]))
			return i;
	for (int i = 0; names[i]; i++)
		sb_addf(&all, "%s%s", i ? "|" : "", names[i]);
	spec_node_hint(p, h, t, names);
	if (*h)
		spec_node_problem(p, n, "invalid value '%s' for '%s'%s", spec_shown(a, t), what, h);
	else
		spec_node_problem(p, n, "invalid value '%s' for '%s' (expected %s)", spec_shown(a, t), what,
			all.buf);
	sb_release(&all);
	return -1;
}

char **spec_node_strings(struct sp *p, const struct ynode *n, const char *what, int *count)
{
	char **v;
	int len, bad = 0;

	if (n->kind != YNODE_SEQ) {
		spec_node_problem(p, n, "expected a list for '%s', got %s", what, spec_node_kind(n));
		return NULL;
	}
	len = n->n;
	if (!len) {
		spec_node_problem(p, n, "empty list for '%s'", what);
		return NULL;
	}
	if (spec_node_reserve(p, n, (size_t)len))
		return NULL;
	v = xcalloc((size_t)len, sizeof(*v));
	for (int i = 0; i < len; i++) {
		const char *t = spec_node_scalar(p, ydoc_item(n, i), what);

		bad |= !t;
		v[i] = xstrdup(t ? t : "");
	}
	if (bad) {
		for (int i = 0; i < len; i++)
			free(v[i]);
		free(v);
		return NULL;
	}
	*count = len;
	return v;
}
