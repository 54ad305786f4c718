/* plan.c: a spec's grid expanded into cells in run order, each with a stable key. Pure. */
#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* The grid's keys once, in spec order and in sorted order (the key hash uses sorted order so that
 * reordering a spec's axes keeps every cell's key). */
struct grid {
	const struct spec *s;
	int nkeys;
	const char **names;         /* spec order */
	int *axis, *col;            /* key i is column col[i] of axis axis[i] */
	int *sorted;                /* indices into names, sorted by name */
	uint64_t points;            /* product of axis sizes, excludes not applied */
	int *digit;                 /* current point, one index per axis */
	struct strbuf json, canon, val;
	char key[17];
};

static const struct grid *sort_grid;

static int cmp_names(const void *a, const void *b)
{
	return strcmp(sort_grid->names[*(const int *)a], sort_grid->names[*(const int *)b]);
}

static void grid_init(struct grid *g, const struct spec *s)
{
	int k = 0;

	memset(g, 0, sizeof(*g));
	g->s = s;
	for (int a = 0; a < s->naxes; a++)
		g->nkeys += s->axes[a].nkeys;
	g->names = xcalloc((size_t)g->nkeys + 1, sizeof(*g->names));
	g->axis = xcalloc((size_t)g->nkeys + 1, sizeof(int));
	g->col = xcalloc((size_t)g->nkeys + 1, sizeof(int));
	g->sorted = xcalloc((size_t)g->nkeys + 1, sizeof(int));
	g->digit = xcalloc((size_t)s->naxes + 1, sizeof(int));
	g->points = 1;
	for (int a = 0; a < s->naxes; a++) {
		g->points *= (uint64_t)s->axes[a].npoints;
		for (int c = 0; c < s->axes[a].nkeys; c++) {
			g->names[k] = s->axes[a].keys[c];
			g->axis[k] = a;
			g->col[k] = c;
			g->sorted[k] = k;
			k++;
		}
	}
	sort_grid = g;
	qsort(g->sorted, (size_t)g->nkeys, sizeof(int), cmp_names);
	sb_init(&g->json);
	sb_init(&g->canon);
	sb_init(&g->val);
}

static void grid_release(struct grid *g)
{
	free(g->names);
	free(g->axis);
	free(g->col);
	free(g->sorted);
	free(g->digit);
	sb_release(&g->json);
	sb_release(&g->canon);
	sb_release(&g->val);
}

static const struct spec_scalar *grid_value(const struct grid *g, int k)
{
	const struct spec_axis *ax = &g->s->axes[g->axis[k]];

	return &ax->vals[(size_t)g->digit[g->axis[k]] * (size_t)ax->nkeys + (size_t)g->col[k]];
}

/* Point p as one digit per axis; the last axis varies fastest. */
static void grid_seek(struct grid *g, uint64_t p)
{
	for (int a = g->s->naxes - 1; a >= 0; a--) {
		uint64_t n = (uint64_t)g->s->axes[a].npoints;

		g->digit[a] = (int)(p % n);
		p /= n;
	}
}

static int same_value(const struct spec_scalar *a, const struct spec_scalar *b)
{
	double x, y;

	if (a->is_num && b->is_num && !parse_double(a->text, &x) && !parse_double(b->text, &y))
		return x == y;
	return !strcmp(a->text, b->text);
}

static int grid_excluded(const struct grid *g)
{
	for (int e = 0; e < g->s->nexclude; e++) {
		const struct spec_match *m = &g->s->exclude[e];
		int all = 1;

		for (int i = 0; i < m->n && all; i++) {
			int k;

			for (k = 0; k < g->nkeys; k++)
				if (!strcmp(g->names[k], m->keys[i]))
					break;
			all = k < g->nkeys && same_value(grid_value(g, k), &m->vals[i]);
		}
		if (all)
			return 1;
	}
	return 0;
}

/* A scalar as it appears in JSON: numbers normalised so that the key does not depend on spelling. */
static void add_value(struct strbuf *sb, const struct spec_scalar *v)
{
	double x;

	if (v->is_num && !parse_double(v->text, &x))
		json_add_num(sb, x);
	else
		json_add_str(sb, v->text);
}

static void add_canon_pair(struct strbuf *sb, const char *name, char type, const char *val, size_t len)
{
	sb_adds(sb, name);
	sb_addc(sb, '\0');
	sb_addc(sb, type);
	sb_add(sb, val, len);
	sb_addc(sb, '\0');
}

static void finish_key(const char *sweep, const struct strbuf *canon, int pass, const char *replica,
		       char out[17])
{
	uint64_t h = hash64(HASH64_INIT, sweep, strlen(sweep) + 1);
	char tail[32];
	int n = snprintf(tail, sizeof(tail), "%d", pass);

	h = hash64(h, canon->buf ? canon->buf : "", canon->len);
	h = hash64(h, tail, (size_t)n + 1);
	h = hash64(h, replica, strlen(replica) + 1);
	snprintf(out, 17, "%016llx", (unsigned long long)h);
}

/* Build the current point's JSON (spec order) and canonical form (sorted, the same bytes plan_key makes
 * from the JSON). */
static void grid_render(struct grid *g)
{
	sb_reset(&g->json);
	sb_reset(&g->canon);
	sb_addc(&g->json, '{');
	for (int k = 0; k < g->nkeys; k++) {
		if (k)
			sb_addc(&g->json, ',');
		json_add_str(&g->json, g->names[k]);
		sb_addc(&g->json, ':');
		add_value(&g->json, grid_value(g, k));
	}
	sb_addc(&g->json, '}');
	for (int i = 0; i < g->nkeys; i++) {
		int k = g->sorted[i];
		const struct spec_scalar *v = grid_value(g, k);
		double x;

		if (v->is_num && !parse_double(v->text, &x)) {
			sb_reset(&g->val);
			json_add_num(&g->val, x);
			add_canon_pair(&g->canon, g->names[k], 'n', g->val.buf, g->val.len);
		} else {
			add_canon_pair(&g->canon, g->names[k], 's', v->text, strlen(v->text));
		}
	}
}

static int cmp_pairs(const void *a, const void *b)
{
	return strcmp(((const struct json_pair *)a)->key, ((const struct json_pair *)b)->key);
}

void plan_key(const char *sweep, const char *params, int pass, const char *replica, char out[17])
{
	struct json_obj o = JSON_OBJ_INIT;
	struct strbuf canon = STRBUF_INIT;
	char err[128];

	if (json_parse_flat(params, &o, 0, err, sizeof(err)))
		BUG("plan_key: params are not a flat JSON object (%s): %s", err, params);
	if (o.n > 1)   /* o.v is NULL for {} */
		qsort(o.v, o.n, sizeof(*o.v), cmp_pairs);
	for (size_t i = 0; i < o.n; i++) {
		struct strbuf val = STRBUF_INIT;
		double x;

		if (o.v[i].type == JSON_NUM && !parse_double(o.v[i].val, &x)) {
			json_add_num(&val, x);
			add_canon_pair(&canon, o.v[i].key, 'n', val.buf, val.len);
		} else {
			add_canon_pair(&canon, o.v[i].key, 's', o.v[i].val, strlen(o.v[i].val));
		}
		sb_release(&val);
	}
	finish_key(sweep, &canon, pass, replica, out);
	sb_release(&canon);
	json_obj_release(&o);
}

int plan_count(const struct spec *s, uint64_t *points, uint64_t *cells)
{
	struct grid g;
	uint64_t n = 0;

	grid_init(&g, s);
	for (uint64_t p = 0; p < g.points; p++) {
		grid_seek(&g, p);
		n += !grid_excluded(&g);
	}
	grid_release(&g);
	*points = n;
	*cells = n * (uint64_t)(s->repeat > 0 ? s->repeat : 1);
	return 0;
}

int plan_check_size(const struct spec *s, uint64_t max, uint64_t *cells)
{
	uint64_t n = 1, points, repeat = (uint64_t)(s->repeat > 0 ? s->repeat : 1);
	int over = 0;

	for (int a = 0; a < s->naxes && !over; a++) {
		uint64_t k = (uint64_t)s->axes[a].npoints;

		if (k && n > UINT64_MAX / k)
			over = 1;
		else
			n *= k;
	}
	if (over || n > UINT64_MAX / repeat) {
		*cells = UINT64_MAX;
		return -1;
	}
	*cells = n * repeat;
	if (*cells <= max)
		return 0;
	/* Excludes may bring it under: count them, when counting takes seconds, not hours. */
	if (s->nexclude && n <= (uint64_t)1 << 30)
		plan_count(s, &points, cells);
	return *cells <= max ? 0 : -1;
}

static int emit(struct grid *g, uint64_t point, int pass, uint64_t ord,
		int (*fn)(const struct plan_cell *, void *), void *data)
{
	struct plan_cell c;

	grid_seek(g, point);
	grid_render(g);
	finish_key(g->s->name, &g->canon, pass, "", g->key);
	c.ord = ord;
	c.pass = pass;
	c.key = g->key;
	c.params = g->json.buf;
	c.replica = "";
	return fn(&c, data);
}

int plan_each(const struct spec *s, int (*fn)(const struct plan_cell *, void *), void *data)
{
	int repeat = s->repeat > 0 ? s->repeat : 1;
	struct grid g;
	uint64_t ord = 0, *kept = NULL, nkept = 0;
	size_t alloc = 0;
	int ret = 0;

	grid_init(&g, s);
	/* The points that survive the excludes, once: every order below walks this list. */
	for (uint64_t p = 0; p < g.points; p++) {
		grid_seek(&g, p);
		if (!grid_excluded(&g)) {
			ALLOC_GROW(kept, nkept + 1, alloc);
			kept[nkept++] = p;
		}
	}
	if (s->order == ORDER_SHUFFLE) {
		uint64_t total = nkept * (uint64_t)repeat, *perm = xmalloc((size_t)(total ? total : 1) * sizeof(*perm));
		struct rng r;

		for (uint64_t i = 0; i < total; i++)
			perm[i] = i;
		rng_seed(&r, s->seed);
		for (uint64_t i = total; i > 1; i--) {
			uint64_t j = rng_below(&r, i), t = perm[i - 1];

			perm[i - 1] = perm[j];
			perm[j] = t;
		}
		for (uint64_t i = 0; i < total && !ret; i++)
			ret = emit(&g, kept[perm[i] / (uint64_t)repeat], (int)(perm[i] % (uint64_t)repeat), ord++,
				   fn, data);
		free(perm);
	} else if (s->order == ORDER_INTERLEAVE) {
		for (int pass = 0; pass < repeat && !ret; pass++)
			for (uint64_t i = 0; i < nkept && !ret; i++)
				ret = emit(&g, kept[i], pass, ord++, fn, data);
	} else {
		for (uint64_t i = 0; i < nkept && !ret; i++)
			for (int pass = 0; pass < repeat && !ret; pass++)
				ret = emit(&g, kept[i], pass, ord++, fn, data);
	}
	free(kept);
	grid_release(&g);
	return ret;
}
