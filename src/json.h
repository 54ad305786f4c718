/* json.h: the little JSON sweep needs: writing escaped values, reading flat objects of scalars, and reading
 * the documents a program prints with values selected by path (through jansson, which only json.c includes). */
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

/*
 * Documents a program printed, and values selected in them by path. A struct json_val is a value read by
 * json_docs_read (jansson's, which only json.c sees); it lives as long as its json_docs, and so do the
 * pointers a json_sel holds.
 */
struct json_val;
struct json_docs {
	struct json_val **v;   /* each document */
	long *line;            /* the line (1-based) of text each starts on */
	long *last;            /* and the line it ends on */
	size_t n, alloc;
};
struct json_sel {
	const struct json_val **v;   /* borrowed */
	size_t n, alloc;
};

/*
 * The JSON documents in text: each starts on a line whose first non-blank character is '{' (or '[' with
 * JSON_DOCS_ARRAYS in flags), may take several lines, and must end its last line; the lines between
 * documents are skipped (a program's log). Strict JSON as json_parse_flat reads it (no NaN, 1e999 or key
 * twice, unless flags say which of a key's values to keep: JSON_DOCS_DUP_LAST or JSON_DOCS_DUP_FIRST, in
 * each object at every level); numbers are doubles. 0, or -1 with the reason in err, the line where the
 * document at fault starts in *docline, the line of the fault in *errline, and *out empty.
 * json_docs_release frees *out.
 */
#define JSON_DOCS_ARRAYS 1
#define JSON_DOCS_DUP_LAST 2
#define JSON_DOCS_DUP_FIRST 4
int json_docs_read(const char *text, size_t len, int flags, struct json_docs *out, long *docline,
		   long *errline, char *err, size_t errlen);
void json_docs_release(struct json_docs *d);
/*
 * A path: "." (the value itself), or steps: a key (name, .name, or ["a.b"] for a key with dots or
 * brackets), an index ([0]; [-1] the last), every element or member ([*]), or the elements of an array whose
 * member key equals value ([key=value]: a string as written, a number by value). many: [*] is allowed
 * (a metric's path selects one value; a filter there must match one). 0, or -1 with the reason in err.
 */
int json_path_check(const char *path, int many, char *err, size_t errlen);
/* Append to out every value path selects in v, in document order: nothing for a missing key or index.
 * 0, or -1 with the reason in err for a path json_path_check refuses. json_sel_release frees out. */
int json_select(const struct json_val *v, const char *path, struct json_sel *out, char *err, size_t errlen);
void json_sel_release(struct json_sel *s);
/* What v is, for messages: "a number", "a string", "an object", "an array", "true", "false", "null". */
const char *json_val_kind(const struct json_val *v);
/* v's number: 0, or -1 when v is not a number. */
int json_val_number(const struct json_val *v, double *out);
/* v's string, or NULL when v is not a string. */
const char *json_val_string(const struct json_val *v);
/* Append v as compact JSON, cut after max bytes ("..."), control bytes shown as '?'. */
void json_val_show(struct strbuf *sb, const struct json_val *v, size_t max);
/* fn(key, value, data) for each member of object v, in document order (nothing when v is no object). */
void json_val_foreach(const struct json_val *v, void (*fn)(const char *key, const struct json_val *val,
		      void *data), void *data);

#endif
