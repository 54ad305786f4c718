/* json.h: the little JSON sweep needs: writing escaped values, and reading flat objects of scalars (through
 * jansson, which only json.c includes). */
#ifndef SWEEP_JSON_H
#define SWEEP_JSON_H

#include "util.h"

enum json_type { JSON_NULL, JSON_BOOL, JSON_NUM, JSON_STR };

struct json_pair {
	char *key;
	char *val;             /* the text of a scalar: unescaped string, number as written, true/false/null */
	enum json_type type;
};

/* An object's pairs in document order. Owns every string; json_obj_release frees them. */
struct json_obj {
	struct json_pair *v;
	size_t n, alloc;
};
#define JSON_OBJ_INIT { NULL, 0, 0 }

/*
 * Parse text holding one JSON object whose values are scalars (nested arrays or objects are checked and
 * skipped when skip_nested, an error otherwise). Strict RFC 8259 JSON: nothing but whitespace after the
 * object; no NaN, Infinity, leading zeros, hexadecimal or numbers that overflow a double (1e999); no
 * duplicate keys (in nested objects too); strings in UTF-8, with \u escapes of surrogates in high-low
 * pairs and no \u0000 (values are C strings). Nesting deeper than 64 levels is refused.
 * Returns 0 with the pairs in *out, or -1 with a one-line reason in err (no message printed) and *out
 * empty. *out is overwritten, not released first.
 */
int json_parse_flat(const char *text, struct json_obj *out, int skip_nested, char *err, size_t errlen);
void json_obj_release(struct json_obj *o);
/* Append a pair (copies key and val). */
void json_obj_add(struct json_obj *o, const char *key, const char *val, enum json_type type);
/* The pair named key, or NULL. */
const struct json_pair *json_obj_find(const struct json_obj *o, const char *key);
/* Its value text, or NULL when absent. */
const char *json_obj_get(const struct json_obj *o, const char *key);
/* Serialise as a compact object, in pair order. Always valid JSON: a JSON_NUM's text as
 * json_add_num_text writes it; a JSON_BOOL other than true or false, and every JSON_NULL, as null. */
void json_obj_write(struct strbuf *sb, const struct json_obj *o);

/* Append s as a quoted, escaped JSON string: control characters escaped, UTF-8 passed through, and
 * each invalid UTF-8 part as U+FFFD (JSON text is UTF-8). */
void json_add_str(struct strbuf *sb, const char *s);
/* Append a number in the shortest form that reads back exactly (integers without a fraction); NaN and
 * infinities become null. */
void json_add_num(struct strbuf *sb, double v);
/* Append text, the text of a number, as JSON: as written when it is a JSON number, else the double it
 * reads as (0x10, .5 and +2 are not JSON), else null (inf, nan, a word). */
void json_add_num_text(struct strbuf *sb, const char *text);
/* 1 when s is exactly a JSON number (RFC 8259) that a double holds (1e999 is not one). */
int json_number_ok(const char *s);

#endif
