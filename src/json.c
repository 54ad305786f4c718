/* json.c: writing escaped JSON values and reading flat objects of scalars. */
#include "json.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/*
 * The length (1 to 4) of the UTF-8 character at p, or 0 when p does not start a well-formed one: overlong
 * forms, surrogates (U+D800..U+DFFF) and code points past U+10FFFF are not UTF-8 (RFC 3629). Then *bad
 * is the length of the invalid part (at least 1): its longest start that could have begun a character.
 * Never reads past a NUL byte.
 */
static size_t utf8_char(const unsigned char *p, size_t *bad)
{
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;

	if (*p < 0x80)
		return 1;
	if (*p >= 0xc2 && *p <= 0xdf) {
		n = 2;
	} else if (*p >= 0xe0 && *p <= 0xef) {
		n = 3;
		lo = *p == 0xe0 ? 0xa0 : 0x80;      /* below: overlong */
		hi = *p == 0xed ? 0x9f : 0xbf;      /* above: surrogates */
	} else if (*p >= 0xf0 && *p <= 0xf4) {
		n = 4;
		lo = *p == 0xf0 ? 0x90 : 0x80;      /* below: overlong */
		hi = *p == 0xf4 ? 0x8f : 0xbf;      /* above: past U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if (p[i] < lo || p[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return n;
}

/*
 * Scan the JSON number at s (RFC 8259: -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?): NULL with *end
 * after it, or why there is none. A number that overflows a double is out of range (one that underflows
 * reads as 0 or a subnormal, as written).
 */
static const char *scan_number(const char *s, const char **end)
{
	const char *p = s;

	if (*p == '-')
		p++;
	if (!isdigit((unsigned char)*p))
		return "expected a value";
	if (*p == '0')
		p++;
	else
		while (isdigit((unsigned char)*p))
			p++;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return "bad number";
		while (isdigit((unsigned char)*p))
			p++;
	}
	if (*p == 'e' || *p == 'E') {
		p++;
		if (*p == '+' || *p == '-')
			p++;
		if (!isdigit((unsigned char)*p))
			return "bad number";
		while (isdigit((unsigned char)*p))
			p++;
	}
	/* 01, 0x10, 12ab, 1.5.3: not a number followed by something else. */
	if (isalnum((unsigned char)*p) || *p == '.' || *p == '+' || *p == '-')
		return "bad number";
	if (isinf(strtod(s, NULL)))
		return "number out of range";
	*end = p;
	return NULL;
}

int json_number_ok(const char *s)
{
	const char *end;

	return !scan_number(s, &end) && !*end;
}

void json_add_str(struct strbuf *sb, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n, bad;

	sb_addc(sb, '"');
	while (*p) {
		switch (*p) {
		case '"': sb_adds(sb, "\\\""); break;
		case '\\': sb_adds(sb, "\\\\"); break;
		case '\n': sb_adds(sb, "\\n"); break;
		case '\r': sb_adds(sb, "\\r"); break;
		case '\t': sb_adds(sb, "\\t"); break;
		default:
			if (*p < 0x20) {
				sb_addf(sb, "\\u%04x", *p);
			} else if (*p < 0x80) {
				sb_addc(sb, (char)*p);
			} else if ((n = utf8_char(p, &bad))) {
				sb_add(sb, p, n);
				p += n;
				continue;
			} else {
				/* JSON text is UTF-8: what is not becomes U+FFFD, one for each invalid part. */
				sb_adds(sb, "\xef\xbf\xbd");
				p += bad;
				continue;
			}
		}
		p++;
	}
	sb_addc(sb, '"');
}

void json_add_num(struct strbuf *sb, double v)
{
	char buf[32];

	if (!isfinite(v)) {
		sb_adds(sb, "null");
		return;
	}
	if (v == floor(v) && fabs(v) < 1e15) {
		sb_addf(sb, "%.0f", v);
		return;
	}
	/* The shortest of %.15g..%.17g that reads back as the same double. A normal double needing fewer
	 * digits gets them from %.15g, which drops trailing zeros; a subnormal holds fewer than 15
	 * significant digits, so %.15g would show noise: for one, start from 1 digit. */
	for (int prec = fabs(v) < DBL_MIN ? 1 : 15; prec <= 17; prec++) {
		snprintf(buf, sizeof(buf), "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			break;
	}
	sb_adds(sb, buf);
}

void json_obj_add(struct json_obj *o, const char *key, const char *val, enum json_type type)
{
	ALLOC_GROW(o->v, o->n + 1, o->alloc);
	o->v[o->n].key = xstrdup(key);
	o->v[o->n].val = xstrdup(val);
	o->v[o->n].type = type;
	o->n++;
}

void json_obj_release(struct json_obj *o)
{
	for (size_t i = 0; i < o->n; i++) {
		free(o->v[i].key);
		free(o->v[i].val);
	}
	free(o->v);
	o->v = NULL;
	o->n = o->alloc = 0;
}

const struct json_pair *json_obj_find(const struct json_obj *o, const char *key)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->v[i].key, key))
			return &o->v[i];
	return NULL;
}

const char *json_obj_get(const struct json_obj *o, const char *key)
{
	const struct json_pair *p = json_obj_find(o, key);

	return p ? p->val : NULL;
}

void json_add_num_text(struct strbuf *sb, const char *val)
{
	double v;

	if (json_number_ok(val))
		sb_adds(sb, val);
	else if (!parse_double(val, &v))
		json_add_num(sb, v);
	else
		sb_adds(sb, "null");
}

void json_obj_write(struct strbuf *sb, const struct json_obj *o)
{
	sb_addc(sb, '{');
	for (size_t i = 0; i < o->n; i++) {
		const char *val = o->v[i].val;

		if (i)
			sb_addc(sb, ',');
		json_add_str(sb, o->v[i].key);
		sb_addc(sb, ':');
		if (o->v[i].type == JSON_STR)
			json_add_str(sb, val);
		else if (o->v[i].type == JSON_NUM)
			json_add_num_text(sb, val);
		else if (o->v[i].type == JSON_BOOL && (!strcmp(val, "true") || !strcmp(val, "false")))
			sb_adds(sb, val);
		else
			sb_adds(sb, "null");
	}
	sb_addc(sb, '}');
}

/* The deepest nesting read (the object itself is level 1): values are followed by recursion, so a hostile
 * depth must stop before the stack does. Nothing sweep writes goes past 3. */
#define JSON_MAX_DEPTH 64

struct reader {
	const char *p;
	char *err;
	size_t errlen;
};

static int fail(struct reader *r, const char *what)
{
	snprintf(r->err, r->errlen, "%s", what);
	return -1;
}

static int too_deep(struct reader *r)
{
	snprintf(r->err, r->errlen, "nesting deeper than %d levels", JSON_MAX_DEPTH);
	return -1;
}

static void skip_ws(struct reader *r)
{
	while (*r->p == ' ' || *r->p == '\t' || *r->p == '\n' || *r->p == '\r')
		r->p++;
}

static void add_utf8(struct strbuf *sb, unsigned cp)
{
	if (cp < 0x80) {
		sb_addc(sb, (char)cp);
	} else if (cp < 0x800) {
		sb_addc(sb, (char)(0xc0 | (cp >> 6)));
		sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
	} else if (cp < 0x10000) {
		sb_addc(sb, (char)(0xe0 | (cp >> 12)));
		sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3f)));
		sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
	} else {
		sb_addc(sb, (char)(0xf0 | (cp >> 18)));
		sb_addc(sb, (char)(0x80 | ((cp >> 12) & 0x3f)));
		sb_addc(sb, (char)(0x80 | ((cp >> 6) & 0x3f)));
		sb_addc(sb, (char)(0x80 | (cp & 0x3f)));
	}
}

static int read_hex4(struct reader *r, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < 4; i++) {
		char c = r->p[i];

		if (!isxdigit((unsigned char)c))
			return fail(r, "bad \\u escape");
		v = v * 16 + (unsigned)(isdigit((unsigned char)c) ? c - '0' : tolower((unsigned char)c) - 'a' + 10);
	}
	r->p += 4;
	*out = v;
	return 0;
}

/* A string at r->p (opening quote included), unescaped into sb. Its text must be UTF-8, and a \u escape
 * of a surrogate must be the high half of a pair, the low half following at once. */
static int read_string(struct reader *r, struct strbuf *sb)
{
	r->p++;
	for (;;) {
		char c = *r->p++;
		unsigned cp, lo;
		size_t n, bad;

		if (!c)
			return fail(r, "unterminated string");
		if (c == '"')
			return 0;
		if ((unsigned char)c < 0x20)
			return fail(r, "control character in string");
		if ((unsigned char)c >= 0x80) {
			if (!(n = utf8_char((const unsigned char *)r->p - 1, &bad)))
				return fail(r, "invalid UTF-8 in string");
			sb_add(sb, r->p - 1, n);
			r->p += n - 1;
			continue;
		}
		if (c != '\\') {
			sb_addc(sb, c);
			continue;
		}
		switch (c = *r->p++) {
		case '"': case '\\': case '/': sb_addc(sb, c); break;
		case 'b': sb_addc(sb, '\b'); break;
		case 'f': sb_addc(sb, '\f'); break;
		case 'n': sb_addc(sb, '\n'); break;
		case 'r': sb_addc(sb, '\r'); break;
		case 't': sb_addc(sb, '\t'); break;
		case 'u':
			if (read_hex4(r, &cp))
				return -1;
			if (cp >= 0xdc00 && cp < 0xe000)
				return fail(r, "lone surrogate in \\u escape");
			if (cp >= 0xd800 && cp < 0xdc00) {
				if (r->p[0] != '\\' || r->p[1] != 'u')
					return fail(r, "lone surrogate in \\u escape");
				r->p += 2;
				if (read_hex4(r, &lo))
					return -1;
				if (lo < 0xdc00 || lo >= 0xe000)
					return fail(r, "lone surrogate in \\u escape");
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			/* Values are C strings: a NUL would cut them short without a word. */
			if (!cp)
				return fail(r, "NUL in string");
			add_utf8(sb, cp);
			break;
		default:
			return fail(r, "bad escape in string");
		}
	}
}

static int read_scalar(struct reader *r, struct strbuf *val, enum json_type *type)
{
	const char *why, *end;

	if (*r->p == '"') {
		*type = JSON_STR;
		return read_string(r, val);
	}
	if (!strncmp(r->p, "true", 4) || !strncmp(r->p, "null", 4)) {
		*type = r->p[0] == 't' ? JSON_BOOL : JSON_NULL;
		sb_add(val, r->p, 4);
		r->p += 4;
		return 0;
	}
	if (!strncmp(r->p, "false", 5)) {
		*type = JSON_BOOL;
		sb_add(val, r->p, 5);
		r->p += 5;
		return 0;
	}
	if ((why = scan_number(r->p, &end)))
		return fail(r, why);
	*type = JSON_NUM;
	sb_add(val, r->p, (size_t)(end - r->p));
	r->p = end;
	return 0;
}

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Refuse an object whose keys (those of a's pairs and of b's) are not all different: which value wins
 * would be anyone's guess. Sorting keeps a hostile number of keys from taking n^2 time. */
static int check_duplicates(struct reader *r, const struct json_obj *a, const struct json_obj *b)
{
	size_t n = a->n + b->n, k = 0;
	const char **keys;
	int ret = 0;

	if (n < 2)
		return 0;
	keys = xmalloc(n * sizeof(*keys));
	for (size_t i = 0; i < a->n; i++)
		keys[k++] = a->v[i].key;
	for (size_t i = 0; i < b->n; i++)
		keys[k++] = b->v[i].key;
	qsort(keys, n, sizeof(*keys), cmp_key);
	for (size_t i = 1; i < n && !ret; i++)
		if (!strcmp(keys[i - 1], keys[i])) {
			char shown[44];

			snprintf(r->err, r->errlen, "duplicate key '%s'", printable(shown, keys[i], 40));
			ret = -1;
		}
	free(keys);
	return ret;
}

static int read_object(struct reader *r, int depth, struct json_obj *o, int skip);

/* Check and pass over any value: nested ones must be JSON too. */
static int skip_value(struct reader *r, int depth)
{
	struct strbuf tmp = STRBUF_INIT;
	enum json_type type;
	int ret;

	if (*r->p == '{')
		return read_object(r, depth + 1, NULL, 1);
	if (*r->p != '[') {
		ret = read_scalar(r, &tmp, &type);
		sb_release(&tmp);
		return ret;
	}
	if (depth + 1 > JSON_MAX_DEPTH)
		return too_deep(r);
	r->p++;
	skip_ws(r);
	if (*r->p == ']') {
		r->p++;
		return 0;
	}
	for (;;) {
		skip_ws(r);
		if (skip_value(r, depth + 1))
			return -1;
		skip_ws(r);
		if (*r->p == ']') {
			r->p++;
			return 0;
		}
		if (*r->p != ',')
			return fail(r, "expected ',' or ']'");
		r->p++;
	}
}

/*
 * The object at r->p, at nesting level depth. Its scalar pairs go into o; nested values are an error
 * unless skip. o NULL (a nested object): every value is checked and passed over.
 */
static int read_object(struct reader *r, int depth, struct json_obj *o, int skip)
{
	struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
	static const struct json_obj none = JSON_OBJ_INIT;
	struct json_obj passed = JSON_OBJ_INIT;   /* keys of values not kept in o */
	enum json_type type;
	int ret = -1;

	if (depth > JSON_MAX_DEPTH)
		return too_deep(r);
	r->p++;
	skip_ws(r);
	if (*r->p == '}') {
		r->p++;
		return 0;
	}
	for (;;) {
		skip_ws(r);
		if (*r->p != '"') {
			fail(r, "expected a key");
			goto out;
		}
		sb_reset(&key);
		sb_add(&key, "", 0);
		if (read_string(r, &key))
			goto out;
		skip_ws(r);
		if (*r->p != ':') {
			fail(r, "expected ':'");
			goto out;
		}
		r->p++;
		skip_ws(r);
		if (o && (*r->p == '[' || *r->p == '{') && !skip) {
			fail(r, "nested value");
			goto out;
		}
		if (o && *r->p != '[' && *r->p != '{') {
			sb_reset(&val);
			sb_add(&val, "", 0);
			if (read_scalar(r, &val, &type))
				goto out;
			json_obj_add(o, key.buf, val.buf, type);
		} else {
			if (skip_value(r, depth))
				goto out;
			json_obj_add(&passed, key.buf, "", JSON_NULL);
		}
		skip_ws(r);
		if (*r->p == '}') {
			r->p++;
			break;
		}
		if (*r->p != ',') {
			fail(r, "expected ',' or '}'");
			goto out;
		}
		r->p++;
	}
	ret = check_duplicates(r, o ? o : &none, &passed);
out:
	sb_release(&key);
	sb_release(&val);
	json_obj_release(&passed);
	return ret;
}

int json_parse_flat(const char *text, struct json_obj *out, int skip, char *err, size_t errlen)
{
	struct reader r = { text, err, errlen };
	struct json_obj o = JSON_OBJ_INIT;

	skip_ws(&r);
	if (*r.p != '{') {
		fail(&r, "not a JSON object");
		goto fail;
	}
	if (read_object(&r, 1, &o, skip))
		goto fail;
	skip_ws(&r);
	if (*r.p) {
		fail(&r, "trailing characters after the object");
		goto fail;
	}
	*out = o;
	return 0;
fail:
	json_obj_release(&o);
	*out = (struct json_obj)JSON_OBJ_INIT;
	return -1;
}
