/* spec_params.c: a spec's grid: params (axes, ranges, zipped groups), typed values, exclude, control. */
#include "spec_int.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../kernels/kernel.h"

enum range_key { R_FROM, R_TO, R_FACTOR, R_STEP, NRANGE };
static const char *const range_names[] = { "from", "to", "factor", "step", NULL };
enum control_key { C_PARAMS, C_EVERY, NCONTROL };
static const char *const control_names[] = { "params", "every", NULL };
static const char *const builtin_placeholders[] = { "item", "gpu", "host", "cell", NULL };

static void set_text_num(struct spec_scalar *v, double d)
{
	free(v->text);
	v->text = xasprintf("%.0f", d);
	v->is_num = 1;
}

static int in_choices(const char *choices, const char *t)
{
	size_t len = strlen(t);

	for (const char *c = choices; c; c = strchr(c, '|'), c = c ? c + 1 : NULL)
		if (!strncmp(c, t, len) && (c[len] == '|' || !c[len]))
			return 1;
	return 0;
}

/*
 * Check value v of kernel parameter pd against its type: an integer, a number, a byte size (converted
 * to its number of bytes) or one of the choices of a string. -1 after a problem.
 */
static int value_typed(struct sp *p, struct spec_scalar *v, const struct ynode *n, const struct param_def *pd)
{
	char a[SHOW_BUF];
	double d;

	switch (pd->type) {
	case PARAM_INT:
		/* Beyond 2^63 a double no longer converts to a long. */
		if (!v->is_num || parse_double(v->text, &d) || d != floor(d) || fabs(d) >= 9.2e18)
			break;
		set_text_num(v, d);
		return 0;
	case PARAM_FLOAT:
		if (!v->is_num)
			break;
		return 0;
	case PARAM_BYTES:
		if (parse_bytes(v->text, &d) || d != floor(d) || d >= 9.2e18)
			break;
		set_text_num(v, d);
		return 0;
	case PARAM_STR:
		/* A string parameter is a string even when it reads as a number: "7" and 7 are one value. */
		v->is_num = 0;
		if (!pd->choices || in_choices(pd->choices, v->text))
			return 0;
		spec_node_problem(p, n, "invalid value '%s' for '%s' (expected %s)", spec_shown(a, v->text),
			pd->name, pd->choices);
		return -1;
	}
	spec_node_problem(p, n, "expected %s for '%s', got '%s'",
		pd->type == PARAM_INT ? "an integer" : pd->type == PARAM_FLOAT ? "a number" : "a byte size",
		pd->name, spec_shown(a, v->text));
	return -1;
}

/* Fill v from scalar node n, a value of parameter key; pd (may be NULL) is the kernel's declaration.
 * v->text is always set, so that the caller frees uniformly. -1 after a problem. */
static int value_set(struct sp *p, struct spec_scalar *v, const struct ynode *n, const char *key,
		     const struct param_def *pd)
{
	char a[SHOW_BUF];
	const char *t = spec_node_scalar(p, n, key);

	v->line = n->line;
	v->col = n->col;
	v->text = xstrdup(t ? t : "");
	v->is_num = 0;
	if (!t)
		return -1;
	/* A null here is a value left out by mistake; "null" in quotes is a string. */
	if (spec_node_is_null(n)) {
		spec_node_problem(p, n, "no value for '%s'", spec_shown(a, key));
		return -1;
	}
	v->is_num = spec_node_is_num(n, NULL);
	return pd ? value_typed(p, v, n, pd) : 0;
}

/* The kernel's declaration of parameter name; NULL (after a problem) when the kernel has none. */
static const struct param_def *param_decl(struct sp *p, const char *name, const struct ynode *at)
{
	char a[SHOW_BUF], h[HINT_BUF];
	const struct param_def *pd;

	if (!p->kernel)
		return NULL;
	pd = kernel_param(p->kernel, name);
	if (!pd)
		spec_node_problem(p, at, "kernel '%s' has no parameter '%s'%s", p->kernel->name,
			spec_shown(a, name), spec_node_hint(p, h, name, p->knames));
	return pd;
}

static struct spec_axis *axis_new(struct sp *p, const struct ynode *at, int nkeys)
{
	struct spec *s = p->s;
	struct spec_axis *a;

	ALLOC_GROW(s->axes, (size_t)s->naxes + 1, p->axes_alloc);
	a = &s->axes[s->naxes++];
	memset(a, 0, sizeof(*a));
	a->line = at->line;
	a->col = at->col;
	a->nkeys = nkeys;
	a->keys = xcalloc((size_t)nkeys, sizeof(*a->keys));
	return a;
}

/*
 * A parameter's name is an identifier (ASCII letters, digits and '_', not starting with a digit): it is
 * written in placeholders ({name}), in --where expressions and in JSON paths ($.name), where a space, a
 * dot or a non-ASCII letter would not be found. A problem at the key otherwise (the name is still used,
 * so that later checks know it).
 */
static void param_name_check(struct sp *p, const struct ynode *k, const char *name)
{
	char a[SHOW_BUF];
	const char *c = name;
	int ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || *c == '_';

	for (; ok && *c; c++)
		ok = (*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		     *c == '_';
	if (!ok)
		spec_node_problem(p, k, "parameter name '%s' is not an identifier (ASCII letters, digits and "
			"'_', not starting with a digit)", spec_shown(a, name));
}

/* An axis of one key and the values of list (or scalar) n. */
static void parse_list_axis(struct sp *p, const char *name, const struct ynode *keynode,
			    const struct ynode *n)
{
	const struct param_def *pd = param_decl(p, name, keynode);
	int len = n->kind == YNODE_SEQ ? n->n : 1;
	struct spec_axis *a = axis_new(p, n, 1);

	a->keys[0] = xstrdup(name);
	if (spec_node_reserve(p, n, (size_t)len))
		return;
	a->vals = xcalloc((size_t)len, sizeof(*a->vals));
	a->npoints = len;
	for (int i = 0; i < len; i++)
		value_set(p, &a->vals[i], n->kind == YNODE_SEQ ? ydoc_item(n, i) : n, name, pd);
}

static void join_keys(struct strbuf *sb, const struct spec_axis *a)
{
	char b[SHOW_BUF];

	for (int k = 0; k < a->nkeys; k++)
		sb_addf(sb, "%s%s", k ? ", " : "", spec_shown(b, a->keys[k]));
}

/* A zipped group: list n of mappings that all have the keys of the first. */
static void parse_group(struct sp *p, const char *name, const struct ynode *n)
{
	char a[SHOW_BUF], b[SHOW_BUF];
	const struct ynode *first = ydoc_item(n, 0);
	int len = n->n, nkeys = first->n;
	const struct param_def **pds;
	struct spec_axis *ax;
	char *seen;

	if (!nkeys) {
		spec_node_problem(p, first, "empty mapping in zipped group '%s'", spec_shown(a, name));
		return;
	}
	ax = axis_new(p, n, nkeys);
	pds = xcalloc((size_t)nkeys, sizeof(*pds));
	seen = xcalloc((size_t)nkeys, 1);
	for (int k = 0; k < nkeys; k++) {
		const struct ynode *kn = ydoc_key(first, k);
		const char *t = spec_node_key(p, kn);

		ax->keys[k] = xstrdup(t ? t : "");
		if (t)
			param_name_check(p, kn, t);
		for (int j = 0; t && j < k; j++)
			if (!strcmp(ax->keys[j], t)) {
				spec_node_problem(p, kn, "duplicate key '%s'", spec_shown(a, t));
				t = NULL;
			}
		if (t)
			pds[k] = param_decl(p, t, kn);
	}
	if (spec_node_reserve(p, n, (size_t)len * (size_t)nkeys))
		goto out;
	ax->vals = xcalloc((size_t)len * (size_t)nkeys, sizeof(*ax->vals));
	ax->npoints = len;
	for (int e = 0; e < len; e++) {
		const struct ynode *en = ydoc_item(n, e);
		struct spec_scalar *row = &ax->vals[(size_t)e * (size_t)nkeys];
		int differ = 0;

		if (en->kind != YNODE_MAP) {
			spec_node_problem(p, en, "expected a mapping in zipped group '%s', got %s",
				spec_shown(a, name), spec_node_kind(en));
			continue;
		}
		memset(seen, 0, (size_t)nkeys);
		for (int j = 0; j < en->n; j++) {
			const struct ynode *kn = ydoc_key(en, j);
			const char *t = spec_node_key(p, kn);
			int k;

			if (!t)
				continue;
			for (k = 0; k < nkeys && strcmp(ax->keys[k], t); k++)
				;
			if (k == nkeys)
				differ = 1;
			else if (seen[k] && e)
				spec_node_problem(p, kn, "duplicate key '%s'", spec_shown(b, t));
			else if (!seen[k]) {
				seen[k] = 1;
				value_set(p, &row[k], ydoc_value(en, j), t, pds[k]);
			}
		}
		for (int k = 0; k < nkeys; k++)
			differ |= !seen[k];
		/* The first entry defines the keys (its own duplicates were reported above). */
		if (differ && e) {
			struct strbuf keys = STRBUF_INIT;

			join_keys(&keys, ax);
			spec_node_problem(p, en, "entry %d of zipped group '%s' has other keys than "
				"the first (%s)", e + 1, spec_shown(a, name), keys.buf);
			sb_release(&keys);
		}
	}
out:
	free(pds);
	free(seen);
}

/* A range bound: a number or a byte size ("8G"). */
static int range_bound(struct sp *p, const struct ynode *n, const char *what, double *out)
{
	char a[SHOW_BUF];
	const char *t = spec_node_scalar(p, n, what);

	if (!t)
		return -1;
	if ((!parse_double(t, out) && isfinite(*out)) || !parse_bytes(t, out))
		return 0;
	spec_node_problem(p, n, "expected a number for '%s', got '%s'", what, spec_shown(a, t));
	return -1;
}

/* A range {from, to, factor | step}: its points from `from`, `to` included when hit. */
static void parse_range(struct sp *p, const char *name, const struct ynode *keynode, const struct ynode *n)
{
	char a[SHOW_BUF], where[SHOW_BUF + 16];
	const struct ynode *v[NRANGE + 1] = { 0 }, *k[NRANGE + 1] = { 0 };
	const struct param_def *pd = param_decl(p, name, keynode);
	double from = 0, to = 0, by = 0, count;
	struct spec_axis *ax;
	int bad = 0, geometric;

	snprintf(where, sizeof(where), "range '%s'", spec_shown(a, name));
	/* The axis exists even when the range is wrong, so that its name is known to later checks. */
	ax = axis_new(p, n, 1);
	ax->keys[0] = xstrdup(name);
	spec_node_fields(p, n, where, range_names, v, k);
	if (!v[R_FROM] || !v[R_TO]) {
		spec_node_problem(p, n, "%s needs 'from' and 'to'", where);
		bad = 1;
	}
	if (!!v[R_FACTOR] == !!v[R_STEP]) {
		spec_node_problem(p, n, "%s needs one of 'factor' or 'step'", where);
		bad = 1;
	}
	if (bad)
		return;
	geometric = !!v[R_FACTOR];
	bad |= range_bound(p, v[R_FROM], "from", &from);
	bad |= range_bound(p, v[R_TO], "to", &to);
	if (geometric)
		bad |= spec_node_double(p, v[R_FACTOR], "factor", 1, 1, INFINITY, &by);
	else
		bad |= spec_node_double(p, v[R_STEP], "step", 0, 1, INFINITY, &by);
	if (bad)
		return;
	if (from > to) {
		spec_node_problem(p, n, "%s is empty: 'from' is greater than 'to'", where);
		return;
	}
	if (geometric && from <= 0) {
		spec_node_problem(p, v[R_FROM], "'from' must be greater than 0 in a range with a factor");
		return;
	}
	/* The small slack keeps `to` when rounding puts it a hair past the last point. */
	count = geometric ? floor(log(to / from) / log(by) + 1e-9) + 1 : floor((to - from) / by + 1e-9) + 1;
	if (!(count <= SPEC_MAX_VALUES)) {
		spec_node_problem(p, n, "%s has more than %d points", where, SPEC_MAX_VALUES);
		return;
	}
	if (spec_node_reserve(p, n, (size_t)count))
		return;
	ax->npoints = (int)count;
	ax->vals = xcalloc((size_t)ax->npoints, sizeof(*ax->vals));
	for (int i = 0; i < ax->npoints; i++) {
		struct spec_scalar *sv = &ax->vals[i];
		double x = geometric ? from * pow(by, i) : from + by * i;

		/* 15 digits drop the noise of pow() and of summing steps like 0.1. */
		sv->text = xasprintf("%.15g", x);
		sv->is_num = 1;
		sv->line = ax->line;
		sv->col = ax->col;
		/* One wrong value says it for the whole range. */
		if (pd && value_typed(p, sv, n, pd)) {
			for (int j = i + 1; j < ax->npoints; j++)
				ax->vals[j].text = xstrdup("");
			break;
		}
	}
}

/* A mapping that means to be a range: one of its keys is a range's. */
static int is_range(struct sp *p, const struct ynode *n)
{
	for (int j = 0; j < n->n; j++) {
		const struct ynode *k = ydoc_key(n, j);

		for (int i = 0; k->kind == YNODE_SCALAR && range_names[i]; i++)
			if (!strcmp(k->text, range_names[i]))
				return 1;
	}
	return 0;
}

void spec_params_parse(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF];

	if (n->kind != YNODE_MAP) {
		spec_node_problem(p, n, "expected a mapping for 'params', got %s", spec_node_kind(n));
		return;
	}
	for (int i = 0; i < n->n; i++) {
		const struct ynode *k = ydoc_key(n, i), *v = ydoc_value(n, i);
		const char *name = spec_node_key(p, k);

		if (!name)
			continue;
		/* A zipped group's own name is not a parameter: its mappings' keys are. */
		if (!(v->kind == YNODE_SEQ && v->n && ydoc_item(v, 0)->kind == YNODE_MAP))
			param_name_check(p, k, name);
		if (v->kind == YNODE_MAP && !is_range(p, v)) {
			spec_node_problem(p, v, "expected a list, a scalar or a range {from, to, "
				"factor|step} for '%s', got a mapping (a zipped group is a list of mappings)",
				spec_shown(a, name));
			axis_new(p, v, 1)->keys[0] = xstrdup(name);
		} else if (v->kind == YNODE_MAP) {
			parse_range(p, name, k, v);
		} else if (v->kind == YNODE_SEQ && v->n && ydoc_item(v, 0)->kind == YNODE_MAP) {
			parse_group(p, name, v);
		} else if ((v->kind == YNODE_SEQ && !v->n) || spec_node_is_null(v)) {
			spec_node_problem(p, v, "empty axis '%s'", spec_shown(a, name));
			/* Kept (with no points) so that later checks know the name. */
			axis_new(p, v, 1)->keys[0] = xstrdup(name);
		} else {
			parse_list_axis(p, name, k, v);
		}
	}
}

struct keyref {
	const char *key;
	int axis, order;       /* order: position among all keys in spec order */
};

static int cmp_keyref(const void *a, const void *b)
{
	const struct keyref *x = a, *y = b;
	int c = strcmp(x->key, y->key);

	return c ? c : x->order - y->order;
}

/* Sorting keeps this O(n log n): aliases can make thousands of keys out of a few lines. */
void spec_params_check(struct sp *p)
{
	struct spec *s = p->s;
	size_t n = 0, total = 0, nsorted = 0;
	struct keyref *refs;
	char *dup;
	char a[SHOW_BUF];

	for (int i = 0; i < s->naxes; i++)
		total += (size_t)s->axes[i].nkeys;
	refs = xcalloc(total + 1, sizeof(*refs));
	dup = xcalloc(total + 1, 1);
	for (int i = 0; i < s->naxes; i++)
		for (int k = 0; k < s->axes[i].nkeys; k++, n++) {
			refs[n].key = s->axes[i].keys[k];
			refs[n].axis = i;
			refs[n].order = (int)n;
		}
	qsort(refs, total, sizeof(*refs), cmp_keyref);
	p->sorted = xcalloc(total + 1, sizeof(*p->sorted));
	for (size_t i = 0, first = 0; i < total; i++) {
		const struct spec_axis *fa, *ia;

		if (!i || strcmp(refs[i].key, refs[first].key)) {
			first = i;
			p->sorted[nsorted++] = refs[i].key;
			continue;
		}
		dup[refs[i].order] = 1;
		fa = &s->axes[refs[first].axis];
		ia = &s->axes[refs[i].axis];
		/* Twice in one zipped entry was reported as a duplicate key. */
		if (fa != ia)
			spec_node_problem_at(p, ia->line, ia->col,
				"parameter '%s' is in two axes (first at %d:%d)",
				spec_shown(a, refs[i].key), fa->line, fa->col);
	}
	p->nsorted = nsorted;
	p->names = xcalloc(total + 1, sizeof(*p->names));
	p->phnames = xcalloc(total + ARRAY_SIZE(builtin_placeholders), sizeof(*p->phnames));
	n = 0;
	for (int i = 0, o = 0; i < s->naxes; i++)
		for (int k = 0; k < s->axes[i].nkeys; k++, o++)
			if (!dup[o]) {
				p->names[n] = s->axes[i].keys[k];
				p->phnames[n] = s->axes[i].keys[k];
				n++;
			}
	for (size_t i = 0; builtin_placeholders[i]; i++)
		p->phnames[n + i] = builtin_placeholders[i];
	free(refs);
	free(dup);
}

int spec_params_has(struct sp *p, const char *name)
{
	return p->nsorted && bsearch(&name, p->sorted, p->nsorted, sizeof(*p->sorted), spec_cmp_strp);
}

void spec_params_exclude(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	struct spec *s = p->s;

	if (n->kind != YNODE_SEQ) {
		spec_node_problem(p, n, "expected a list for 'exclude', got %s", spec_node_kind(n));
		return;
	}
	for (int i = 0; i < n->n; i++) {
		const struct ynode *en = ydoc_item(n, i);
		struct spec_match *m;
		int len;

		if (en->kind != YNODE_MAP) {
			spec_node_problem(p, en, "expected a mapping in 'exclude', got %s",
				spec_node_kind(en));
			continue;
		}
		len = en->n;
		if (!len) {
			spec_node_problem(p, en, "empty exclude entry (it would drop every cell)");
			continue;
		}
		if (spec_node_reserve(p, en, (size_t)len))
			return;
		ALLOC_GROW(s->exclude, (size_t)s->nexclude + 1, p->exclude_alloc);
		m = &s->exclude[s->nexclude++];
		memset(m, 0, sizeof(*m));
		m->line = en->line;
		m->col = en->col;
		m->keys = xcalloc((size_t)len, sizeof(*m->keys));
		m->vals = xcalloc((size_t)len, sizeof(*m->vals));
		for (int k = 0; k < en->n; k++) {
			const struct ynode *kn = ydoc_key(en, k);
			const char *t = spec_node_key(p, kn);
			const struct param_def *pd = NULL;
			int dup = 0;

			if (!t)
				continue;
			for (int j = 0; j < m->n; j++)
				dup |= !strcmp(m->keys[j], t);
			if (dup) {
				spec_node_problem(p, kn, "duplicate key '%s'", spec_shown(a, t));
				continue;
			}
			if (!spec_params_has(p, t)) {
				spec_node_problem(p, kn, "exclude key '%s' is not a parameter%s",
					spec_shown(a, t), spec_node_hint(p, h, t, p->names));
				continue;
			}
			if (p->kernel)
				pd = kernel_param(p->kernel, t);
			m->keys[m->n] = xstrdup(t);
			value_set(p, &m->vals[m->n], ydoc_value(en, k), t, pd);
			m->n++;
		}
	}
}

void spec_params_defaults(struct sp *p)
{
	struct spec *s = p->s;

	if (!p->kernel)
		return;
	for (const struct param_def *pd = p->kernel->params; pd && pd->name; pd++) {
		struct spec_axis *ax;
		struct spec_scalar *v;
		double d;
		int given = 0;

		for (int i = 0; i < s->naxes && !given; i++)
			for (int k = 0; k < s->axes[i].nkeys && !given; k++)
				given = !strcmp(s->axes[i].keys[k], pd->name);
		if (given || !pd->def)
			continue;
		ALLOC_GROW(s->axes, (size_t)s->naxes + 1, p->axes_alloc);
		ax = &s->axes[s->naxes++];
		memset(ax, 0, sizeof(*ax));
		ax->nkeys = 1;
		ax->npoints = 1;
		ax->keys = xcalloc(1, sizeof(*ax->keys));
		ax->keys[0] = xstrdup(pd->name);
		ax->vals = v = xcalloc(1, sizeof(*ax->vals));
		v->text = xstrdup(pd->def);
		/* Typed as value_typed types a value written in the spec: the same default, the same JSON. */
		if (pd->type == PARAM_STR)
			continue;
		if (pd->type == PARAM_BYTES ? parse_bytes(pd->def, &d) : parse_double(pd->def, &d))
			BUG("kernel '%s': default '%s' of '%s' is not of its type", p->kernel->name, pd->def,
			    pd->name);
		if (pd->type == PARAM_FLOAT)
			v->is_num = 1;
		else
			set_text_num(v, d);
	}
}

void spec_params_control(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	const struct ynode *v[NCONTROL + 1] = { 0 }, *k[NCONTROL + 1] = { 0 };
	struct spec *s = p->s;
	const struct ynode *pn;

	if (spec_node_fields(p, n, "'control'", control_names, v, k))
		return;
	if (v[C_EVERY])
		spec_node_int(p, v[C_EVERY], "every", 1, &s->control_every);
	if (!v[C_PARAMS]) {
		spec_node_problem(p, n, "missing 'params' in 'control'");
		return;
	}
	pn = v[C_PARAMS];
	if (pn->kind != YNODE_MAP) {
		spec_node_problem(p, pn, "expected a mapping for 'params' in 'control', got %s",
			spec_node_kind(pn));
		return;
	}
	if (!pn->n) {
		spec_node_problem(p, pn, "empty 'params' in 'control'");
		return;
	}
	for (int i = 0; i < pn->n; i++) {
		const struct ynode *kn = ydoc_key(pn, i);
		const char *t = spec_node_key(p, kn);
		const struct param_def *pd = NULL;
		struct spec_scalar sv = { 0 };

		if (!t)
			continue;
		if (json_obj_find(&s->control, t)) {
			spec_node_problem(p, kn, "duplicate key '%s'", spec_shown(a, t));
			continue;
		}
		if (p->kernel) {
			pd = kernel_param(p->kernel, t);
			if (!pd) {
				spec_node_problem(p, kn, "control parameter '%s' is not a parameter of "
					"kernel '%s'%s", spec_shown(a, t), p->kernel->name,
					spec_node_hint(p, h, t, p->knames));
				continue;
			}
		} else if (!s->kernel && !spec_params_has(p, t)) {
			spec_node_problem(p, kn, "control parameter '%s' is not a parameter%s",
				spec_shown(a, t), spec_node_hint(p, h, t, p->names));
			continue;
		}
		value_set(p, &sv, ydoc_value(pn, i), t, pd);
		json_obj_add(&s->control, t, sv.text, sv.is_num ? JSON_NUM : JSON_STR);
		free(sv.text);
	}
	/* The control cell is a cell: it needs what any cell needs. */
	if (p->kernel) {
		for (const struct param_def *pd = p->kernel->params; pd && pd->name; pd++)
			if (!pd->def && !json_obj_find(&s->control, pd->name))
				spec_node_problem(p, pn, "control lacks parameter '%s' (kernel '%s' has no "
					"default for it)", pd->name, p->kernel->name);
	} else if (!s->kernel) {
		for (int i = 0; p->names[i]; i++)
			if (!json_obj_find(&s->control, p->names[i]))
				spec_node_problem(p, pn, "control lacks parameter '%s'",
					spec_shown(a, p->names[i]));
	}
}
