/* spec.c: a sweep spec read from YAML into struct spec, every problem reported as path:line:col. */
#include "spec.h"

#include <ctype.h>
#include <limits.h>
#include <math.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"
#include "ydoc.h"
#include "../kernels/kernel.h"

/* Problems kept and printed: past a hundred the rest is noise caused by the first ones. */
#define SPEC_MAX_PROBLEMS 100
/* Values stored in all (axes, excludes, items). A range like {from: 0, to: 8G, step: 1} is a typo to
 * report, not gigabytes to allocate. */
#define SPEC_MAX_VALUES 100000
/* A quoted name or value in a message is cut to this many bytes, control bytes shown as '?'. */
#define SHOW_MAX 64
#define SHOW_BUF (SHOW_MAX + 4)
#define HINT_BUF (SHOW_BUF + 32)
/* A metric regex is a line's worth of text; glibc's regcomp copies repeated parts (see regex_too_big). */
#define REGEX_MAX_LEN 1000
#define REGEX_MAX_NODES 2000
#define REGEX_MAX_NODES_TEXT "2000"
#define REGEX_MAX_NEST 100
#define REGEX_MAX_NEST_TEXT "100"
/* Each regex costs up to tens of milliseconds to compile: a cap keeps a pasted mistake quick. */
#define REGEX_MAX_METRICS 100
/* libyaml's loader recurses once per nesting level; a spec needs four. */
#define YAML_MAX_DEPTH 64
/* Characters of a {placeholder} name; worker_expand uses the same set. */
#define PLACEHOLDER_CHARS "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-"
#define PLACEHOLDER_MAX 127
#define SWEEP_NAME_MAX 128

struct problem {
	int line, col, seq;
	char *msg;
};

/* The parse in progress. */
struct sp {
	const char *path;
	struct spec *s;
	struct problem *probs;      /* the first SPEC_MAX_PROBLEMS problems */
	size_t nprobs, probs_alloc;
	int nproblems;              /* all problems, kept or not */
	const struct kernel_ops *kernel;   /* the sweep's kernel once found, else NULL */
	size_t nvalues;             /* scalars stored so far */
	int values_reported;
	size_t axes_alloc, exclude_alloc, env_alloc, regex_alloc;
	const char **names;         /* every parameter (axis key), NULL-terminated, for suggestions */
	const char **phnames;       /* the same plus item, gpu, host, cell: what a placeholder may name */
	const char **sorted;        /* the parameters sorted, for is_param */
	size_t nsorted;
	const char **knames;        /* the kernel's declared parameters, NULL-terminated */
};

enum top_key {
	K_SWEEP, K_DB, K_KERNEL, K_COMMAND, K_PARAMS, K_EXCLUDE, K_REPEAT, K_ORDER, K_SEED, K_TIMING, K_PER,
	K_HOSTS, K_GANG, K_MAX_ATTEMPTS, K_CONTROL, K_METRICS, K_TIMEOUT, K_ENV, K_ITEMS, NTOP
};
static const char *const top_names[] = {
	"sweep", "db", "kernel", "command", "params", "exclude", "repeat", "order", "seed", "timing", "per",
	"hosts", "gang", "max_attempts", "control", "metrics", "timeout", "env", "items", NULL
};
enum timing_key {
	T_MIN_SAMPLES, T_MIN_TIME, T_MAX_NOISE, T_TIMEOUT, T_WARMUP, T_L2, T_THROTTLE, T_BATCH, NTIMING
};
static const char *const timing_names[] = {
	"min_samples", "min_time", "max_noise", "timeout", "warmup", "l2", "throttle", "batch", NULL
};
enum range_key { R_FROM, R_TO, R_FACTOR, R_STEP, NRANGE };
static const char *const range_names[] = { "from", "to", "factor", "step", NULL };
enum control_key { C_PARAMS, C_EVERY, NCONTROL };
static const char *const control_names[] = { "params", "every", NULL };

static const char *const order_names[] = { "sequential", "interleave", "shuffle", NULL };
static const char *const per_names[] = { "any", "host", "gpu", NULL };
static const char *const gang_names[] = { "host", "any", NULL };
static const char *const l2_names[] = { "cold", "hot", NULL };
static const char *const builtin_placeholders[] = { "item", "gpu", "host", "cell", NULL };

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

__attribute__((format(printf, 4, 5)))
static void problem_at(struct sp *p, int line, int col, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem_add(p, line, col, fmt, ap);
	va_end(ap);
}

/* A problem at node n. */
__attribute__((format(printf, 3, 4)))
static void problem(struct sp *p, const struct ynode *n, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	problem_add(p, n->line, n->col, fmt, ap);
	va_end(ap);
}

static int cmp_problems(const void *a, const void *b)
{
	const struct problem *x = a, *y = b;

	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if (x->col != y->col)
		return x->col < y->col ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Print the problems in file order and free them; -1 when there was any. */
static int problems_flush(struct sp *p)
{
	if (p->nprobs)
		qsort(p->probs, p->nprobs, sizeof(*p->probs), cmp_problems);
	for (size_t i = 0; i < p->nprobs; i++) {
		error("%s:%d:%d: %s", p->path, p->probs[i].line, p->probs[i].col, p->probs[i].msg);
		free(p->probs[i].msg);
	}
	if ((size_t)p->nproblems > p->nprobs)
		error("%s: %d more problems not shown", p->path, p->nproblems - (int)p->nprobs);
	free(p->probs);
	return p->nproblems ? -1 : 0;
}

/* s made fit for a one-line message: control bytes as '?', cut after SHOW_MAX bytes. */
static const char *shown(char buf[SHOW_BUF], const char *s)
{
	return printable(buf, s, SHOW_MAX);
}

/* " (did you mean 'x'?)" when a candidate is close to s, else "". */
static const char *hint(struct sp *p, char buf[HINT_BUF], const char *s, const char *const *cands)
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
		snprintf(buf, HINT_BUF, " (did you mean '%s'?)", shown(a, c));
	return buf;
}

static const char *kind(const struct ynode *n)
{
	switch (n->kind) {
	case YNODE_SCALAR: return "a scalar";
	case YNODE_SEQ: return "a list";
	case YNODE_MAP: return "a mapping";
	}
	return "nothing";
}

/* The text of scalar node n, or NULL after a problem (what names the value in it). */
static const char *scalar(struct sp *p, const struct ynode *n, const char *what)
{
	char a[SHOW_BUF];

	if (n->kind != YNODE_SCALAR) {
		problem(p, n, "expected a scalar for '%s', got %s", shown(a, what), kind(n));
		return NULL;
	}
	if (strlen(n->text) != n->len) {
		problem(p, n, "NUL byte in the value of '%s'", shown(a, what));
		return NULL;
	}
	return n->text;
}

/* The text of a mapping key, or NULL after a problem. */
static const char *key_text(struct sp *p, const struct ynode *k)
{
	if (k->kind != YNODE_SCALAR) {
		problem(p, k, "expected a scalar key, got %s", kind(k));
		return NULL;
	}
	if (strlen(k->text) != k->len) {
		problem(p, k, "NUL byte in a key");
		return NULL;
	}
	return k->text;
}

/* A plain (unquoted) scalar that reads as a finite number: a JSON number, not a string. */
static int scalar_is_num(const struct ynode *n, double *v)
{
	double d;

	if (n->kind != YNODE_SCALAR || !n->plain || parse_double(n->text, &d) || !isfinite(d))
		return 0;
	if (v)
		*v = d;
	return 1;
}

/* A plain empty, ~ or null: YAML's null, which as a parameter value means nothing was written. */
static int scalar_is_null(const struct ynode *n)
{
	static const char *const nulls[] = { "", "~", "null", "Null", "NULL" };

	if (n->kind != YNODE_SCALAR || !n->plain)
		return 0;
	for (size_t i = 0; i < ARRAY_SIZE(nulls); i++)
		if (!strcmp(n->text, nulls[i]))
			return 1;
	return 0;
}

/*
 * Match the keys of mapping n against names (NULL-terminated): vals[i] and keys[i] become the value and
 * key nodes of names[i] (left NULL when absent). Unknown and repeated keys are problems. where names the
 * mapping in messages ("'timing'"; NULL at the top level). -1 when n is not a mapping.
 */
static int map_fields(struct sp *p, const struct ynode *n, const char *where, const char *const *names,
		      const struct ynode **vals, const struct ynode **keys)
{
	char a[SHOW_BUF], h[HINT_BUF];

	if (n->kind != YNODE_MAP) {
		if (where)
			problem(p, n, "expected a mapping for %s, got %s", where, kind(n));
		else
			problem(p, n, "expected a mapping at the top level, got %s", kind(n));
		return -1;
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *k = ydoc_key(n, j);
		const char *name = key_text(p, k);
		int i;

		if (!name)
			continue;
		for (i = 0; names[i] && strcmp(names[i], name); i++)
			;
		if (!names[i])
			problem(p, k, "unknown key '%s'%s%s%s", shown(a, name), where ? " in " : "",
				where ? where : "", hint(p, h, name, names));
		else if (vals[i])
			problem(p, k, "duplicate key '%s' (first at %d:%d)", names[i],
				keys[i]->line, keys[i]->col);
		else {
			vals[i] = ydoc_value(n, j);
			keys[i] = k;
		}
	}
	return 0;
}

/* Count n more stored values; -1 (after one problem for the whole spec) past SPEC_MAX_VALUES. */
static int values_reserve(struct sp *p, const struct ynode *at, size_t n)
{
	if (n <= SPEC_MAX_VALUES && p->nvalues + n <= SPEC_MAX_VALUES) {
		p->nvalues += n;
		return 0;
	}
	if (!p->values_reported)
		problem(p, at, "too many values: a spec holds at most %d", SPEC_MAX_VALUES);
	p->values_reported = 1;
	return -1;
}

static int get_long(struct sp *p, const struct ynode *n, const char *what, long min, long max, long *out)
{
	char a[SHOW_BUF];
	const char *t = scalar(p, n, what);
	long v;

	if (!t)
		return -1;
	if (parse_long(t, &v)) {
		problem(p, n, "expected an integer for '%s', got '%s'", what, shown(a, t));
		return -1;
	}
	if (v < min || v > max) {
		if (max >= INT_MAX)
			problem(p, n, "'%s' must be at least %ld, got %ld", what, min, v);
		else
			problem(p, n, "'%s' must be between %ld and %ld, got %ld", what, min, max, v);
		return -1;
	}
	*out = v;
	return 0;
}

static int get_int(struct sp *p, const struct ynode *n, const char *what, int min, int *out)
{
	long v;

	if (get_long(p, n, what, min, INT_MAX, &v))
		return -1;
	*out = (int)v;
	return 0;
}

/* A finite number >= min (> min when above), <= max. */
static int get_double(struct sp *p, const struct ynode *n, const char *what, double min, int above,
		      double max, double *out)
{
	char a[SHOW_BUF];
	const char *t = scalar(p, n, what);
	double v;

	if (!t)
		return -1;
	if (parse_double(t, &v) || !isfinite(v)) {
		problem(p, n, "expected a number for '%s', got '%s'", what, shown(a, t));
		return -1;
	}
	if (above ? v <= min : v < min) {
		problem(p, n, "'%s' must be %s %g, got %s", what, above ? "greater than" : "at least", min,
			shown(a, t));
		return -1;
	}
	if (v > max) {
		problem(p, n, "'%s' must be at most %g, got %s", what, max, shown(a, t));
		return -1;
	}
	*out = v;
	return 0;
}

/* The index of n's text in names, or -1 after a problem. */
static int get_enum(struct sp *p, const struct ynode *n, const char *what, const char *const *names)
{
	char a[SHOW_BUF], h[HINT_BUF];
	struct strbuf all = STRBUF_INIT;
	const char *t = scalar(p, n, what);

	if (!t)
		return -1;
	for (int i = 0; names[i]; i++)
		if (!strcmp(t, names[i]))
			return i;
	for (int i = 0; names[i]; i++)
		sb_addf(&all, "%s%s", i ? "|" : "", names[i]);
	hint(p, h, t, names);
	if (*h)
		problem(p, n, "invalid value '%s' for '%s'%s", shown(a, t), what, h);
	else
		problem(p, n, "invalid value '%s' for '%s' (expected %s)", shown(a, t), what, all.buf);
	sb_release(&all);
	return -1;
}

/* A newly allocated copy of every scalar of list n, or NULL after problems; *count gets the length. */
static char **get_strings(struct sp *p, const struct ynode *n, const char *what, int *count)
{
	char **v;
	int len, bad = 0;

	if (n->kind != YNODE_SEQ) {
		problem(p, n, "expected a list for '%s', got %s", what, kind(n));
		return NULL;
	}
	len = n->n;
	if (!len) {
		problem(p, n, "empty list for '%s'", what);
		return NULL;
	}
	if (values_reserve(p, n, (size_t)len))
		return NULL;
	v = xcalloc((size_t)len, sizeof(*v));
	for (int i = 0; i < len; i++) {
		const char *t = scalar(p, ydoc_item(n, i), what);

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
		problem(p, n, "invalid value '%s' for '%s' (expected %s)", shown(a, v->text), pd->name,
			pd->choices);
		return -1;
	}
	problem(p, n, "expected %s for '%s', got '%s'",
		pd->type == PARAM_INT ? "an integer" : pd->type == PARAM_FLOAT ? "a number" : "a byte size",
		pd->name, shown(a, v->text));
	return -1;
}

/* Fill v from scalar node n, a value of parameter key; pd (may be NULL) is the kernel's declaration.
 * v->text is always set, so that the caller frees uniformly. -1 after a problem. */
static int value_set(struct sp *p, struct spec_scalar *v, const struct ynode *n, const char *key,
		     const struct param_def *pd)
{
	char a[SHOW_BUF];
	const char *t = scalar(p, n, key);

	v->line = n->line;
	v->col = n->col;
	v->text = xstrdup(t ? t : "");
	v->is_num = 0;
	if (!t)
		return -1;
	/* A null here is a value left out by mistake; "null" in quotes is a string. */
	if (scalar_is_null(n)) {
		problem(p, n, "no value for '%s'", shown(a, key));
		return -1;
	}
	v->is_num = scalar_is_num(n, NULL);
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
		problem(p, at, "kernel '%s' has no parameter '%s'%s", p->kernel->name, shown(a, name),
			hint(p, h, name, p->knames));
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

/* An axis of one key and the values of list (or scalar) n. */
static void parse_list_axis(struct sp *p, const char *name, const struct ynode *keynode,
			    const struct ynode *n)
{
	const struct param_def *pd = param_decl(p, name, keynode);
	int len = n->kind == YNODE_SEQ ? n->n : 1;
	struct spec_axis *a = axis_new(p, n, 1);

	a->keys[0] = xstrdup(name);
	if (values_reserve(p, n, (size_t)len))
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
		sb_addf(sb, "%s%s", k ? ", " : "", shown(b, a->keys[k]));
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
		problem(p, first, "empty mapping in zipped group '%s'", shown(a, name));
		return;
	}
	ax = axis_new(p, n, nkeys);
	pds = xcalloc((size_t)nkeys, sizeof(*pds));
	seen = xcalloc((size_t)nkeys, 1);
	for (int k = 0; k < nkeys; k++) {
		const struct ynode *kn = ydoc_key(first, k);
		const char *t = key_text(p, kn);

		ax->keys[k] = xstrdup(t ? t : "");
		for (int j = 0; t && j < k; j++)
			if (!strcmp(ax->keys[j], t)) {
				problem(p, kn, "duplicate key '%s'", shown(a, t));
				t = NULL;
			}
		if (t)
			pds[k] = param_decl(p, t, kn);
	}
	if (values_reserve(p, n, (size_t)len * (size_t)nkeys))
		goto out;
	ax->vals = xcalloc((size_t)len * (size_t)nkeys, sizeof(*ax->vals));
	ax->npoints = len;
	for (int e = 0; e < len; e++) {
		const struct ynode *en = ydoc_item(n, e);
		struct spec_scalar *row = &ax->vals[(size_t)e * (size_t)nkeys];
		int differ = 0;

		if (en->kind != YNODE_MAP) {
			problem(p, en, "expected a mapping in zipped group '%s', got %s", shown(a, name),
				kind(en));
			continue;
		}
		memset(seen, 0, (size_t)nkeys);
		for (int j = 0; j < en->n; j++) {
			const struct ynode *kn = ydoc_key(en, j);
			const char *t = key_text(p, kn);
			int k;

			if (!t)
				continue;
			for (k = 0; k < nkeys && strcmp(ax->keys[k], t); k++)
				;
			if (k == nkeys)
				differ = 1;
			else if (seen[k] && e)
				problem(p, kn, "duplicate key '%s'", shown(b, t));
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
			problem(p, en, "entry %d of zipped group '%s' has other keys than the first (%s)",
				e + 1, shown(a, name), keys.buf);
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
	const char *t = scalar(p, n, what);

	if (!t)
		return -1;
	if ((!parse_double(t, out) && isfinite(*out)) || !parse_bytes(t, out))
		return 0;
	problem(p, n, "expected a number for '%s', got '%s'", what, shown(a, t));
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

	snprintf(where, sizeof(where), "range '%s'", shown(a, name));
	/* The axis exists even when the range is wrong, so that its name is known to later checks. */
	ax = axis_new(p, n, 1);
	ax->keys[0] = xstrdup(name);
	map_fields(p, n, where, range_names, v, k);
	if (!v[R_FROM] || !v[R_TO]) {
		problem(p, n, "%s needs 'from' and 'to'", where);
		bad = 1;
	}
	if (!!v[R_FACTOR] == !!v[R_STEP]) {
		problem(p, n, "%s needs one of 'factor' or 'step'", where);
		bad = 1;
	}
	if (bad)
		return;
	geometric = !!v[R_FACTOR];
	bad |= range_bound(p, v[R_FROM], "from", &from);
	bad |= range_bound(p, v[R_TO], "to", &to);
	if (geometric)
		bad |= get_double(p, v[R_FACTOR], "factor", 1, 1, INFINITY, &by);
	else
		bad |= get_double(p, v[R_STEP], "step", 0, 1, INFINITY, &by);
	if (bad)
		return;
	if (from > to) {
		problem(p, n, "%s is empty: 'from' is greater than 'to'", where);
		return;
	}
	if (geometric && from <= 0) {
		problem(p, v[R_FROM], "'from' must be greater than 0 in a range with a factor");
		return;
	}
	/* The small slack keeps `to` when rounding puts it a hair past the last point. */
	count = geometric ? floor(log(to / from) / log(by) + 1e-9) + 1 : floor((to - from) / by + 1e-9) + 1;
	if (!(count <= SPEC_MAX_VALUES)) {
		problem(p, n, "%s has more than %d points", where, SPEC_MAX_VALUES);
		return;
	}
	if (values_reserve(p, n, (size_t)count))
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

static void parse_params(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF];

	if (n->kind != YNODE_MAP) {
		problem(p, n, "expected a mapping for 'params', got %s", kind(n));
		return;
	}
	for (int i = 0; i < n->n; i++) {
		const struct ynode *k = ydoc_key(n, i), *v = ydoc_value(n, i);
		const char *name = key_text(p, k);

		if (!name)
			continue;
		if (v->kind == YNODE_MAP && !is_range(p, v)) {
			problem(p, v, "expected a list, a scalar or a range {from, to, factor|step} "
				"for '%s', got a mapping (a zipped group is a list of mappings)",
				shown(a, name));
			axis_new(p, v, 1)->keys[0] = xstrdup(name);
		} else if (v->kind == YNODE_MAP) {
			parse_range(p, name, k, v);
		} else if (v->kind == YNODE_SEQ && v->n && ydoc_item(v, 0)->kind == YNODE_MAP) {
			parse_group(p, name, v);
		} else if ((v->kind == YNODE_SEQ && !v->n) || scalar_is_null(v)) {
			problem(p, v, "empty axis '%s'", shown(a, name));
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

/*
 * Each parameter once: a key in two axes would make the grid ambiguous. Then the name lists. Sorting
 * keeps this O(n log n): aliases can make thousands of keys out of a few lines.
 */
static void check_axes(struct sp *p)
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
			problem_at(p, ia->line, ia->col, "parameter '%s' is in two axes (first at %d:%d)",
				   shown(a, refs[i].key), fa->line, fa->col);
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

static int cmp_strp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether name is a parameter (an axis key). */
static int is_param(struct sp *p, const char *name)
{
	return p->nsorted && bsearch(&name, p->sorted, p->nsorted, sizeof(*p->sorted), cmp_strp);
}

static void parse_exclude(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	struct spec *s = p->s;

	if (n->kind != YNODE_SEQ) {
		problem(p, n, "expected a list for 'exclude', got %s", kind(n));
		return;
	}
	for (int i = 0; i < n->n; i++) {
		const struct ynode *en = ydoc_item(n, i);
		struct spec_match *m;
		int len;

		if (en->kind != YNODE_MAP) {
			problem(p, en, "expected a mapping in 'exclude', got %s", kind(en));
			continue;
		}
		len = en->n;
		if (!len) {
			problem(p, en, "empty exclude entry (it would drop every cell)");
			continue;
		}
		if (values_reserve(p, en, (size_t)len))
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
			const char *t = key_text(p, kn);
			const struct param_def *pd = NULL;
			int dup = 0;

			if (!t)
				continue;
			for (int j = 0; j < m->n; j++)
				dup |= !strcmp(m->keys[j], t);
			if (dup) {
				problem(p, kn, "duplicate key '%s'", shown(a, t));
				continue;
			}
			if (!is_param(p, t)) {
				problem(p, kn, "exclude key '%s' is not a parameter%s", shown(a, t),
					hint(p, h, t, p->names));
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

static void parse_control(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	const struct ynode *v[NCONTROL + 1] = { 0 }, *k[NCONTROL + 1] = { 0 };
	struct spec *s = p->s;
	const struct ynode *pn;

	if (map_fields(p, n, "'control'", control_names, v, k))
		return;
	if (v[C_EVERY])
		get_int(p, v[C_EVERY], "every", 1, &s->control_every);
	if (!v[C_PARAMS]) {
		problem(p, n, "missing 'params' in 'control'");
		return;
	}
	pn = v[C_PARAMS];
	if (pn->kind != YNODE_MAP) {
		problem(p, pn, "expected a mapping for 'params' in 'control', got %s", kind(pn));
		return;
	}
	if (!pn->n) {
		problem(p, pn, "empty 'params' in 'control'");
		return;
	}
	for (int i = 0; i < pn->n; i++) {
		const struct ynode *kn = ydoc_key(pn, i);
		const char *t = key_text(p, kn);
		const struct param_def *pd = NULL;
		struct spec_scalar sv = { 0 };

		if (!t)
			continue;
		if (json_obj_find(&s->control, t)) {
			problem(p, kn, "duplicate key '%s'", shown(a, t));
			continue;
		}
		if (p->kernel) {
			pd = kernel_param(p->kernel, t);
			if (!pd) {
				problem(p, kn, "control parameter '%s' is not a parameter of kernel '%s'%s",
					shown(a, t), p->kernel->name, hint(p, h, t, p->knames));
				continue;
			}
		} else if (!s->kernel && !is_param(p, t)) {
			problem(p, kn, "control parameter '%s' is not a parameter%s", shown(a, t),
				hint(p, h, t, p->names));
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
				problem(p, pn, "control lacks parameter '%s' (kernel '%s' has no default "
					"for it)", pd->name, p->kernel->name);
	} else if (!s->kernel) {
		for (int i = 0; p->names[i]; i++)
			if (!json_obj_find(&s->control, p->names[i]))
				problem(p, pn, "control lacks parameter '%s'", shown(a, p->names[i]));
	}
}

/* Every {name} in t names a parameter or item/gpu/host/cell; *uses_item is set when {item} is used. */
static void check_placeholders(struct sp *p, const char *t, const struct ynode *n, int *uses_item)
{
	char a[SHOW_BUF], b[SHOW_BUF], h[HINT_BUF];

	for (const char *c = t; (c = strchr(c, '{')); c++) {
		size_t len = strspn(c + 1, PLACEHOLDER_CHARS);
		char *name;
		int known = 0;

		/* Braces around anything else (JSON in an argument, say) are text, as in worker_expand. */
		if (!len || c[1 + len] != '}')
			continue;
		name = xstrndup(c + 1, len);
		/* worker_expand keeps longer names as written. */
		if (len > PLACEHOLDER_MAX) {
			problem(p, n, "placeholder '{%s}' is longer than %d characters", shown(a, name),
				PLACEHOLDER_MAX);
			free(name);
			continue;
		}
		for (int i = 0; p->phnames[i] && !known; i++)
			known = !strcmp(p->phnames[i], name);
		if (!strcmp(name, "item"))
			*uses_item = 1;
		if (!known && *hint(p, h, name, p->phnames))
			problem(p, n, "unknown placeholder '{%s}' (did you mean '{%s}'?)", shown(a, name),
				shown(b, closest_name(name, p->phnames)));
		else if (!known)
			problem(p, n, "unknown placeholder '{%s}'", shown(a, name));
		free(name);
	}
}

static void parse_command(struct sp *p, const struct ynode *n)
{
	struct spec *s = p->s;

	s->command_line = n->line;
	s->command_col = n->col;
	s->command = get_strings(p, n, "command", &s->ncommand);
}

static int env_name_ok(const char *t)
{
	if (!*t || isdigit((unsigned char)*t))
		return 0;
	for (; *t; t++)
		if (!isalnum((unsigned char)*t) && *t != '_')
			return 0;
	return 1;
}

static void parse_env(struct sp *p, const struct ynode *n, int *uses_item)
{
	char a[SHOW_BUF];
	struct spec *s = p->s;

	if (n->kind != YNODE_MAP) {
		problem(p, n, "expected a mapping for 'env', got %s", kind(n));
		return;
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *kn = ydoc_key(n, j);
		const char *key = key_text(p, kn), *val;
		int dup = 0;

		if (!key)
			continue;
		if (!env_name_ok(key)) {
			problem(p, kn, "invalid environment variable name '%s'", shown(a, key));
			continue;
		}
		for (int i = 0; i < s->nenv; i++)
			dup |= !strcmp(s->env_keys[i], key);
		if (dup) {
			problem(p, kn, "duplicate key '%s'", key);
			continue;
		}
		val = scalar(p, ydoc_value(n, j), key);
		if (!val)
			continue;
		check_placeholders(p, val, ydoc_value(n, j), uses_item);
		ALLOC_GROW(s->env_keys, (size_t)s->nenv + 1, p->env_alloc);
		s->env_vals = xrealloc(s->env_vals, p->env_alloc * sizeof(*s->env_vals));
		s->env_keys[s->nenv] = xstrdup(key);
		s->env_vals[s->nenv] = xstrdup(val);
		s->nenv++;
	}
}

/* The bound of an interval {n}, {n,}, {n,m} or {,m} at c, as the copies glibc makes of what it follows
 * (an overestimate by one); *end is set past it. 0 when c starts no interval (then '{' is a literal). */
static double regex_interval(const char *c, const char **end)
{
	double lo = 0, hi;
	const char *d = c + 1;

	if (!isdigit((unsigned char)*d) && *d != ',')
		return 0;
	for (; isdigit((unsigned char)*d); d++)
		lo = lo * 10 + (*d - '0');
	hi = lo;
	if (*d == ',')
		for (hi = 0, d++; isdigit((unsigned char)*d); d++)
			hi = hi * 10 + (*d - '0');
	if (*d != '}')
		return 0;
	*end = d;
	return (lo > hi ? lo : hi) + 1;
}

/* Whether the interval ending at '}' c has a minimum of 0 ({0,m}, {,m}, {0}, {0,}). */
static int regex_interval_min0(const char *c)
{
	while (*c != '{')
		c--;
	c++;
	while (*c == '0')
		c++;
	return !isdigit((unsigned char)*c);
}

/* Whether escape \c is zero-width or may match nothing: an anchor (\b \B \< \> \` \') or a backreference. */
static int regex_escape_nullable(char c)
{
	return (c && strchr("bB<>`'", c)) || isdigit((unsigned char)c);
}

/*
 * Whether glibc's regcomp would take too long or too much memory on pat; why is set to the reason.
 * It copies what a '+' or an interval applies to (a+ is a a*, a{2,4} is a a a? a?), so stacked or
 * nested copies ("c+++++", "((a{99}){99})") grow exponentially: count the nodes through the groups
 * (sum[d]: the group open at depth d so far, last[d]: its last atom, the one a postfix applies to).
 * And its epsilon closures take exponential time when '+' or an interval repeats a part that can match
 * nothing ("((a*)+)+", ":*+*+"): track that too (nul_seq[d]: the current alternative can match nothing,
 * nul_alt[d]: an earlier one can, nul_last[d]: the last atom can, nul_before[d]: nul_seq before it).
 */
static int regex_too_big(const char *pat, const char **why)
{
	double sum[REGEX_MAX_NEST + 1], last[REGEX_MAX_NEST + 1], atom, k;
	char nul_seq[REGEX_MAX_NEST + 1], nul_alt[REGEX_MAX_NEST + 1], nul_last[REGEX_MAX_NEST + 1];
	char nul_before[REGEX_MAX_NEST + 1], nul;
	int depth = 0;

	*why = "its repetitions expand past " REGEX_MAX_NODES_TEXT " nodes";
	sum[0] = last[0] = 0;
	nul_seq[0] = nul_last[0] = nul_before[0] = 1;
	nul_alt[0] = 0;
	for (const char *c = pat; *c; c++) {
		atom = 1;
		nul = 0;
		switch (*c) {
		case '\\':
			if (c[1])
				nul = regex_escape_nullable(*++c);
			break;
		case '^':
		case '$':
			nul = 1;
			break;
		case '[':
			/* A bracket expression is one node: skip to its ']' (a leading ']' is a member). */
			c += c[1] == '^';
			c += c[1] == ']';
			while (c[1] && c[1] != ']')
				c++;
			if (!c[1])
				return 0;   /* unterminated: regcomp says so */
			c++;
			break;
		case '(':
			if (depth == REGEX_MAX_NEST) {
				*why = "it nests more than " REGEX_MAX_NEST_TEXT " groups";
				return 1;
			}
			depth++;
			sum[depth] = last[depth] = 0;
			nul_seq[depth] = nul_last[depth] = nul_before[depth] = 1;
			nul_alt[depth] = 0;
			continue;
		case ')':
			if (depth) {
				atom = sum[depth] + 1;
				nul = nul_seq[depth] || nul_alt[depth];
				depth--;
			}
			break;
		case '|':
			sum[depth]++;
			last[depth] = 0;
			nul_alt[depth] |= nul_seq[depth];
			nul_seq[depth] = nul_last[depth] = nul_before[depth] = 1;
			continue;
		case '*':
		case '?':
			/* No copy, but a node around the atom, which a following '+' copies with it. */
			sum[depth]++;
			last[depth]++;
			nul_last[depth] = 1;
			nul_seq[depth] = nul_before[depth];
			goto check;
		case '+':
		case '{':
			k = *c == '+' ? 2 : regex_interval(c, &c);
			if (!k)
				break;   /* a '{' that starts no interval is a literal */
			if (nul_last[depth]) {
				*why = "'+' or '{n,m}' repeats a part that can match nothing";
				return 1;
			}
			sum[depth] += last[depth] * (k - 1) + 1;
			last[depth] = last[depth] * k + 1;
			/* {0,m} makes the part optional. */
			if (*c == '}' && regex_interval_min0(c)) {
				nul_last[depth] = 1;
				nul_seq[depth] = nul_before[depth];
			}
			goto check;
		}
		sum[depth] += atom;
		last[depth] = atom;
		nul_before[depth] = nul_seq[depth];
		nul_seq[depth] &= nul;
		nul_last[depth] = nul;
check:
		if (sum[depth] > REGEX_MAX_NODES)
			return 1;
	}
	return 0;
}

static void parse_metrics(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	static const char *const json_name[] = { "json", NULL };
	struct spec *s = p->s;

	if (n->kind == YNODE_SCALAR) {
		const char *t = scalar(p, n, "metrics");

		if (t && !strcmp(t, "json"))
			s->metrics = METRICS_JSON;
		else if (t && *hint(p, h, t, json_name))
			problem(p, n, "invalid value '%s' for 'metrics'%s", shown(a, t), h);
		else if (t)
			problem(p, n, "invalid value '%s' for 'metrics' (expected json or a mapping of "
				"name: regex)", shown(a, t));
		return;
	}
	if (n->kind != YNODE_MAP) {
		problem(p, n, "expected json or a mapping of name: regex for 'metrics', got %s", kind(n));
		return;
	}
	if (!n->n) {
		problem(p, n, "empty mapping for 'metrics'");
		return;
	}
	s->metrics = METRICS_REGEX;
	if (n->n > REGEX_MAX_METRICS) {
		problem(p, n, "more than %d metrics", REGEX_MAX_METRICS);
		return;
	}
	for (int j = 0; j < n->n; j++) {
		const struct ynode *kn = ydoc_key(n, j), *vn = ydoc_value(n, j);
		const char *name = key_text(p, kn), *pat, *why;
		char msg[256];
		regex_t re;
		int rc, dup = 0;

		if (!name)
			continue;
		for (int i = 0; i < s->nregex; i++)
			dup |= !strcmp(s->regex[i].name, name);
		if (dup) {
			problem(p, kn, "duplicate key '%s'", shown(a, name));
			continue;
		}
		if (!*name) {
			problem(p, kn, "empty metric name");
			continue;
		}
		pat = scalar(p, vn, name);
		if (!pat)
			continue;
		if (strlen(pat) > REGEX_MAX_LEN) {
			problem(p, vn, "regex for metric '%s' is longer than %d characters", shown(a, name),
				REGEX_MAX_LEN);
			continue;
		}
		if (regex_too_big(pat, &why)) {
			problem(p, vn, "regex for metric '%s' is too complex: %s", shown(a, name), why);
			continue;
		}
		rc = regcomp(&re, pat, REG_EXTENDED);
		if (rc) {
			regerror(rc, &re, msg, sizeof(msg));
			problem(p, vn, "invalid regex for metric '%s': %s", shown(a, name), msg);
			continue;
		}
		if (re.re_nsub != 1)
			problem(p, vn, "regex for metric '%s' must have exactly one capture group, "
				"it has %zu", shown(a, name), re.re_nsub);
		regfree(&re);
		ALLOC_GROW(s->regex, (size_t)s->nregex + 1, p->regex_alloc);
		s->regex[s->nregex].name = xstrdup(name);
		s->regex[s->nregex].pattern = xstrdup(pat);
		s->nregex++;
	}
}

static void parse_items(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF];
	struct spec *s = p->s;
	char **sorted;

	if (n->kind == YNODE_SCALAR) {
		const char *t = scalar(p, n, "items");
		long count;

		if (!t)
			return;
		if (parse_long(t, &count)) {
			problem(p, n, "expected a count or a list for 'items', got '%s'", shown(a, t));
			return;
		}
		if (count < 1) {
			problem(p, n, "'items' must be at least 1, got %ld", count);
			return;
		}
		if (values_reserve(p, n, (size_t)count))
			return;
		s->nitems = (int)count;
		s->items = xcalloc((size_t)count, sizeof(*s->items));
		for (long i = 0; i < count; i++)
			s->items[i] = xasprintf("%ld", i);
		return;
	}
	s->items = get_strings(p, n, "items", &s->nitems);
	if (!s->items)
		return;
	/* Items name rows of per-item results: two with one name would be one row. */
	sorted = xmalloc((size_t)s->nitems * sizeof(*sorted));
	memcpy(sorted, s->items, (size_t)s->nitems * sizeof(*sorted));
	qsort(sorted, (size_t)s->nitems, sizeof(*sorted), cmp_strp);
	for (int i = 1; i < s->nitems; i++)
		if (!strcmp(sorted[i - 1], sorted[i]) && (i < 2 || strcmp(sorted[i - 2], sorted[i])))
			problem(p, n, "duplicate item '%s'", shown(a, sorted[i]));
	free(sorted);
}

static void parse_timing(struct sp *p, const struct ynode *n)
{
	const struct ynode *v[NTIMING + 1] = { 0 }, *k[NTIMING + 1] = { 0 };
	struct spec_timing *t = &p->s->timing;
	int l2;

	if (map_fields(p, n, "'timing'", timing_names, v, k))
		return;
	if (v[T_MIN_SAMPLES])
		get_int(p, v[T_MIN_SAMPLES], "min_samples", 1, &t->min_samples);
	if (v[T_MIN_TIME])
		get_double(p, v[T_MIN_TIME], "min_time", 0, 0, INFINITY, &t->min_time);
	if (v[T_MAX_NOISE])
		get_double(p, v[T_MAX_NOISE], "max_noise", 0, 0, INFINITY, &t->max_noise);
	if (v[T_TIMEOUT])
		get_double(p, v[T_TIMEOUT], "timeout", 0, 1, INFINITY, &t->timeout);
	if (v[T_WARMUP])
		get_double(p, v[T_WARMUP], "warmup", 0, 0, INFINITY, &t->warmup);
	if (v[T_L2] && (l2 = get_enum(p, v[T_L2], "l2", l2_names)) >= 0)
		t->l2_hot = l2;
	if (v[T_THROTTLE])
		get_double(p, v[T_THROTTLE], "throttle", 0, 0, 1, &t->throttle);
	if (v[T_BATCH])
		get_int(p, v[T_BATCH], "batch", 0, &t->batch);
}

static void parse_name(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF];
	const char *t = scalar(p, n, "sweep");

	if (!t)
		return;
	if (!*t) {
		problem(p, n, "empty sweep name");
		return;
	}
	if (strspn(t, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") != strlen(t)) {
		problem(p, n, "invalid sweep name '%s' (use letters, digits, '.', '_' and '-')", shown(a, t));
		return;
	}
	if (strlen(t) > SWEEP_NAME_MAX) {
		problem(p, n, "sweep name longer than %d characters", SWEEP_NAME_MAX);
		return;
	}
	p->s->name = xstrdup(t);
}

static void parse_kernel(struct sp *p, const struct ynode *n)
{
	char a[SHOW_BUF], h[HINT_BUF];
	const char *t = scalar(p, n, "kernel");
	const char **names;
	size_t count = 0, np = 0;

	if (!t)
		return;
	p->s->kernel = xstrdup(t);
	for (count = 0; kernel_registry[count]; count++)
		;
	names = xcalloc(count + 1, sizeof(*names));
	for (size_t i = 0; i < count; i++)
		names[i] = kernel_registry[i]->name;
	p->kernel = kernel_find(t);
	if (!p->kernel)
		problem(p, n, "unknown kernel '%s'%s", shown(a, t), hint(p, h, t, names));
	free(names);
	if (!p->kernel)
		return;
	for (const struct param_def *pd = p->kernel->params; pd && pd->name; pd++)
		np++;
	p->knames = xcalloc(np + 1, sizeof(*p->knames));
	for (size_t i = 0; i < np; i++)
		p->knames[i] = p->kernel->params[i].name;
}

static void parse_doc(struct sp *p, const struct ynode *root)
{
	const struct ynode *v[NTOP + 1] = { 0 }, *k[NTOP + 1] = { 0 };
	static const int command_only[] = { K_METRICS, K_TIMEOUT, K_ENV, K_ITEMS };
	struct spec *s = p->s;
	int e, uses_item = 0;

	if (!root) {
		problem_at(p, 1, 1, "empty spec");
		return;
	}
	if (map_fields(p, root, NULL, top_names, v, k))
		return;
	if (v[K_SWEEP])
		parse_name(p, v[K_SWEEP]);
	else
		problem(p, root, "missing 'sweep' (the sweep's name)");
	if (v[K_DB]) {
		const char *t = scalar(p, v[K_DB], "db");

		if (t && !*t)
			problem(p, v[K_DB], "empty 'db'");
		else if (t)
			s->db = xstrdup(t);
	} else if (s->name) {
		s->db = xasprintf("results/%s.db", s->name);
	}

	if (v[K_KERNEL] && v[K_COMMAND])
		problem(p, k[K_COMMAND], "both 'kernel' and 'command' given: a sweep runs one or the other");
	else if (!v[K_KERNEL] && !v[K_COMMAND])
		problem(p, root, "missing 'kernel' or 'command'");
	if (v[K_KERNEL])
		parse_kernel(p, v[K_KERNEL]);
	if (v[K_COMMAND])
		parse_command(p, v[K_COMMAND]);
	if (v[K_KERNEL] && !v[K_COMMAND])
		for (size_t i = 0; i < ARRAY_SIZE(command_only); i++)
			if (v[command_only[i]])
				problem(p, k[command_only[i]], "'%s' is for command sweeps only%s",
					top_names[command_only[i]], command_only[i] == K_TIMEOUT ?
					" (a kernel's is timing: {timeout: SECONDS})" : "");

	if (v[K_PARAMS])
		parse_params(p, v[K_PARAMS]);
	check_axes(p);
	if (p->kernel)
		for (const struct param_def *pd = p->kernel->params; pd && pd->name; pd++)
			if (!pd->def && !is_param(p, pd->name))
				problem(p, v[K_KERNEL], "kernel '%s' needs parameter '%s' (it has no "
					"default)", p->kernel->name, pd->name);
	if (v[K_EXCLUDE])
		parse_exclude(p, v[K_EXCLUDE]);
	if (v[K_CONTROL])
		parse_control(p, v[K_CONTROL]);

	for (int i = 0; i < s->ncommand; i++)
		check_placeholders(p, s->command[i], ydoc_item(v[K_COMMAND], i), &uses_item);
	if (v[K_ENV])
		parse_env(p, v[K_ENV], &uses_item);
	if (v[K_METRICS])
		parse_metrics(p, v[K_METRICS]);
	if (v[K_TIMEOUT])
		get_double(p, v[K_TIMEOUT], "timeout", 0, 1, INFINITY, &s->timeout);
	if (v[K_ITEMS])
		parse_items(p, v[K_ITEMS]);
	else if (uses_item)
		problem(p, v[K_COMMAND] ? v[K_COMMAND] : v[K_ENV],
			"'{item}' is used but no 'items' are given");

	if (v[K_REPEAT])
		get_int(p, v[K_REPEAT], "repeat", 1, &s->repeat);
	if (v[K_ORDER] && (e = get_enum(p, v[K_ORDER], "order", order_names)) >= 0)
		s->order = (enum spec_order)e;
	if (v[K_SEED]) {
		long seed;

		if (!get_long(p, v[K_SEED], "seed", 0, LONG_MAX, &seed))
			s->seed = (uint64_t)seed;
	}
	if (v[K_TIMING])
		parse_timing(p, v[K_TIMING]);
	if (v[K_PER] && (e = get_enum(p, v[K_PER], "per", per_names)) >= 0)
		s->per = (enum spec_per)e;
	if (v[K_HOSTS])
		s->hosts = get_strings(p, v[K_HOSTS], "hosts", &s->nhosts);
	if (v[K_GANG] && (e = get_enum(p, v[K_GANG], "gang", gang_names)) >= 0)
		s->gang = (enum spec_gang)e;
	if (v[K_MAX_ATTEMPTS])
		get_int(p, v[K_MAX_ATTEMPTS], "max_attempts", 1, &s->max_attempts);
}

static void spec_defaults(struct spec *s)
{
	s->repeat = 1;
	s->order = ORDER_SEQUENTIAL;
	s->seed = 1;
	s->timing.min_samples = 10;
	s->timing.min_time = 0.5;
	s->timing.max_noise = 0.005;
	s->timing.timeout = 15;
	s->timing.warmup = 0.05;
	s->timing.l2_hot = 0;
	s->timing.throttle = 0.75;
	s->metrics = METRICS_NONE;
	s->timeout = 600;
	s->per = PER_ANY;
	s->gang = GANG_HOST;
	s->max_attempts = 3;
	s->control_every = 20;
}

/* Read text's one YAML document into p->s. */
static void parse_text(struct sp *p, const char *text, size_t len)
{
	struct ydoc d;
	int rc = ydoc_parse(&d, text, len, YAML_MAX_DEPTH);

	if (!rc)
		parse_doc(p, d.root);
	if (rc || d.trailing_error)
		problem_at(p, d.err.line, d.err.col, "%s", d.err.msg);
	else if (d.second_line)
		problem_at(p, d.second_line, d.second_col, "a second YAML document: a spec file holds one");
	ydoc_release(&d);
}

int spec_parse(const char *path, const char *text, size_t len, struct spec *out)
{
	struct sp p;
	int ret;

	memset(out, 0, sizeof(*out));
	memset(&p, 0, sizeof(p));
	spec_defaults(out);
	out->path = xstrdup(path);
	out->text = xmalloc(len + 1);
	if (len)
		memcpy(out->text, text, len);
	out->text[len] = '\0';
	out->hash = hash64(HASH64_INIT, text, len);
	p.path = path;
	p.s = out;
	parse_text(&p, text, len);
	free(p.names);
	free(p.phnames);
	free(p.sorted);
	free(p.knames);
	ret = problems_flush(&p);
	if (ret)
		spec_release(out);
	return ret;
}

int spec_load(const char *path, struct spec *out)
{
	struct strbuf sb = STRBUF_INIT;
	int ret;

	memset(out, 0, sizeof(*out));
	if (sb_read_file(&sb, path)) {
		sb_release(&sb);
		return -1;
	}
	ret = spec_parse(path, sb.buf ? sb.buf : "", sb.len, out);
	sb_release(&sb);
	return ret;
}

static void free_strings(char **v, int n)
{
	for (int i = 0; v && i < n; i++)
		free(v[i]);
	free(v);
}

void spec_release(struct spec *s)
{
	for (int a = 0; a < s->naxes; a++) {
		struct spec_axis *ax = &s->axes[a];

		for (size_t i = 0; ax->vals && i < (size_t)ax->npoints * (size_t)ax->nkeys; i++)
			free(ax->vals[i].text);
		free(ax->vals);
		free_strings(ax->keys, ax->nkeys);
	}
	free(s->axes);
	for (int e = 0; e < s->nexclude; e++) {
		for (int i = 0; i < s->exclude[e].n; i++)
			free(s->exclude[e].vals[i].text);
		free(s->exclude[e].vals);
		free_strings(s->exclude[e].keys, s->exclude[e].n);
	}
	free(s->exclude);
	for (int i = 0; i < s->nregex; i++) {
		free(s->regex[i].name);
		free(s->regex[i].pattern);
	}
	free(s->regex);
	free_strings(s->command, s->ncommand);
	free_strings(s->env_keys, s->nenv);
	free_strings(s->env_vals, s->nenv);
	free_strings(s->items, s->nitems);
	free_strings(s->hosts, s->nhosts);
	json_obj_release(&s->control);
	free(s->path);
	free(s->text);
	free(s->name);
	free(s->db);
	free(s->kernel);
	memset(s, 0, sizeof(*s));
}
