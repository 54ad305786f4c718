/* json.c: JSON read through jansson (flat objects of scalars), and written the way sweep writes it. */
#include "json.h"

#include <ctype.h>
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* jansson.h names its null type JSON_NULL, as json.h names sweep's: jansson's is renamed while its header is
 * read, so json_is_null() (which would compare with sweep's) must not be used here. */
#define JSON_NULL JANSSON_NULL
#include <jansson.h>
#undef JSON_NULL

/*
 * Writing stays here rather than in jansson's encoder: that one writes \b, \f and \u001F where sweep writes
 * \u0008, \u000c and \u001f, refuses a string that is not UTF-8 (sweep writes U+FFFD for each invalid part),
 * and prints a real in 17 digits (0.10000000000000001) where sweep prints the shortest that reads back.
 * Cell keys, stored params and metrics are these bytes: they must not change.
 */

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

/* Reading: jansson checks the text and unescapes strings; what it does not keep is found in the text. */

/* The deepest nesting read (the object itself is level 1). jansson stops at 2048; nothing sweep writes goes
 * past 3, and the limit is part of json.h's contract. */
#define JSON_MAX_DEPTH 64

/* How jansson's own strictness is asked for: a number is never an integer that can overflow int64
 * (18446744073709551616 reads as a double, as 1e20 does); duplicate keys are refused at every level. */
#define JSON_READ_FLAGS (JSON_REJECT_DUPLICATES | JSON_DECODE_INT_AS_REAL)

/* Characters a JSON number is made of. */
#define NUMBER_CHARS "+-.0123456789Ee"

int json_number_ok(const char *s)
{
	size_t n = strlen(s);
	json_t *v;
	int ok;

	/* jansson takes whitespace around a value: a number starts with '-' or a digit and ends with a digit. */
	if (!n || !(*s == '-' || isdigit((unsigned char)*s)) || !isdigit((unsigned char)s[n - 1]))
		return 0;
	v = json_loadb(s, n, JSON_DECODE_ANY | JSON_READ_FLAGS, NULL);
	ok = json_is_number(v);
	json_decref(v);
	return ok;
}

/*
 * What jansson does not say about text it read, found by walking the text up to end: where each value of
 * the top-level object starts (jansson keeps a number as a double; json_pair.val is its text as written),
 * where nesting first goes past JSON_MAX_DEPTH, where the last string began and whether end is inside one.
 * jansson has read the text before end as JSON, so only quotes, escapes and brackets need following.
 */
struct walk {
	size_t *at, n, alloc;  /* offsets of the top-level values, in document order */
	size_t deep;           /* offset of the first bracket too deep, or SIZE_MAX */
	size_t string_at;      /* offset of the last string's opening quote */
	int in_string;
};

static void walk_text(const char *text, size_t end, struct walk *w)
{
	int depth = 0;

	w->n = 0;
	w->deep = SIZE_MAX;
	w->string_at = 0;
	w->in_string = 0;
	for (size_t i = 0; i < end; i++) {
		char c = text[i];

		if (w->in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				w->in_string = 0;
		} else if (c == '"') {
			w->in_string = 1;
			w->string_at = i;
		} else if (c == '{' || c == '[') {
			if (++depth > JSON_MAX_DEPTH && w->deep == SIZE_MAX)
				w->deep = i;
		} else if (c == '}' || c == ']') {
			depth--;
		} else if (c == ':' && depth == 1) {
			ALLOC_GROW(w->at, w->n + 1, w->alloc);
			w->at[w->n++] = i + 1 + strspn(text + i + 1, " \t\r\n");
		}
	}
}

/* jansson's reasons, by the start of its message, in the words json.h has always used. */
static const struct {
	const char *jansson, *ours;
} reasons[] = {
	{ "string or '}' expected", "expected a key" },
	{ "':' expected", "expected ':'" },
	{ "'}' expected", "expected ',' or '}'" },
	{ "']' expected", "expected ',' or ']'" },
	{ "unexpected token", "expected a value" },
	{ "end of file expected", "trailing characters after the object" },
	{ "premature end of input", "unterminated string" },
	{ "unexpected newline", "control character in string" },
	{ "control character", "control character in string" },
	{ "invalid escape", "bad escape in string" },
	{ "invalid Unicode escape", "bad escape in string" },
	{ "invalid Unicode '", "lone surrogate in \\u escape" },
	{ "\\u0000 is not allowed", "NUL in string" },
	{ "NUL byte in object key", "NUL in string" },
	{ "real number overflow", "number out of range" },
};

/* Why jansson refused text: its error, in json.h's words, with what the text around the error tells. */
static void read_error(const char *text, const json_error_t *je, char *err, size_t errlen)
{
	size_t end = strnlen(text, je->position > 0 ? (size_t)je->position : 0);
	struct walk w = { NULL, 0, 0, 0, 0, 0 };

	walk_text(text, end, &w);
	free(w.at);
	/* jansson follows nesting to 2048 levels: too deep before the error is the first thing wrong. */
	if (w.deep != SIZE_MAX) {
		snprintf(err, errlen, "nesting deeper than %d levels", JSON_MAX_DEPTH);
		return;
	}
	if (json_error_code(je) == json_error_duplicate_key) {
		/* The error is right after the key: the last string read, decoded by jansson. */
		json_t *k = json_loadb(text + w.string_at, end - w.string_at, JSON_DECODE_ANY, NULL);
		char shown[44];

		snprintf(err, errlen, "duplicate key '%s'",
			 printable(shown, json_is_string(k) ? json_string_value(k) : "?", 40));
		json_decref(k);
		return;
	}
	if (json_error_code(je) == json_error_invalid_utf8) {
		snprintf(err, errlen, "%s", w.in_string ? "invalid UTF-8 in string" : "invalid UTF-8");
		return;
	}
	if (!strncmp(je->text, "invalid token", 13)) {
		/* The token ends where jansson stopped. 01, -01.5, 1. and 1e+ start as numbers: bad ones. NaN,
		 * t01, +1, .5 and a lone - do not: no value at all. */
		size_t start = end;

		while (start && strchr(NUMBER_CHARS, text[start - 1]))
			start--;
		snprintf(err, errlen, "%s", start < end && (isdigit((unsigned char)text[start]) ||
			 (text[start] == '-' && start + 1 < end && isdigit((unsigned char)text[start + 1]))) ?
			 "bad number" : "expected a value");
		return;
	}
	for (size_t i = 0; i < ARRAY_SIZE(reasons); i++)
		if (!strncmp(je->text, reasons[i].jansson, strlen(reasons[i].jansson))) {
			snprintf(err, errlen, "%s", reasons[i].ours);
			return;
		}
	snprintf(err, errlen, "%s", je->text);
}

/* The pairs of object root, read from text: its scalars in document order, its nested values refused or
 * skipped. 0, or -1 with the reason in err. */
static int read_pairs(const char *text, json_t *root, struct json_obj *o, int skip, char *err, size_t errlen)
{
	struct walk w = { NULL, 0, 0, 0, 0, 0 };
	const char *key;
	json_t *v;
	size_t k = 0;
	int ret = -1;

	walk_text(text, strlen(text), &w);
	if (w.n != json_object_size(root))
		BUG("json: %zu values in the text, %zu in jansson's object", w.n, json_object_size(root));
	/* jansson iterates an object in insertion order, which is the document's. */
	json_object_foreach(root, key, v) {
		const char *at = text + w.at[k++];

		switch (json_typeof(v)) {
		case JSON_OBJECT:
		case JSON_ARRAY:
			if (!skip) {
				snprintf(err, errlen, "nested value");
				goto out;
			}
			break;
		case JSON_STRING:
			json_obj_add(o, key, json_string_value(v), JSON_STR);
			break;
		case JSON_INTEGER:
		case JSON_REAL: {
			/* The number as written: 1.50 stays 1.50, and 18446744073709551616 keeps its digits. */
			char *num = xstrndup(at, strspn(at, NUMBER_CHARS));

			json_obj_add(o, key, num, JSON_NUM);
			free(num);
			break;
		}
		case JSON_TRUE:
		case JSON_FALSE:
			json_obj_add(o, key, json_is_true(v) ? "true" : "false", JSON_BOOL);
			break;
		case JANSSON_NULL:
			json_obj_add(o, key, "null", JSON_NULL);
			break;
		}
	}
	if (w.deep != SIZE_MAX) {
		snprintf(err, errlen, "nesting deeper than %d levels", JSON_MAX_DEPTH);
		goto out;
	}
	ret = 0;
out:
	free(w.at);
	return ret;
}

int json_parse_flat(const char *text, struct json_obj *out, int skip, char *err, size_t errlen)
{
	struct json_obj o = JSON_OBJ_INIT;
	json_error_t je;
	json_t *root;

	*out = o;
	/* Said before jansson reads it: a text that is an array or a scalar is not what was asked for. */
	if (text[strspn(text, " \t\r\n")] != '{') {
		snprintf(err, errlen, "not a JSON object");
		return -1;
	}
	root = json_loads(text, JSON_READ_FLAGS, &je);
	if (!root) {
		read_error(text, &je, err, errlen);
		return -1;
	}
	if (read_pairs(text, root, &o, skip, err, errlen)) {
		json_decref(root);
		json_obj_release(&o);
		return -1;
	}
	json_decref(root);
	*out = o;
	return 0;
}

/* ---- documents, and values selected in them by path ---- */

void json_docs_release(struct json_docs *d)
{
	for (size_t i = 0; i < d->n; i++)
		json_decref((json_t *)d->v[i]);
	free(d->v);
	free(d->line);
	free(d->last);
	memset(d, 0, sizeof(*d));
}

/* The byte after line's end (past its newline), or end. */
static const char *line_end(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p));

	return nl ? nl + 1 : end;
}

/* The document at p with each later pair of a key its object already has blanked (its ',' through its
 * value, newlines kept), so that jansson's strict reading keeps each key's first value. Keys compare as
 * written; each object's are a set in a jansson object (linear). Stops where the document ends. */
static void blank_later_keys(char *p, const char *end)
{
	json_t *seen[JSON_MAX_DEPTH + 2] = { 0 };
	char *comma[JSON_MAX_DEPTH + 2] = { 0 }, *blank_from = NULL, *key = NULL;
	int depth = 0, blank_depth = -1;

	for (; p < end; p++) {
		if (*p == '"') {
			char *q = p + 1;

			while (q < end && *q != '"')
				q += *q == '\\' ? 2 : 1;
			key = p;
			p = q < end ? q : p;
			continue;
		}
		if (*p == ':' && key && depth >= 1 && depth <= JSON_MAX_DEPTH && seen[depth] && blank_depth < 0) {
			char *k = xstrndup(key + 1, (size_t)(p - key - 1));

			/* the key is the last string before the ':', blanks aside */
			if (json_object_get(seen[depth], k) && comma[depth]) {
				blank_from = comma[depth];
				blank_depth = depth;
			} else {
				json_object_set_new(seen[depth], k, json_true());
			}
			free(k);
		} else if (*p == '{' || *p == '[') {
			if (++depth <= JSON_MAX_DEPTH)
				seen[depth] = *p == '{' ? json_object() : NULL;
			if (depth <= JSON_MAX_DEPTH)
				comma[depth] = NULL;
		} else if (*p == ',' || *p == '}' || *p == ']') {
			if (blank_depth == depth && blank_from) {
				for (char *b = blank_from; b < p; b++)
					if (*b != '\n')
						*b = ' ';
				blank_from = NULL;
				blank_depth = -1;
			}
			if (*p == ',' && depth <= JSON_MAX_DEPTH)
				comma[depth] = p;
			if (*p != ',') {
				if (depth <= JSON_MAX_DEPTH)
					json_decref(seen[depth]);
				if (--depth <= 0)
					break;
			}
		}
		key = *p == ':' ? NULL : key;
	}
	for (int d = 1; d <= depth && d <= JSON_MAX_DEPTH; d++)
		json_decref(seen[d]);
}

int json_docs_read(const char *text, size_t len, int flags, struct json_docs *out, long *docline,
		   long *errline, char *err, size_t errlen)
{
	char *copy = flags & JSON_DOCS_DUP_FIRST ? xstrndup(text, len) : NULL;
	const char *p = copy ? copy : text, *end = p + len, *q;
	size_t read = flags & (JSON_DOCS_DUP_FIRST | JSON_DOCS_DUP_LAST) ? JSON_DECODE_INT_AS_REAL : JSON_READ_FLAGS;
	long line = 1;
	int ret = -1;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		json_error_t je;
		json_t *v;

		for (q = p; q < end && (*q == ' ' || *q == '\t'); q++)
			;
		if (q == end || (*q != '{' && !((flags & JSON_DOCS_ARRAYS) && *q == '['))) {
			p = line_end(p, end);
			line++;
			continue;
		}
		if (copy)
			blank_later_keys(copy + (q - copy), end);
		v = json_loadb(q, (size_t)(end - q), read | JSON_DISABLE_EOF_CHECK, &je);
		if (!v) {
			read_error(q, &je, err, errlen);
			*docline = line;
			*errline = line + (je.line > 0 ? je.line - 1 : 0);
			goto out;
		}
		ALLOC_GROW(out->v, out->n + 1, out->alloc);
		out->line = xrealloc(out->line, out->alloc * sizeof(*out->line));
		out->last = xrealloc(out->last, out->alloc * sizeof(*out->last));
		out->v[out->n] = (struct json_val *)v;
		out->line[out->n++] = line;
		/* The value ends its line: what follows on it would be read as nothing. */
		for (p = q; p < q + je.position; p++)
			line += *p == '\n';
		out->last[out->n - 1] = line;
		for (; p < end && (*p == ' ' || *p == '\t' || *p == '\r'); p++)
			;
		if (p < end && *p != '\n') {
			snprintf(err, errlen, "text after the JSON value");
			*docline = out->line[out->n - 1];
			*errline = line;
			goto out;
		}
		if (p < end) {
			p++;
			line++;
		}
	}
	ret = 0;
out:
	if (ret)
		json_docs_release(out);
	free(copy);
	return ret;
}

/*
 * One step of a path: a key (.name or ["name"]), an index ([2], [-1] the last), every element or member
 * ([*]), or the elements whose member key equals a value ([key=value]). fname/fvalue point into the path.
 */
enum step_kind { STEP_KEY, STEP_INDEX, STEP_ALL, STEP_FILTER };
struct step {
	enum step_kind kind;
	struct strbuf key;         /* STEP_KEY's name, STEP_FILTER's member */
	struct strbuf value;       /* STEP_FILTER's value */
	long index;
};

/* The step at *pp (first: no '.' before a name), *pp moved past it. 1, 0 at the end, -1 with err. */
static int path_step(const char **pp, int first, struct step *st, char *err, size_t errlen)
{
	const char *p = *pp, *e;

	sb_reset(&st->key);
	sb_reset(&st->value);
	if (!*p)
		return 0;
	if (*p == '[') {
		p++;
		if (*p == '*' && p[1] == ']') {
			st->kind = STEP_ALL;
			*pp = p + 2;
			return 1;
		}
		if (*p == '"') {
			for (p++; *p && *p != '"'; p++) {
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
					p++;
				sb_addc(&st->key, *p);
			}
			if (*p != '"' || p[1] != ']')
				goto bad;
			st->kind = STEP_KEY;
			*pp = p + 2;
			return 1;
		}
		if ((*p == '-' && isdigit((unsigned char)p[1])) || isdigit((unsigned char)*p)) {
			char *num_end;

			st->index = strtol(p, &num_end, 10);
			if (*num_end != ']')
				goto bad;
			st->kind = STEP_INDEX;
			*pp = num_end + 1;
			return 1;
		}
		e = strpbrk(p, "=]");
		if (!e || *e != '=' || e == p || !strchr(e, ']') || strchr(e, ']') == e + 1)
			goto bad;
		sb_add(&st->key, p, (size_t)(e - p));
		p = e + 1;
		e = strchr(p, ']');
		sb_add(&st->value, p, (size_t)(e - p));
		st->kind = STEP_FILTER;
		*pp = e + 1;
		return 1;
	}
	/* A first key may start with '.' too, as jq writes it. */
	if (*p == '.')
		p++;
	else if (!first)
		goto bad;
	e = p + strcspn(p, ".[]");
	if (e == p)
		goto bad;
	sb_add(&st->key, p, (size_t)(e - p));
	st->kind = STEP_KEY;
	*pp = e;
	return 1;
bad:
	snprintf(err, errlen, "bad path at '%.40s': a path is '.', or keys and indexes like a.b[0], [*], "
		 "[key=value] or [\"a.b\"]", *pp);
	return -1;
}

int json_path_check(const char *path, int many, char *err, size_t errlen)
{
	struct step st = { STEP_KEY, STRBUF_INIT, STRBUF_INIT, 0 };
	const char *p = path;
	int rc, first = 1;

	if (!strcmp(path, "."))
		return 0;
	while ((rc = path_step(&p, first, &st, err, errlen)) > 0) {
		first = 0;
		if (st.kind == STEP_ALL && !many) {
			snprintf(err, errlen, "[*] selects many values: a metric's path selects one");
			rc = -1;
			break;
		}
	}
	if (!rc && first) {
		snprintf(err, errlen, "an empty path (the value itself is '.')");
		rc = -1;
	}
	sb_release(&st.key);
	sb_release(&st.value);
	return rc;
}

/* Whether element v has member key equal to value (a string as written, a number by value, true, false
 * or null by name). */
static int filter_match(const json_t *v, const char *key, const char *value)
{
	const json_t *m = json_object_get(v, key);
	double d;

	if (!m)
		return 0;
	if (json_is_string(m))
		return !strcmp(json_string_value(m), value);
	if (json_is_number(m))
		return !parse_double(value, &d) && d == json_number_value(m);
	if (json_is_boolean(m))
		return !strcmp(value, json_is_true(m) ? "true" : "false");
	return json_typeof(m) == JANSSON_NULL && !strcmp(value, "null");
}

static void sel_add(struct json_sel *s, const json_t *v)
{
	ALLOC_GROW(s->v, s->n + 1, s->alloc);
	s->v[s->n++] = (const struct json_val *)v;
}

/* Apply one step to every value of in, into out. */
static void path_apply(const struct step *st, const struct json_sel *in, struct json_sel *out)
{
	for (size_t i = 0; i < in->n; i++) {
		const json_t *v = (const json_t *)in->v[i], *m;
		const char *key;
		size_t j, n;

		switch (st->kind) {
		case STEP_KEY:
			if ((m = json_object_get(v, st->key.buf ? st->key.buf : "")))
				sel_add(out, m);
			break;
		case STEP_INDEX:
			n = json_array_size(v);
			j = st->index < 0 ? n - (size_t)-st->index : (size_t)st->index;
			if (st->index < 0 ? (size_t)-st->index <= n : j < n)
				sel_add(out, json_array_get(v, j));
			break;
		case STEP_ALL:
			if (json_is_array(v))
				for (j = 0; j < json_array_size(v); j++)
					sel_add(out, json_array_get(v, j));
			else if (json_is_object(v))
				json_object_foreach((json_t *)v, key, m)
					sel_add(out, m);
			break;
		case STEP_FILTER:
			for (j = 0; j < json_array_size(v); j++)
				if (filter_match(json_array_get(v, j), st->key.buf, st->value.buf ? st->value.buf : ""))
					sel_add(out, json_array_get(v, j));
			break;
		}
	}
}

int json_select(const struct json_val *v, const char *path, struct json_sel *out, char *err, size_t errlen)
{
	struct step st = { STEP_KEY, STRBUF_INIT, STRBUF_INIT, 0 };
	struct json_sel cur = { NULL, 0, 0 }, next = { NULL, 0, 0 }, tmp;
	const char *p = path;
	int rc = 0, first = 1;

	/* The whole path is checked first: its steps past a missing key are never read. */
	if (json_path_check(path, 1, err, errlen))
		return -1;
	sel_add(&cur, (const json_t *)v);
	if (strcmp(path, "."))
		while (cur.n && (rc = path_step(&p, first, &st, err, errlen)) > 0) {
			first = 0;
			next.n = 0;
			path_apply(&st, &cur, &next);
			tmp = cur;
			cur = next;
			next = tmp;
		}
	if (rc >= 0)
		for (size_t i = 0; i < cur.n; i++) {
			ALLOC_GROW(out->v, out->n + 1, out->alloc);
			out->v[out->n++] = cur.v[i];
		}
	free(cur.v);
	free(next.v);
	sb_release(&st.key);
	sb_release(&st.value);
	return rc < 0 ? -1 : 0;
}

void json_sel_release(struct json_sel *s)
{
	free(s->v);
	memset(s, 0, sizeof(*s));
}

const char *json_val_kind(const struct json_val *v)
{
	switch (json_typeof((const json_t *)v)) {
	case JSON_OBJECT: return "an object";
	case JSON_ARRAY: return "an array";
	case JSON_STRING: return "a string";
	case JSON_INTEGER:
	case JSON_REAL: return "a number";
	case JSON_TRUE: return "true";
	case JSON_FALSE: return "false";
	default: return "null";
	}
}

int json_val_number(const struct json_val *v, double *out)
{
	if (!json_is_number((const json_t *)v))
		return -1;
	*out = json_number_value((const json_t *)v);
	return 0;
}

const char *json_val_string(const struct json_val *v)
{
	return json_string_value((const json_t *)v);
}

void json_val_show(struct strbuf *sb, const struct json_val *v, size_t max)
{
	char *t = json_dumps((const json_t *)v, JSON_COMPACT | JSON_ENCODE_ANY);

	if (!t)
		return;
	sb_add_printable(sb, t, max);
	if (strlen(t) > max)
		sb_adds(sb, "...");
	free(t);
}

void json_val_foreach(const struct json_val *v, void (*fn)(const char *key, const struct json_val *val,
		     void *data), void *data)
{
	const char *key;
	json_t *m;

	/* jansson iterates an object in insertion order, which is the document's. */
	json_object_foreach((json_t *)v, key, m)
		fn(key, (const struct json_val *)m, data);
}
