/* plan.c: a spec's grid expanded into cells in run order, each with a stable key. Pure. */
#include "plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

/* The grid's keys once, in spec order and in sorted order (the key hash uses sorted order so that
 * reordering a spec's axes keeps every cell's key), and every value of every key rendered once: a cell
 * is then put together from pieces, with no number formatted or parsed per cell. */
struct grid {
	const struct spec *s;
	int nkeys;
	const char **names;         /* spec order */
	int *axis, *col;            /* key i is column col[i] of axis axis[i] */
	int *sorted;                /* indices into names, sorted by name */
	uint64_t points;            /* product of axis sizes, excludes not applied */
	int *digit;                 /* current point, one index per axis */
	struct strbuf *piece;       /* per key: "name":value of each point (JSON), then its canonical pairs */
	size_t **at;                /* per key: where point p's JSON (2p) and canonical pair (2p+1) start */
	struct grid_xset *xset;     /* the excludes, one set per combination of axes they name */
	int nxset;
	uint32_t *xpoint;           /* the current point on a set's axes, as its tuples are */
	struct strbuf json, canon;
	char key[17];
};

/*
 * The excludes that constrain the same axes, as a hash set of the points (one index per such axis) they
 * drop: a point is then looked up once per set, not matched against every exclude. An exclude whose
 * values match too many points of its axes for a set (a zipped column with repeated values) keeps its
 * per-axis matches instead and is matched as before (nbroad).
 */
struct grid_xset {
	int naxes;
	int *axes;                  /* ascending */
	uint32_t *tuples;           /* ntuples x naxes point indices */
	size_t ntuples, alloc;
	uint32_t *slot;             /* open addressing: a tuple's index + 1, 0 when empty; nslot a power of 2 */
	size_t nslot;
	unsigned char ***broad;     /* per broad exclude, per axis of the set: which points it matches */
	int nbroad;
};

/* Past this many points, an exclude is matched axis by axis rather than put in its set's table. */
#define XSET_MAX_TUPLES 4096

static const struct grid *sort_grid;

static int cmp_names(const void *a, const void *b)
{
	return strcmp(sort_grid->names[*(const int *)a], sort_grid->names[*(const int *)b]);
}

static const struct spec_scalar *axis_value(const struct spec *s, int a, int col, int p)
{
	const struct spec_axis *ax = &s->axes[a];

	return &ax->vals[(size_t)p * (size_t)ax->nkeys + (size_t)col];
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

/* Key k's pieces: for each point of its axis, `"name":value` and the canonical pair plan_key makes. */
static void grid_pieces(struct grid *g, int k)
{
	const struct spec_axis *ax = &g->s->axes[g->axis[k]];
	struct strbuf *sb = &g->piece[k], val = STRBUF_INIT;

	g->at[k] = xcalloc(2 * (size_t)ax->npoints + 1, sizeof(size_t));
	for (int p = 0; p < ax->npoints; p++) {
		const struct spec_scalar *v = axis_value(g->s, g->axis[k], g->col[k], p);
		double x;

		g->at[k][2 * p] = sb->len;
		json_add_str(sb, g->names[k]);
		sb_addc(sb, ':');
		add_value(sb, v);
		g->at[k][2 * p + 1] = sb->len;
		if (v->is_num && !parse_double(v->text, &x)) {
			sb_reset(&val);
			json_add_num(&val, x);
			add_canon_pair(sb, g->names[k], 'n', val.buf, val.len);
		} else {
			add_canon_pair(sb, g->names[k], 's', v->text, strlen(v->text));
		}
	}
	g->at[k][2 * (size_t)ax->npoints] = sb->len;
	sb_release(&val);
}

static uint64_t xset_hash(const uint32_t *t, int n)
{
	return hash64(HASH64_INIT, t, (size_t)n * sizeof(*t));
}

/* Whether the set holds tuple t (its naxes point indices). */
static int xset_has(const struct grid_xset *x, const uint32_t *t)
{
	size_t mask = x->nslot - 1, i;

	if (!x->nslot)
		return 0;
	for (i = xset_hash(t, x->naxes) & mask; x->slot[i]; i = (i + 1) & mask)
		if (!memcmp(&x->tuples[(size_t)(x->slot[i] - 1) * (size_t)x->naxes], t,
			    (size_t)x->naxes * sizeof(*t)))
			return 1;
	return 0;
}

static void xset_put_slot(struct grid_xset *x, size_t tuple)
{
	size_t mask = x->nslot - 1, i;

	for (i = xset_hash(&x->tuples[tuple * (size_t)x->naxes], x->naxes) & mask; x->slot[i]; i = (i + 1) & mask)
		;
	x->slot[i] = (uint32_t)(tuple + 1);
}

/* Add tuple t, once; the table grows to stay at most half full. */
static void xset_add(struct grid_xset *x, const uint32_t *t)
{
	if (xset_has(x, t))
		return;
	if (2 * (x->ntuples + 1) > x->nslot) {
		free(x->slot);
		x->nslot = x->nslot ? 2 * x->nslot : 16;
		x->slot = xcalloc(x->nslot, sizeof(*x->slot));
		for (size_t i = 0; i < x->ntuples; i++)
			xset_put_slot(x, i);
	}
	ALLOC_GROW(x->tuples, (x->ntuples + 1) * (size_t)x->naxes, x->alloc);
	memcpy(&x->tuples[x->ntuples * (size_t)x->naxes], t, (size_t)x->naxes * sizeof(*t));
	xset_put_slot(x, x->ntuples++);
}

/* The set of the excludes that constrain exactly these axes (touched[a]), made when new. */
static struct grid_xset *xset_for(struct grid *g, const unsigned char *touched)
{
	int n = 0, same;

	for (int a = 0; a < g->s->naxes; a++)
		n += touched[a];
	for (int i = 0; i < g->nxset; i++) {
		same = g->xset[i].naxes == n;
		for (int j = 0; j < g->xset[i].naxes && same; j++)
			same = touched[g->xset[i].axes[j]];
		if (same)
			return &g->xset[i];
	}
	g->xset = xrealloc(g->xset, ((size_t)g->nxset + 1) * sizeof(*g->xset));
	memset(&g->xset[g->nxset], 0, sizeof(*g->xset));
	g->xset[g->nxset].naxes = n;
	g->xset[g->nxset].axes = xcalloc((size_t)n + 1, sizeof(int));
	n = 0;
	for (int a = 0; a < g->s->naxes; a++)
		if (touched[a])
			g->xset[g->nxset].axes[n++] = a;
	return &g->xset[g->nxset++];
}

/* The points of one axis an exclude's entries on it all match, ascending (on: some entry names the axis). */
struct plist {
	uint32_t *p;
	size_t n;
	int on;
};

/* Put the points an exclude drops into its set: l[a] lists the points of axis a its entries on a all match. */
static void xset_exclude(struct grid *g, struct plist *l)
{
	const struct spec *s = g->s;
	unsigned char *touched = xcalloc((size_t)s->naxes + 1, 1);
	struct grid_xset *x;
	uint64_t points = 1;
	uint32_t *t;
	size_t *at;

	for (int a = 0; a < s->naxes; a++)
		if ((touched[a] = (unsigned char)l[a].on))
			points = points > XSET_MAX_TUPLES ? points : points * l[a].n;
	x = xset_for(g, touched);
	free(touched);
	if (!points)
		return;
	if (points > XSET_MAX_TUPLES) {
		x->broad = xrealloc(x->broad, ((size_t)x->nbroad + 1) * sizeof(*x->broad));
		x->broad[x->nbroad] = xcalloc((size_t)x->naxes + 1, sizeof(**x->broad));
		for (int j = 0; j < x->naxes; j++) {
			const struct plist *pl = &l[x->axes[j]];
			unsigned char *m = xcalloc((size_t)s->axes[x->axes[j]].npoints + 1, 1);

			for (size_t i = 0; i < pl->n; i++)
				m[pl->p[i]] = 1;
			x->broad[x->nbroad][j] = m;
		}
		x->nbroad++;
		return;
	}
	/* Every combination of the matched points: an odometer over each axis's list of them. */
	at = xcalloc((size_t)x->naxes + 1, sizeof(*at));
	t = xcalloc((size_t)x->naxes + 1, sizeof(*t));
	for (int j = 0; j < x->naxes; ) {
		for (int i = 0; i < x->naxes; i++)
			t[i] = l[x->axes[i]].p[at[i]];
		xset_add(x, t);
		for (j = 0; j < x->naxes && ++at[j] == l[x->axes[j]].n; j++)
			at[j] = 0;
	}
	if (!x->naxes)
		xset_add(x, t);
	free(at);
	free(t);
}

/*
 * A key's values sorted, so that an exclude's entry finds its points by binary search, not by a walk of
 * the axis: the points whose value is a number, by number (1024.0 is 1024); the others by text; and every
 * point by text (an entry whose value is not a number matches by text whatever the point's value is).
 */
struct key_index {
	double *x;                  /* per point: its number, NAN when it is not one */
	uint32_t *num, *txt, *all;
	size_t nnum, ntxt, nall;
};

static const struct grid *sort_kgrid;
static int sort_k;
static const double *sort_x;

static const char *point_text(const struct grid *g, int k, uint32_t p)
{
	return axis_value(g->s, g->axis[k], g->col[k], (int)p)->text;
}

static int cmp_num(const void *a, const void *b)
{
	double x = sort_x[*(const uint32_t *)a], y = sort_x[*(const uint32_t *)b];

	return x < y ? -1 : x > y;
}

static int cmp_text(const void *a, const void *b)
{
	return strcmp(point_text(sort_kgrid, sort_k, *(const uint32_t *)a),
		      point_text(sort_kgrid, sort_k, *(const uint32_t *)b));
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void key_index(const struct grid *g, int k, struct key_index *ki)
{
	int n = g->s->axes[g->axis[k]].npoints;

	ki->x = xcalloc((size_t)n + 1, sizeof(*ki->x));
	ki->num = xcalloc((size_t)n + 1, sizeof(*ki->num));
	ki->txt = xcalloc((size_t)n + 1, sizeof(*ki->txt));
	ki->all = xcalloc((size_t)n + 1, sizeof(*ki->all));
	ki->nnum = ki->ntxt = 0;
	for (int p = 0; p < n; p++) {
		const struct spec_scalar *v = axis_value(g->s, g->axis[k], g->col[k], p);

		if (!v->is_num || parse_double(v->text, &ki->x[p]) || isnan(ki->x[p]))
			ki->x[p] = NAN;
		if (isnan(ki->x[p]))
			ki->txt[ki->ntxt++] = (uint32_t)p;
		else
			ki->num[ki->nnum++] = (uint32_t)p;
		ki->all[p] = (uint32_t)p;
	}
	ki->nall = (size_t)n;
	sort_kgrid = g;
	sort_k = k;
	sort_x = ki->x;
	qsort(ki->num, ki->nnum, sizeof(*ki->num), cmp_num);
	qsort(ki->txt, ki->ntxt, sizeof(*ki->txt), cmp_text);
	qsort(ki->all, ki->nall, sizeof(*ki->all), cmp_text);
}

static void key_index_release(struct key_index *ki)
{
	free(ki->x);
	free(ki->num);
	free(ki->txt);
	free(ki->all);
}

/* The points of v[0..n) (sorted by number when y is not NULL, else by text) equal to *y, or to text: they
 * are v[*first] on, as many as it returns. */
static size_t key_range(const struct grid *g, int k, const struct key_index *ki, const uint32_t *v, size_t n,
			const double *y, const char *text, size_t *first)
{
	size_t lo = 0, hi = n, end;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (y ? ki->x[v[mid]] < *y : strcmp(point_text(g, k, v[mid]), text) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (end = lo; end < n && (y ? ki->x[v[end]] == *y : !strcmp(point_text(g, k, v[end]), text)); end++)
		;
	*first = lo;
	return end - lo;
}

/* The points of key k's axis entry v matches, into l (ANDed with what l already holds): two numbers
 * compare as numbers (1024.0 is 1024), anything else as text. */
static void key_match(const struct grid *g, int k, const struct key_index *ki, const struct spec_scalar *v,
		      struct plist *l)
{
	struct plist m = { NULL, 0, 1 };
	size_t f1 = 0, f2 = 0, n1 = 0, n2, n = 0;
	const uint32_t *v2 = ki->all;
	double y;

	if (v->is_num && !parse_double(v->text, &y)) {
		n1 = key_range(g, k, ki, ki->num, ki->nnum, &y, NULL, &f1);
		n2 = key_range(g, k, ki, ki->txt, ki->ntxt, NULL, v->text, &f2);
		v2 = ki->txt;
	} else {
		n2 = key_range(g, k, ki, ki->all, ki->nall, NULL, v->text, &f2);
	}
	m.p = xcalloc(n1 + n2 + 1, sizeof(*m.p));
	memcpy(m.p, ki->num + f1, n1 * sizeof(*m.p));
	memcpy(m.p + n1, v2 + f2, n2 * sizeof(*m.p));
	m.n = n1 + n2;
	qsort(m.p, m.n, sizeof(*m.p), cmp_u32);
	if (!l->on) {
		*l = m;
		return;
	}
	/* Both ascending: their intersection in one pass. */
	for (size_t i = 0, j = 0; i < l->n && j < m.n; ) {
		if (l->p[i] == m.p[j])
			l->p[n++] = l->p[i++], j++;
		else if (l->p[i] < m.p[j])
			i++;
		else
			j++;
	}
	l->n = n;
	free(m.p);
}

/* Which points of its axes each exclude matches, found by binary search in each key's sorted values, and
 * put in the sets. An entry naming no key of the grid matches nothing, so neither does its exclude. */
static void grid_excludes(struct grid *g)
{
	const struct spec *s = g->s;
	struct plist *l = xcalloc((size_t)s->naxes + 1, sizeof(*l));
	struct key_index *ki = xcalloc((size_t)g->nkeys + 1, sizeof(*ki));

	for (int e = 0; e < s->nexclude; e++) {
		const struct spec_match *m = &s->exclude[e];
		int i, k;

		for (i = 0; i < m->n; i++) {
			for (k = 0; k < g->nkeys && strcmp(g->names[k], m->keys[i]); k++)
				;
			if (k == g->nkeys)
				break;
			if (!ki[k].all)
				key_index(g, k, &ki[k]);
			key_match(g, k, &ki[k], &m->vals[i], &l[g->axis[k]]);
		}
		if (i == m->n)
			xset_exclude(g, l);
		for (int a = 0; a < s->naxes; a++)
			free(l[a].p);
		memset(l, 0, ((size_t)s->naxes + 1) * sizeof(*l));
	}
	for (int k = 0; k < g->nkeys; k++)
		key_index_release(&ki[k]);
	free(ki);
	free(l);
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
	g->piece = xcalloc((size_t)g->nkeys + 1, sizeof(*g->piece));
	g->at = xcalloc((size_t)g->nkeys + 1, sizeof(*g->at));
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
	for (k = 0; k < g->nkeys; k++) {
		sb_init(&g->piece[k]);
		grid_pieces(g, k);
	}
	g->xpoint = xcalloc((size_t)s->naxes + 1, sizeof(*g->xpoint));
	grid_excludes(g);
	sb_init(&g->json);
	sb_init(&g->canon);
}

static void grid_release(struct grid *g)
{
	for (int k = 0; k < g->nkeys; k++) {
		sb_release(&g->piece[k]);
		free(g->at[k]);
	}
	for (int i = 0; i < g->nxset; i++) {
		struct grid_xset *x = &g->xset[i];

		for (int b = 0; b < x->nbroad; b++) {
			for (int j = 0; j < x->naxes; j++)
				free(x->broad[b][j]);
			free(x->broad[b]);
		}
		free(x->broad);
		free(x->axes);
		free(x->tuples);
		free(x->slot);
	}
	free(g->xset);
	free(g->xpoint);
	free(g->piece);
	free(g->at);
	free(g->names);
	free(g->axis);
	free(g->col);
	free(g->sorted);
	free(g->digit);
	sb_release(&g->json);
	sb_release(&g->canon);
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

static int grid_excluded(const struct grid *g)
{
	uint32_t *t = g->xpoint;

	for (int i = 0; i < g->nxset; i++) {
		const struct grid_xset *x = &g->xset[i];

		for (int j = 0; j < x->naxes; j++)
			t[j] = (uint32_t)g->digit[x->axes[j]];
		if (xset_has(x, t))
			return 1;
		for (int b = 0; b < x->nbroad; b++) {
			int all = 1;

			for (int j = 0; j < x->naxes && all; j++)
				all = x->broad[b][j][g->digit[x->axes[j]]];
			if (all)
				return 1;
		}
	}
	return 0;
}

static uint64_t finish_key(const char *sweep, const struct strbuf *canon, int pass, const char *replica,
			   char out[17])
{
	static const char hex[] = "0123456789abcdef";
	uint64_t h = hash64(HASH64_INIT, sweep, strlen(sweep) + 1);
	char tail[16], *t = tail + sizeof(tail);
	unsigned p = (unsigned)pass;

	/* The pass in decimal and its NUL, written by hand: snprintf cost a tenth of a plan. */
	*--t = '\0';
	do
		*--t = (char)('0' + p % 10);
	while ((p /= 10));
	h = hash64(h, canon->buf ? canon->buf : "", canon->len);
	h = hash64(h, t, (size_t)(tail + sizeof(tail) - t));
	h = hash64(h, replica, strlen(replica) + 1);
	for (int i = 15; i >= 0; i--)
		out[i] = hex[(h >> (4 * (15 - i))) & 15];
	out[16] = '\0';
	return h;
}

/* Build the current point's JSON (spec order) and canonical form (sorted, the same bytes plan_key makes
 * from the JSON) from the keys' pieces. */
static void grid_render(struct grid *g)
{
	sb_reset(&g->json);
	sb_reset(&g->canon);
	sb_addc(&g->json, '{');
	for (int k = 0; k < g->nkeys; k++) {
		size_t p = 2 * (size_t)g->digit[g->axis[k]];

		if (k)
			sb_addc(&g->json, ',');
		sb_add(&g->json, g->piece[k].buf + g->at[k][p], g->at[k][p + 1] - g->at[k][p]);
	}
	sb_addc(&g->json, '}');
	for (int i = 0; i < g->nkeys; i++) {
		int k = g->sorted[i];
		size_t p = 2 * (size_t)g->digit[g->axis[k]] + 1;

		sb_add(&g->canon, g->piece[k].buf + g->at[k][p], g->at[k][p + 1] - g->at[k][p]);
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
	c.hash = finish_key(g->s->name, &g->canon, pass, "", g->key);
	c.ord = ord;
	c.pass = pass;
	c.key = g->key;
	c.params = g->json.buf;
	c.replica = "";
	return fn(&c, data);
}

/* A list of indices, 32 bits wide when every value fits: a shuffled plan of ten million cells keeps two
 * such lists, 80 MB at 64 bits. */
struct idx {
	uint32_t *v32;
	uint64_t *v64;
};

static void idx_init(struct idx *x, uint64_t n, uint64_t max)
{
	x->v32 = max <= UINT32_MAX ? xmalloc((size_t)(n ? n : 1) * sizeof(*x->v32)) : NULL;
	x->v64 = x->v32 ? NULL : xmalloc((size_t)(n ? n : 1) * sizeof(*x->v64));
}

static uint64_t idx_get(const struct idx *x, uint64_t i)
{
	return x->v32 ? x->v32[i] : x->v64[i];
}

static void idx_set(struct idx *x, uint64_t i, uint64_t v)
{
	if (x->v32)
		x->v32[i] = (uint32_t)v;
	else
		x->v64[i] = v;
}

static void idx_release(struct idx *x)
{
	free(x->v32);
	free(x->v64);
}

/* The shuffled order: the points that survive the excludes, and a seeded permutation of their cells. */
static int each_shuffled(struct grid *g, int repeat, int (*fn)(const struct plan_cell *, void *), void *data)
{
	const struct spec *s = g->s;
	uint64_t nkept = 0, total, ord = 0;
	struct idx kept, perm;
	struct rng r;
	int ret = 0;

	for (uint64_t p = 0; p < g->points; p++) {
		grid_seek(g, p);
		nkept += !grid_excluded(g);
	}
	idx_init(&kept, nkept, g->points);
	for (uint64_t p = 0, i = 0; p < g->points; p++) {
		grid_seek(g, p);
		if (!grid_excluded(g))
			idx_set(&kept, i++, p);
	}
	total = nkept * (uint64_t)repeat;
	idx_init(&perm, total, total);
	for (uint64_t i = 0; i < total; i++)
		idx_set(&perm, i, i);
	rng_seed(&r, s->seed);
	for (uint64_t i = total; i > 1; i--) {
		uint64_t j = rng_below(&r, i), t = idx_get(&perm, i - 1);

		idx_set(&perm, i - 1, idx_get(&perm, j));
		idx_set(&perm, j, t);
	}
	for (uint64_t i = 0; i < total && !ret; i++) {
		uint64_t c = idx_get(&perm, i);

		ret = emit(g, idx_get(&kept, c / (uint64_t)repeat), (int)(c % (uint64_t)repeat), ord++, fn, data);
	}
	idx_release(&perm);
	idx_release(&kept);
	return ret;
}

int plan_each(const struct spec *s, int (*fn)(const struct plan_cell *, void *), void *data)
{
	int repeat = s->repeat > 0 ? s->repeat : 1, ret = 0;
	struct grid g;
	uint64_t ord = 0;

	grid_init(&g, s);
	/* Sequential and interleaved orders walk the points as they go (excludes skipped), keeping nothing. */
	if (s->order == ORDER_SHUFFLE) {
		ret = each_shuffled(&g, repeat, fn, data);
	} else if (s->order == ORDER_INTERLEAVE) {
		for (int pass = 0; pass < repeat && !ret; pass++)
			for (uint64_t p = 0; p < g.points && !ret; p++) {
				grid_seek(&g, p);
				if (!grid_excluded(&g))
					ret = emit(&g, p, pass, ord++, fn, data);
			}
	} else {
		for (uint64_t p = 0; p < g.points && !ret; p++) {
			grid_seek(&g, p);
			if (grid_excluded(&g))
				continue;
			for (int pass = 0; pass < repeat && !ret; pass++)
				ret = emit(&g, p, pass, ord++, fn, data);
		}
	}
	grid_release(&g);
	return ret;
}
