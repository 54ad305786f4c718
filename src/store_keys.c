/* store_keys.c: the SQL functions a report's keys go through: sweep_param (a parameter of a cell, as
 * json_extract reads it, without parsing the JSON), sweep_fact (a host's label, read once per host),
 * sweep_group (one integer for each distinct tuple of keys, which a GROUP BY sorts faster than the tuple)
 * and sweep_varies (whether a key takes several values in a group). */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"
#include "util.h"

/*
 * sweep_param(params, path): json_extract(params, path), value for value and error for error, for a path
 * $."NAME" into a cell's params (a flat JSON object). A report reads a key or two of each of a million
 * results, and json_extract parses the whole object at every call; here one scan finds the member. A string
 * without escapes is its bytes and an integer of up to 18 digits its number; any other scalar (a real,
 * true, an escaped string) is what json_extract makes of it alone, kept per statement by its text (that
 * value depends on the text alone, and an axis has few). The whole object is scanned, as json_extract
 * parses it whole: a malformed member elsewhere fails the call there too. Anything else (another path, a
 * member that is an object, an escaped name, odd space, a full cache) goes to json_extract itself.
 */

#define PARAM_TOKENS 1024          /* scalars kept per statement */

struct param_token {
	char *text;                /* NULL: a free slot */
	size_t len;
	sqlite3_value *value;      /* json_extract(text, '$') */
};

/* A statement's cache, the auxiliary data of its path argument (freed with the statement). */
struct param_cache {
	sqlite3_stmt *extract;     /* SELECT json_extract(?1, ?2) */
	struct param_token *tok;   /* open addressing, 2 * PARAM_TOKENS slots, at most half full */
	size_t n;
};

enum scalar_kind { SCALAR_PLAIN, SCALAR_INT, SCALAR_OTHER };

static void param_cache_release(struct param_cache *c)
{
	sqlite3_finalize(c->extract);
	for (size_t i = 0; c->tok && i < 2 * PARAM_TOKENS; i++)
		if (c->tok[i].text) {
			free(c->tok[i].text);
			sqlite3_value_free(c->tok[i].value);
		}
	free(c->tok);
}

static void param_cache_free(void *p)
{
	param_cache_release(p);
	free(p);
}

/* One row of the nested json_extract, bound by the caller: its value into ctx (out NULL) or into *out
 * (owned), 0; -1 after ctx's error. */
static int param_step(sqlite3_context *ctx, struct param_cache *c, sqlite3_value **out)
{
	sqlite3 *db = sqlite3_context_db_handle(ctx);
	int rc = sqlite3_step(c->extract);

	if (rc == SQLITE_ROW && out)
		*out = sqlite3_value_dup(sqlite3_column_value(c->extract, 0));
	else if (rc == SQLITE_ROW)
		sqlite3_result_value(ctx, sqlite3_column_value(c->extract, 0));
	else
		sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
	sqlite3_reset(c->extract);
	sqlite3_clear_bindings(c->extract);
	if (rc == SQLITE_ROW && out && !*out) {
		sqlite3_result_error_nomem(ctx);
		return -1;
	}
	return rc == SQLITE_ROW ? 0 : -1;
}

static int param_prepare(sqlite3_context *ctx, struct param_cache *c)
{
	sqlite3 *db = sqlite3_context_db_handle(ctx);

	if (!c->extract && sqlite3_prepare_v2(db, "SELECT json_extract(?1, ?2)", -1, &c->extract, NULL)) {
		sqlite3_result_error(ctx, sqlite3_errmsg(db), -1);
		return -1;
	}
	return 0;
}

/* The scalar text[0, n) alone, as json_extract reads it: 1 and its value (the cache's) in *v; 0 when the
 * cache is full; -1 after ctx's error (the scalar is malformed). */
static int param_token(sqlite3_context *ctx, struct param_cache *c, const char *text, size_t n,
		       sqlite3_value **v)
{
	uint64_t h = 14695981039346656037ULL;
	size_t i;

	if (!c->tok)
		c->tok = xcalloc(2 * PARAM_TOKENS, sizeof(*c->tok));
	for (i = 0; i < n; i++)
		h = (h ^ (unsigned char)text[i]) * 1099511628211ULL;
	for (i = h % (2 * PARAM_TOKENS); c->tok[i].text; i = (i + 1) % (2 * PARAM_TOKENS))
		if (c->tok[i].len == n && !memcmp(c->tok[i].text, text, n)) {
			*v = c->tok[i].value;
			return 1;
		}
	if (c->n == PARAM_TOKENS)
		return 0;
	if (param_prepare(ctx, c))
		return -1;
	sqlite3_bind_text(c->extract, 1, text, (int)n, SQLITE_STATIC);
	sqlite3_bind_text(c->extract, 2, "$", 1, SQLITE_STATIC);
	if (param_step(ctx, c, v))
		return -1;
	c->tok[i].text = xmalloc(n + 1);
	memcpy(c->tok[i].text, text, n);
	c->tok[i].len = n;
	c->tok[i].value = *v;
	c->n++;
	return 1;
}

static int param_space(int ch)
{
	return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* The end of the scalar at p (past a string's closing quote) and its kind; NULL when p starts none (an
 * object, an array, the end). A plain string has no escape and no control character; an integer is 0 or
 * up to 18 digits, without a leading zero, after an optional minus. */
static const char *param_scalar(const char *p, const char *end, enum scalar_kind *kind)
{
	const char *q = p, *d = p + (*p == '-');

	*kind = SCALAR_OTHER;
	if (*p == '"') {
		*kind = SCALAR_PLAIN;
		for (q++; q < end && *q != '"'; q++)
			if (*q == '\\' || (unsigned char)*q < 0x20) {
				*kind = SCALAR_OTHER;
				q += *q == '\\';
			}
		return q < end ? q + 1 : NULL;
	}
	while (q < end && (isalnum((unsigned char)*q) || *q == '-' || *q == '+' || *q == '.'))
		q++;
	if (q == p)
		return NULL;
	if (q > d && q - d <= 18 && (*d != '0' || (q - d == 1 && d == p))) {
		const char *x = d;

		while (x < q && *x >= '0' && *x <= '9')
			x++;
		if (x == q)
			*kind = SCALAR_INT;
	}
	return q;
}

/* The member's name in a path $."NAME" (its length in *n), or NULL for any other path. */
static const char *param_name(const char *path, size_t len, size_t *n)
{
	if (len < 4 || memcmp(path, "$.\"", 3) || path[len - 1] != '"')
		return NULL;
	*n = len - 4;
	if (memchr(path + 3, '"', *n) || memchr(path + 3, '\\', *n))
		return NULL;
	return path + 3;
}

static const char *param_skip(const char *p, const char *end)
{
	while (p < end && param_space(*p))
		p++;
	return p;
}

/* The member called name in the flat object s[0, n): 1 with its scalar in *at (NULL: no such member), *len
 * and *kind; 0 when this scan does not read the object (json_extract will); -1 after ctx's error. */
static int param_scan(sqlite3_context *ctx, struct param_cache *c, const char *s, size_t n, const char *name,
		      size_t nn, const char **at, size_t *len, enum scalar_kind *kind)
{
	const char *p = param_skip(s, s + n), *end = s + n, *k, *v;
	enum scalar_kind kk;
	sqlite3_value *x;
	int r;

	*at = NULL;
	if (p == end || *p++ != '{')
		return 0;
	p = param_skip(p, end);
	for (int first = 1; p < end && !(first && *p == '}'); first = 0) {
		k = p + 1;
		if (*p != '"' || !(p = param_scalar(p, end, &kk)) || kk != SCALAR_PLAIN)
			return 0;
		p = param_skip(p, end);
		if (p == end || *p++ != ':')
			return 0;
		v = p = param_skip(p, end);
		if (p == end || *p == '{' || *p == '[' || !(p = param_scalar(p, end, &kk)))
			return 0;
		if (kk == SCALAR_OTHER && (r = param_token(ctx, c, v, (size_t)(p - v), &x)) <= 0)
			return r;
		if (!*at && (size_t)(p - v) && (size_t)(v - k) > nn && !memcmp(k, name, nn) && k[nn] == '"') {
			*at = v;
			*len = (size_t)(p - v);
			*kind = kk;
		}
		p = param_skip(p, end);
		if (p < end && *p == ',') {
			p = param_skip(p + 1, end);
			if (p == end || *p == '}')
				return 0;
			continue;
		}
		if (p == end || *p != '}')
			return 0;
		break;
	}
	if (p == end || *p != '}')
		return 0;
	return param_skip(p + 1, end) == end;
}

static void fn_sweep_param(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct param_cache *kept = sqlite3_get_auxdata(ctx, 1), *c = kept;
	const char *s, *path, *name, *at = NULL;
	size_t n, np, nn, len = 0;
	enum scalar_kind kind = SCALAR_OTHER;
	sqlite3_value *v;
	int r = 0;

	(void)argc;
	if (!c)
		c = xcalloc(1, sizeof(*c));
	if (sqlite3_value_type(argv[0]) == SQLITE_TEXT && sqlite3_value_type(argv[1]) == SQLITE_TEXT) {
		s = (const char *)sqlite3_value_text(argv[0]);
		n = (size_t)sqlite3_value_bytes(argv[0]);
		path = (const char *)sqlite3_value_text(argv[1]);
		np = (size_t)sqlite3_value_bytes(argv[1]);
		/* text with a NUL inside is json_extract's to read */
		if (s && path && strlen(s) == n && strlen(path) == np && (name = param_name(path, np, &nn)))
			r = param_scan(ctx, c, s, n, name, nn, &at, &len, &kind);
	}
	if (r > 0 && !at)
		sqlite3_result_null(ctx);
	else if (r > 0 && kind == SCALAR_PLAIN)
		sqlite3_result_text(ctx, at + 1, (int)len - 2, SQLITE_TRANSIENT);
	else if (r > 0 && kind == SCALAR_INT)
		sqlite3_result_int64(ctx, strtoll(at, NULL, 10));
	else if (r > 0 && (r = param_token(ctx, c, at, len, &v)) > 0)
		sqlite3_result_value(ctx, v);
	if (!r && !param_prepare(ctx, c)) {
		sqlite3_bind_value(c->extract, 1, argv[0]);
		sqlite3_bind_value(c->extract, 2, argv[1]);
		param_step(ctx, c, NULL);
	}
	/* last: SQLite may free it at once; and setting it again would free what it holds */
	if (!kept)
		sqlite3_set_auxdata(ctx, 1, c, param_cache_free);
}


/* ---- keys as GROUP BY compares them ---- */

/* A value's bytes, alike for values GROUP BY finds equal under BINARY or a collation of store_order_text:
 * its type, then an integer (a real that is an integer as that integer), a real, or the length and bytes of
 * text (equal when its bytes are) or a blob. */
static void key_int(struct strbuf *sb, int64_t i)
{
	sb_addc(sb, SQLITE_INTEGER);
	sb_add(sb, &i, sizeof(i));
}

static void key_bytes(struct strbuf *sb, int type, const void *b, size_t n)
{
	uint32_t len = (uint32_t)n;

	sb_addc(sb, (char)type);
	sb_add(sb, &len, sizeof(len));
	sb_add(sb, b, n);
}

static void key_value(struct strbuf *sb, sqlite3_value *v)
{
	double d;

	switch (sqlite3_value_type(v)) {
	case SQLITE_INTEGER:
		key_int(sb, sqlite3_value_int64(v));
		break;
	case SQLITE_FLOAT:
		d = sqlite3_value_double(v);
		if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == (double)(int64_t)d) {
			key_int(sb, (int64_t)d);
		} else {
			sb_addc(sb, SQLITE_FLOAT);
			sb_add(sb, &d, sizeof(d));
		}
		break;
	case SQLITE_TEXT: {
		const unsigned char *t = sqlite3_value_text(v);

		key_bytes(sb, SQLITE_TEXT, t, (size_t)sqlite3_value_bytes(v));
		break;
	}
	case SQLITE_BLOB: {
		const void *b = sqlite3_value_blob(v);

		key_bytes(sb, SQLITE_BLOB, b, (size_t)sqlite3_value_bytes(v));
		break;
	}
	default:
		sb_addc(sb, SQLITE_NULL);
	}
}

/* Byte strings numbered 0, 1, 2, ... in the order they are first met. A slot holds the hash beside the
 * number, so that a lookup reads the string only when the hash matches. */
struct key_entry {
	size_t at, len;            /* in bytes */
	uint64_t hash;
};
struct key_slot {
	uint64_t hash;
	size_t id;                 /* number + 1; 0: a free slot */
};
struct key_map {
	struct strbuf bytes;       /* every string, back to back */
	struct key_entry *e;       /* by number */
	size_t n, alloc;
	struct key_slot *slot;     /* open addressing, at most half full */
	size_t cap;
};

static void key_map_release(struct key_map *m)
{
	sb_release(&m->bytes);
	free(m->e);
	free(m->slot);
}

static uint64_t key_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 33);
}

static uint64_t key_hash(const char *s, size_t n)
{
	uint64_t h = n * 0x9e3779b97f4a7c15ULL, w;

	for (; n >= 8; s += 8, n -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ key_mix(w)) * 0x9e3779b97f4a7c15ULL;
	}
	if (n) {
		w = 0;
		memcpy(&w, s, n);
		h = (h ^ key_mix(w)) * 0x9e3779b97f4a7c15ULL;
	}
	return key_mix(h);
}

static void key_map_grow(struct key_map *m)
{
	size_t i;

	m->cap = m->cap ? 2 * m->cap : 1024;
	free(m->slot);
	m->slot = xcalloc(m->cap, sizeof(*m->slot));
	for (size_t id = 0; id < m->n; id++) {
		for (i = m->e[id].hash & (m->cap - 1); m->slot[i].id; i = (i + 1) & (m->cap - 1))
			;
		m->slot[i] = (struct key_slot){ m->e[id].hash, id + 1 };
	}
}

/* The number of s[0, n): the one it was given, else the next (*added set). */
static size_t key_map_id(struct key_map *m, const char *s, size_t n, int *added)
{
	uint64_t h = key_hash(s, n);
	size_t i;

	*added = 0;
	if (2 * (m->n + 1) > m->cap)
		key_map_grow(m);
	for (i = h & (m->cap - 1); m->slot[i].id; i = (i + 1) & (m->cap - 1)) {
		const struct key_entry *e = &m->e[m->slot[i].id - 1];

		if (m->slot[i].hash == h && e->len == n && !memcmp(m->bytes.buf + e->at, s, n))
			return m->slot[i].id - 1;
	}
	ALLOC_GROW(m->e, m->n + 1, m->alloc);
	m->e[m->n] = (struct key_entry){ m->bytes.len, n, h };
	sb_add(&m->bytes, s, n);
	m->slot[i] = (struct key_slot){ h, m->n + 1 };
	*added = 1;
	return m->n++;
}

/*
 * sweep_group(params, n, path1, ..., pathn, k1, k2, ...): an integer for the tuple (json_extract(params,
 * path1), ..., json_extract(params, pathn), k1, k2, ...), the same for tuples GROUP BY finds equal
 * (key_value), another for any other. A report groups by it rather than by its keys: SQLite sorts a million
 * rows by one integer faster than by several values, and reads the keys, equal within a group, once a group.
 * The parameters are read once for each distinct params (sweep_param's scan): the cells of a point, pass
 * after pass, share it. Numbers are given in the order tuples come, per statement (the auxiliary data of n, a
 * constant).
 */
struct group_state {
	struct param_cache pc;
	struct key_map points;     /* params text -> its number here */
	size_t *tuple;             /* by point: the number of its parameters' tuple in tuples */
	size_t alloc_tuple;
	struct key_map tuples;     /* the parameters' values, key_value's bytes */
	struct key_map groups;     /* the tuple's number and the other keys' bytes */
	struct strbuf key;
};

static void group_state_free(void *p)
{
	struct group_state *g = p;

	param_cache_release(&g->pc);
	key_map_release(&g->points);
	key_map_release(&g->tuples);
	key_map_release(&g->groups);
	free(g->tuple);
	sb_release(&g->key);
	free(g);
}

/* json_extract(params, path)'s value, key_value's bytes, into g->key: 0, or -1 after ctx's error. */
static int group_param(sqlite3_context *ctx, struct group_state *g, sqlite3_value *params,
		       sqlite3_value *path)
{
	const char *s = (const char *)sqlite3_value_text(params), *p = (const char *)sqlite3_value_text(path);
	size_t n = (size_t)sqlite3_value_bytes(params), np = (size_t)sqlite3_value_bytes(path), nn, len = 0;
	const char *name = p && strlen(p) == np ? param_name(p, np, &nn) : NULL, *at = NULL;
	enum scalar_kind kind = SCALAR_OTHER;
	sqlite3_value *v = NULL;
	int r = 0;

	if (name && s && strlen(s) == n && sqlite3_value_type(params) == SQLITE_TEXT)
		r = param_scan(ctx, &g->pc, s, n, name, nn, &at, &len, &kind);
	if (r > 0 && !at)
		sb_addc(&g->key, SQLITE_NULL);
	else if (r > 0 && kind == SCALAR_PLAIN)
		key_bytes(&g->key, SQLITE_TEXT, at + 1, len - 2);
	else if (r > 0 && kind == SCALAR_INT)
		key_int(&g->key, strtoll(at, NULL, 10));
	else if (r > 0 && (r = param_token(ctx, &g->pc, at, len, &v)) > 0)
		key_value(&g->key, v);
	if (r)
		return r < 0 ? -1 : 0;
	if (param_prepare(ctx, &g->pc))
		return -1;
	sqlite3_bind_value(g->pc.extract, 1, params);
	sqlite3_bind_value(g->pc.extract, 2, path);
	if (param_step(ctx, &g->pc, &v))
		return -1;
	key_value(&g->key, v);
	sqlite3_value_free(v);
	return 0;
}

/* The number of the parameters' tuple of params (argv[0]), read once per distinct params: 0, or -1 after
 * ctx's error. */
static int group_point(sqlite3_context *ctx, struct group_state *g, int npath, sqlite3_value **argv,
		       size_t *out)
{
	const char *s = (const char *)sqlite3_value_text(argv[0]);
	size_t n = (size_t)sqlite3_value_bytes(argv[0]), point = 0;
	int added = 1;

	if (sqlite3_value_type(argv[0]) == SQLITE_TEXT) {
		point = key_map_id(&g->points, s, n, &added);
		if (!added) {
			*out = g->tuple[point];
			return 0;
		}
	}
	sb_reset(&g->key);
	for (int i = 0; i < npath; i++)
		if (group_param(ctx, g, argv[0], argv[2 + i]))
			return -1;
	*out = key_map_id(&g->tuples, g->key.buf, g->key.len, &added);
	if (sqlite3_value_type(argv[0]) == SQLITE_TEXT) {
		ALLOC_GROW(g->tuple, point + 1, g->alloc_tuple);
		g->tuple[point] = *out;
	}
	return 0;
}

static void fn_sweep_group(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct group_state *kept = argc >= 2 ? sqlite3_get_auxdata(ctx, 1) : NULL, *g = kept;
	int npath = argc >= 2 ? sqlite3_value_int(argv[1]) : -1, added;
	size_t tuple;

	if (npath < 0 || 2 + npath > argc) {
		sqlite3_result_error(ctx, "sweep_group(params, n, path1, ..., pathn, k1, ...): n paths", -1);
		return;
	}
	if (!g)
		g = xcalloc(1, sizeof(*g));
	if (!group_point(ctx, g, npath, argv, &tuple)) {
		if (2 + npath == argc) {
			sqlite3_result_int64(ctx, (sqlite3_int64)tuple);
		} else {
			sb_reset(&g->key);
			key_int(&g->key, (int64_t)tuple);
			for (int i = 2 + npath; i < argc; i++)
				key_value(&g->key, argv[i]);
			sqlite3_result_int64(ctx, (sqlite3_int64)key_map_id(&g->groups, g->key.buf, g->key.len, &added));
		}
	}
	/* last: SQLite may free it at once; and setting it again would free what it holds */
	if (!kept)
		sqlite3_set_auxdata(ctx, 1, g, group_state_free);
}

/*
 * sweep_fact(id, facts, path): json_extract(facts, path), read once per id in a statement. A report reads a
 * host's label for each of its million results, and the facts of a host row (its id) do not change while
 * a statement reads them; json_extract would parse them at every row.
 */
struct fact_cache {
	struct param_cache pc;     /* its nested json_extract */
	int64_t *id;               /* open addressing; value NULL: a free slot */
	sqlite3_value **value;
	size_t n, cap;
};

static void fact_cache_free(void *p)
{
	struct fact_cache *f = p;

	param_cache_release(&f->pc);
	for (size_t i = 0; i < f->cap; i++)
		sqlite3_value_free(f->value[i]);
	free(f->id);
	free(f->value);
	free(f);
}

static void fact_grow(struct fact_cache *f)
{
	int64_t *id = f->id;
	sqlite3_value **value = f->value;
	size_t cap = f->cap;

	f->cap = cap ? 2 * cap : 64;
	f->id = xcalloc(f->cap, sizeof(*f->id));
	f->value = xcalloc(f->cap, sizeof(*f->value));
	for (size_t i = 0; i < cap; i++)
		if (value[i]) {
			size_t s = key_mix((uint64_t)id[i]) & (f->cap - 1);

			while (f->value[s])
				s = (s + 1) & (f->cap - 1);
			f->id[s] = id[i];
			f->value[s] = value[i];
		}
	free(id);
	free(value);
}

static void fn_sweep_fact(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct fact_cache *kept = sqlite3_get_auxdata(ctx, 2), *f = kept;
	int64_t id = sqlite3_value_int64(argv[0]);
	sqlite3_value *v = NULL;
	size_t s;

	(void)argc;
	if (!f)
		f = xcalloc(1, sizeof(*f));
	if (2 * (f->n + 1) > f->cap)
		fact_grow(f);
	for (s = key_mix((uint64_t)id) & (f->cap - 1); f->value[s] && f->id[s] != id; s = (s + 1) & (f->cap - 1))
		;
	if (sqlite3_value_type(argv[0]) == SQLITE_INTEGER && f->value[s]) {
		sqlite3_result_value(ctx, f->value[s]);
	} else if (!param_prepare(ctx, &f->pc)) {
		sqlite3_bind_value(f->pc.extract, 1, argv[1]);
		sqlite3_bind_value(f->pc.extract, 2, argv[2]);
		if (!param_step(ctx, &f->pc, &v)) {
			sqlite3_result_value(ctx, v);
			/* kept by id: a NULL id (no host) is no host's */
			if (sqlite3_value_type(argv[0]) == SQLITE_INTEGER) {
				f->id[s] = id;
				f->value[s] = v;
				f->n++;
			} else {
				sqlite3_value_free(v);
			}
		}
	}
	/* last: SQLite may free it at once; and setting it again would free what it holds */
	if (!kept)
		sqlite3_set_auxdata(ctx, 2, f, fact_cache_free);
}

/*
 * sweep_varies(x), an aggregate: 1 when x takes more than one value in the group, NULLs aside, as GROUP BY
 * tells values apart (key_value); else 0. What count(DISTINCT x) > 1 says, without keeping every value.
 */
struct varies_state {
	struct strbuf first;       /* the first value that is not NULL, key_value's bytes */
	struct strbuf key;
	int seen, varies;
};

static void varies_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct varies_state *v = sqlite3_aggregate_context(ctx, sizeof(*v));

	(void)argc;
	if (!v) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (v->varies || sqlite3_value_type(argv[0]) == SQLITE_NULL)
		return;
	if (!v->seen) {
		sb_init(&v->first);
		sb_init(&v->key);
		key_value(&v->first, argv[0]);
		v->seen = 1;
		return;
	}
	sb_reset(&v->key);
	key_value(&v->key, argv[0]);
	v->varies = v->key.len != v->first.len || memcmp(v->key.buf, v->first.buf, v->key.len);
}

static void varies_final(sqlite3_context *ctx)
{
	struct varies_state *v = sqlite3_aggregate_context(ctx, 0);

	sqlite3_result_int(ctx, v && v->varies);
	if (v && v->seen) {
		sb_release(&v->first);
		sb_release(&v->key);
	}
}

int store_keys_register(sqlite3 *db)
{
	if (sqlite3_create_function_v2(db, "sweep_param", 2, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				       fn_sweep_param, NULL, NULL, NULL) ||
	    sqlite3_create_function_v2(db, "sweep_group", -1, SQLITE_UTF8, NULL, fn_sweep_group, NULL, NULL, NULL) ||
	    sqlite3_create_function_v2(db, "sweep_fact", 3, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL,
				       fn_sweep_fact, NULL, NULL, NULL) ||
	    sqlite3_create_function_v2(db, "sweep_varies", 1, SQLITE_UTF8 | SQLITE_DETERMINISTIC, NULL, NULL,
				       varies_step, varies_final, NULL))
		return error("sql error: %s", sqlite3_errmsg(db));
	return 0;
}
