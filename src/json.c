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

/* A number's text as JSON: as written when it is a JSON number, else the double it reads as (0x10, .5
 * and +2 are not JSON), else null (inf, nan, a word). */
static void add_num_text(struct strbuf *sb, const char *val)
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
			add_num_text(sb, val);
		else if (o->v[i].type == JSON_BOOL && (!strcmp(val, "true") || !strcmp(val, "false")))
			sb_adds(sb, val);
		else
			sb_adds(sb, "null");
	}
	sb_addc(sb, '}');
}

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

/* A string at r->p (opening quote included), unescaped into sb. */
static int read_string(struct reader *r, struct strbuf *sb)
{
	r->p++;
	for (;;) {
		char c = *r->p++;
		unsigned cp, lo;

		if (!c)
			return fail(r, "unterminated string");
		if (c == '"')
			return 0;
		if ((unsigned char)c < 0x20)
			return fail(r, "control character in string");
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
			if (cp >= 0xd800 && cp < 0xdc00 && r->p[0] == '\\' && r->p[1] == 'u') {
				r->p += 2;
				if (read_hex4(r, &lo))
					return -1;
				if (lo >= 0xdc00 && lo < 0xe000)
					cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			if (!cp)
				return fail(r, "NUL in string");
			add_utf8(sb, cp);
			break;
		default:
			return fail(r, "bad escape in string");
		}
	}
}

/* Skip a nested array or object, strings included. */
static int skip_nested(struct reader *r)
{
	int depth = 0;
	struct strbuf tmp = STRBUF_INIT;

	do {
		char c = *r->p;

		if (!c) {
			sb_release(&tmp);
			return fail(r, "unterminated array or object");
		}
		if (c == '"') {
			sb_reset(&tmp);
			if (read_string(r, &tmp)) {
				sb_release(&tmp);
				return -1;
			}
			continue;
		}
		if (c == '[' || c == '{')
			depth++;
		else if (c == ']' || c == '}')
			depth--;
		r->p++;
	} while (depth > 0);
	sb_release(&tmp);
	return 0;
}

static int read_scalar(struct reader *r, struct strbuf *val, enum json_type *type)
{
	const char *start = r->p;

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
	if (*r->p == '-')
		r->p++;
	if (!isdigit((unsigned char)*r->p))
		return fail(r, "expected a value");
	while (isdigit((unsigned char)*r->p))
		r->p++;
	if (*r->p == '.') {
		r->p++;
		if (!isdigit((unsigned char)*r->p))
			return fail(r, "bad number");
		while (isdigit((unsigned char)*r->p))
			r->p++;
	}
	if (*r->p == 'e' || *r->p == 'E') {
		r->p++;
		if (*r->p == '+' || *r->p == '-')
			r->p++;
		if (!isdigit((unsigned char)*r->p))
			return fail(r, "bad number");
		while (isdigit((unsigned char)*r->p))
			r->p++;
	}
	*type = JSON_NUM;
	sb_add(val, start, (size_t)(r->p - start));
	return 0;
}

int json_parse_flat(const char *text, struct json_obj *out, int skip, char *err, size_t errlen)
{
	struct reader r = { text, err, errlen };
	struct strbuf key = STRBUF_INIT, val = STRBUF_INIT;
	struct json_obj o = JSON_OBJ_INIT;
	enum json_type type;

	skip_ws(&r);
	if (*r.p != '{') {
		fail(&r, "not a JSON object");
		goto fail;
	}
	r.p++;
	skip_ws(&r);
	if (*r.p == '}') {
		r.p++;
		goto done;
	}
	for (;;) {
		skip_ws(&r);
		if (*r.p != '"') {
			fail(&r, "expected a key");
			goto fail;
		}
		sb_reset(&key);
		sb_add(&key, "", 0);
		if (read_string(&r, &key))
			goto fail;
		skip_ws(&r);
		if (*r.p++ != ':') {
			fail(&r, "expected ':'");
			goto fail;
		}
		skip_ws(&r);
		if (*r.p == '[' || *r.p == '{') {
			if (!skip) {
				fail(&r, "nested value");
				goto fail;
			}
			if (skip_nested(&r))
				goto fail;
		} else {
			sb_reset(&val);
			sb_add(&val, "", 0);
			if (read_scalar(&r, &val, &type))
				goto fail;
			json_obj_add(&o, key.buf, val.buf, type);
		}
		skip_ws(&r);
		if (*r.p == ',') {
			r.p++;
			continue;
		}
		if (*r.p == '}') {
			r.p++;
			break;
		}
		fail(&r, "expected ',' or '}'");
		goto fail;
	}
done:
	skip_ws(&r);
	if (*r.p) {
		fail(&r, "trailing characters after the object");
		goto fail;
	}
	sb_release(&key);
	sb_release(&val);
	*out = o;
	return 0;
fail:
	sb_release(&key);
	sb_release(&val);
	json_obj_release(&o);
	return -1;
}
