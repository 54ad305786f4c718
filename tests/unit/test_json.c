/* test_json.c: writing JSON (escapes, UTF-8, shortest numbers) and strict reading of flat objects. */
#include <float.h>
#include <stdint.h>
#include <stdlib.h>

#include "test.h"
#include "json.h"
#include "util.h"

/* s for a test's message: bytes other than printable ASCII as \xNN, so that the log stays text. */


/* The text json_add_str writes for s. */
static const char *str_json(struct strbuf *sb, const char *s)
{
	sb_reset(sb);
	json_add_str(sb, s);
	return sb->buf;
}

/* The text json_add_num writes for v. */
static const char *num_json(struct strbuf *sb, double v)
{
	sb_reset(sb);
	json_add_num(sb, v);
	return sb->buf;
}

static void test_write_str(void)
{
	struct strbuf sb = STRBUF_INIT;

	CHECK_TEXT(str_json(&sb, ""), "\"\"", "empty string");
	CHECK_TEXT(str_json(&sb, "plain text / 1.5"), "\"plain text / 1.5\"", "nothing to escape ('/' kept)");
	CHECK_TEXT(str_json(&sb, "say \"hi\""), "\"say \\\"hi\\\"\"", "quotes escaped");
	CHECK_TEXT(str_json(&sb, "a\\b\\"), "\"a\\\\b\\\\\"", "backslashes escaped");
	CHECK_TEXT(str_json(&sb, "\n\r\t"), "\"\\n\\r\\t\"", "newline, return and tab as short escapes");
	CHECK_TEXT(str_json(&sb, "\b\f\x01\x1f"), "\"\\u0008\\u000c\\u0001\\u001f\"",
		  "other control characters as \\u00XX");
	CHECK_TEXT(str_json(&sb, "del\x7f "), "\"del\x7f \"", "DEL and space are not control characters in JSON");
	CHECK_TEXT(str_json(&sb, "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad"),
		  "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe4\xb8\xad\"",
		  "non-ASCII (2, 3 and 4 bytes) passed through as UTF-8");
	CHECK_TEXT(str_json(&sb, "\xef\xbf\xbf\xf4\x8f\xbf\xbf"), "\"\xef\xbf\xbf\xf4\x8f\xbf\xbf\"",
		  "U+FFFF and U+10FFFF passed through");
	/* Bytes that are not UTF-8 would make the whole text invalid JSON: each maximal invalid part
	 * becomes U+FFFD (as WHATWG decoders do), so what is written always reads back. */
#define FFFD "\xef\xbf\xbd"
	CHECK_TEXT(str_json(&sb, "a\xff" "b"), "\"a" FFFD "b\"", "a byte that is never UTF-8");
	CHECK_TEXT(str_json(&sb, "\xe9t\xe9"), "\"" FFFD "t" FFFD "\"", "Latin-1 text");
	CHECK_TEXT(str_json(&sb, "\x80"), "\"" FFFD "\"", "a lone continuation byte");
	CHECK_TEXT(str_json(&sb, "\xc3"), "\"" FFFD "\"", "a sequence cut by the end");
	CHECK_TEXT(str_json(&sb, "\xe2\x82x"), "\"" FFFD "x\"", "a 3-byte sequence cut short: one U+FFFD");
	CHECK_TEXT(str_json(&sb, "\xc0\xaf"), "\"" FFFD FFFD "\"", "an overlong '/'");
	CHECK_TEXT(str_json(&sb, "\xe0\x80\xaf"), "\"" FFFD FFFD FFFD "\"", "an overlong 3-byte '/'");
	CHECK_TEXT(str_json(&sb, "\xed\xa0\x80"), "\"" FFFD FFFD FFFD "\"", "a surrogate encoded in UTF-8");
	CHECK_TEXT(str_json(&sb, "\xf4\x90\x80\x80"), "\"" FFFD FFFD FFFD FFFD "\"", "past U+10FFFF");
	CHECK_TEXT(str_json(&sb, "\"\xff\n"), "\"\\\"" FFFD "\\n\"", "escapes and repairs together");
	sb_release(&sb);
}

/* The shortest %.Ng (N = 1..17) that reads back as v: what json_add_num must write for a non-integer. */
static void shortest(char *buf, size_t n, double v)
{
	for (int prec = 1; prec <= 17; prec++) {
		snprintf(buf, n, "%.*g", prec, v);
		if (strtod(buf, NULL) == v)
			return;
	}
}

static void test_write_num(void)
{
	static const struct {
		double v;
		const char *want, *name;
	} cases[] = {
		{ 0, "0", "zero" },
		{ -0.0, "-0", "negative zero keeps its sign" },
		{ 1024, "1024", "an integer has no fraction" },
		{ -3, "-3", "a negative integer" },
		{ 123456789012345, "123456789012345", "a 15-digit integer" },
		{ 1e15, "1e+15", "1e15: exponent form, still no fraction" },
		{ 9007199254740992.0, "9007199254740992", "2^53" },
		{ 1e300, "1e+300", "a large integer in exponent form" },
		{ 0.1, "0.1", "0.1" },
		{ 1.5, "1.5", "1.5" },
		{ 0.1 + 0.2, "0.30000000000000004", "0.1 + 0.2 needs 17 digits" },
		{ 1.0 / 3, "0.3333333333333333", "1/3 needs 16" },
		{ -2.5e-10, "-2.5e-10", "small negative" },
		{ DBL_MAX, "1.7976931348623157e+308", "DBL_MAX" },
		{ DBL_MIN, "2.2250738585072014e-308", "DBL_MIN" },
		{ 4.9406564584124654e-324, "5e-324", "the smallest subnormal in its shortest form" },
		{ 1e-310, "1e-310", "a subnormal in its shortest form" },
		{ NAN, "null", "NaN is null" },
		{ INFINITY, "null", "+inf is null" },
		{ -INFINITY, "null", "-inf is null" },
	};
	struct strbuf sb = STRBUF_INIT;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	int bad_trip = 0, bad_short = 0, n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		CHECK_STR(num_json(&sb, cases[i].v), cases[i].want, cases[i].name);
	/* Random bit patterns: every finite double reads back exactly, in no more digits than needed. */
	for (int i = 0; i < 20000; i++) {
		double v, back;
		char want[40];

		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		memcpy(&v, &x, sizeof(v));
		if (!isfinite(v))
			continue;
		n++;
		num_json(&sb, v);
		back = strtod(sb.buf, NULL);
		if (memcmp(&back, &v, sizeof(v)) && bad_trip++ < 3)
			printf("# %.17g written as %s reads back as %.17g\n", v, sb.buf, back);
		if (v != floor(v) || fabs(v) >= 1e15) {
			shortest(want, sizeof(want), v);
			if (strcmp(sb.buf, want) && bad_short++ < 3)
				printf("# %.17g written as %s, shortest is %s\n", v, sb.buf, want);
		}
	}
	CHECK(bad_trip == 0, "%d random doubles read back bit for bit (%d did not)", n, bad_trip);
	CHECK(bad_short == 0, "%d random doubles in their shortest form (%d were not)", n, bad_short);
	sb_release(&sb);
}

/* A pair of o by position, checked for key, text and type. */
static void check_pair(const struct json_obj *o, size_t i, const char *key, const char *val, enum json_type type)
{
	char name[96];

	snprintf(name, sizeof(name), "pair %zu", i);
	if (i >= o->n) {
		CHECK(0, "%s: only %zu pairs", name, o->n);
		return;
	}
	CHECK_TEXT(o->v[i].key, key, name);
	CHECK_TEXT(o->v[i].val, val, name);
	CHECK_INT(o->v[i].type, type, name);
}

static void test_read(void)
{
	struct json_obj o;
	char err[128] = "";
	int rc;

	rc = json_parse_flat(" \t\r\n{ \"s\" : \"x y\" , \"n\":-1.5e3,\"i\": 0, \"t\": true,\n\"f\": false, "
			     "\"z\": null, \"e\": \"\", \"E\": 2E+2, \"\": 1 }\n ", &o, 0, err, sizeof(err));
	CHECK(rc == 0, "scalars of every type parse (%s)", err);
	CHECK_INT(o.n, 9, "nine pairs");
	check_pair(&o, 0, "s", "x y", JSON_STR);
	check_pair(&o, 1, "n", "-1.5e3", JSON_NUM);
	check_pair(&o, 2, "i", "0", JSON_NUM);
	check_pair(&o, 3, "t", "true", JSON_BOOL);
	check_pair(&o, 4, "f", "false", JSON_BOOL);
	check_pair(&o, 5, "z", "null", JSON_NULL);
	check_pair(&o, 6, "e", "", JSON_STR);
	check_pair(&o, 7, "E", "2E+2", JSON_NUM);
	check_pair(&o, 8, "", "1", JSON_NUM);
	CHECK_STR(json_obj_get(&o, "n"), "-1.5e3", "get by key: the number as written");
	CHECK(json_obj_find(&o, "t") == &o.v[3], "find returns the pair");
	CHECK(json_obj_get(&o, "missing") == NULL && json_obj_find(&o, "S") == NULL, "absent keys are NULL");
	json_obj_release(&o);
	CHECK(o.v == NULL && o.n == 0 && o.alloc == 0, "release empties the object");

	rc = json_parse_flat("{}", &o, 0, err, sizeof(err));
	CHECK(rc == 0 && o.n == 0, "{} is an empty object");
	json_obj_release(&o);
	rc = json_parse_flat("{ \n }", &o, 0, err, sizeof(err));
	CHECK(rc == 0 && o.n == 0, "{ } with whitespace is an empty object");
	json_obj_release(&o);

	rc = json_parse_flat("{\"q\": \"\\\"\\\\\\/\\b\\f\\n\\r\\t\", \"u\": \"\\u0041\\u00e9\\u20AC\\u4e2d\", "
			     "\"p\": \"\\ud83d\\ude00\", \"P\": \"\\uDBFF\\uDFFF\", \"raw\": \"caf\xc3\xa9 \xf0\x9f\x98\x80\", "
			     "\"k\\u0065y\": 1}", &o, 0, err, sizeof(err));
	CHECK(rc == 0, "escapes parse (%s)", err);
	CHECK_TEXT(json_obj_get(&o, "q"), "\"\\/\b\f\n\r\t", "short escapes");
	CHECK_TEXT(json_obj_get(&o, "u"), "A\xc3\xa9\xe2\x82\xac\xe4\xb8\xad", "\\uXXXX to UTF-8 (1, 2, 3 bytes)");
	CHECK_TEXT(json_obj_get(&o, "p"), "\xf0\x9f\x98\x80", "a surrogate pair to one 4-byte character");
	CHECK_TEXT(json_obj_get(&o, "P"), "\xf4\x8f\xbf\xbf", "the last surrogate pair is U+10FFFF");
	CHECK_TEXT(json_obj_get(&o, "raw"), "caf\xc3\xa9 \xf0\x9f\x98\x80", "raw UTF-8 kept");
	CHECK(json_obj_get(&o, "key") != NULL, "keys are unescaped too");
	json_obj_release(&o);

	rc = json_parse_flat("{\"a\": 1, \"n\": {\"x\": [1, {\"y\": \"]}\\\"\"}], \"z\": {}}, \"l\": [], "
			     "\"m\": [true, false, null, -0.5e+3, \"\\u00e9\", [[]]], \"b\": 2}", &o, 1, err,
			     sizeof(err));
	CHECK(rc == 0, "nested values are skipped when asked (%s)", err);
	CHECK_INT(o.n, 2, "only the scalars are kept");
	check_pair(&o, 0, "a", "1", JSON_NUM);
	check_pair(&o, 1, "b", "2", JSON_NUM);
	json_obj_release(&o);
}

/* Numbers keep their text as written, whatever double or integer type would hold them: params are hashed
 * and metric items stored as these bytes. */
static void test_number_text(void)
{
	static const struct {
		const char *key, *text;
	} nums[] = {
		{ "past int64", "18446744073709551616" }, { "int64 max + 1", "9223372036854775808" },
		{ "below int64", "-18446744073709551617" }, { "1e20", "1e20" }, { "0.1", "0.1" },
		{ "1.50", "1.50" }, { "-0", "-0" }, { "underflow", "1e-400" }, { "2E+2", "2E+2" },
		{ "many digits", "3.14159265358979323846264338327950288" },
	};
	struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT;
	struct json_obj o;
	char err[128];
	int rc;

	sb_addc(&sb, '{');
	for (size_t i = 0; i < ARRAY_SIZE(nums); i++)
		sb_addf(&sb, "%s\"%s\" :\t%s", i ? ", " : "", nums[i].key, nums[i].text);
	sb_adds(&sb, "}");
	rc = json_parse_flat(sb.buf, &o, 0, err, sizeof(err));
	CHECK(rc == 0, "numbers of every size parse (%s)", rc ? err : "ok");
	for (size_t i = 0; !rc && i < ARRAY_SIZE(nums); i++)
		check_pair(&o, i, nums[i].key, nums[i].text, JSON_NUM);
	json_obj_write(&again, &o);
	CHECK_TEXT(again.buf, "{\"past int64\":18446744073709551616,\"int64 max + 1\":9223372036854775808,"
		   "\"below int64\":-18446744073709551617,\"1e20\":1e20,\"0.1\":0.1,\"1.50\":1.50,\"-0\":-0,"
		   "\"underflow\":1e-400,\"2E+2\":2E+2,\"many digits\":3.14159265358979323846264338327950288}",
		   "written back as they were written");
	json_obj_release(&o);
	sb_release(&sb);
	sb_release(&again);
}

/* Pairs come in document order, however many there are and whatever their keys hash to. */
static void test_order(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_obj o;
	char err[128], key[16];
	int rc, in_order = 1;

	sb_addc(&sb, '{');
	for (int i = 0; i < 500; i++)
		sb_addf(&sb, "%s\"k%d\": %d", i ? "," : "", (i * 7919) % 500, i);
	sb_adds(&sb, ", \"nested\": {\"z\": 1, \"a\": [2]}, \"last\": \"x\"}");
	rc = json_parse_flat(sb.buf, &o, 1, err, sizeof(err));
	CHECK(rc == 0 && o.n == 501, "500 keys and a skipped nested value: %zu pairs (%s)", o.n, rc ? err : "ok");
	for (int i = 0; !rc && i < 500 && i < (int)o.n; i++) {
		snprintf(key, sizeof(key), "k%d", (i * 7919) % 500);
		in_order &= !strcmp(o.v[i].key, key) && atoi(o.v[i].val) == i;
	}
	CHECK(!rc && in_order, "the pairs in document order, each with its own value");
	CHECK(!rc && o.n == 501 && !strcmp(o.v[500].key, "last"), "the pair after a skipped value comes last");
	json_obj_release(&o);
	sb_release(&sb);
}

/* json_parse_flat(text, skip) fails with reason want and leaves out empty (it starts out non-empty). */
static void check_bad(const char *name, const char *text, int skip, const char *want)
{
	static struct json_pair dummy;
	struct json_obj o = { &dummy, 1, 1 };
	char err[128], buf[600];
	int rc;

	strcpy(err, "(no reason)");
	rc = json_parse_flat(text, &o, skip, err, sizeof(err));
	CHECK(rc == -1 && !strcmp(err, want), "%s refused: got %d '%s', want '%s'", name, rc,
	      test_shown(buf, sizeof(buf), err), want);
	CHECK(o.v == NULL && o.n == 0 && o.alloc == 0, "%s: out holds nothing", name);
	if (!rc)
		json_obj_release(&o);
}

static void test_refuse(void)
{
	static const struct {
		const char *name, *text;
		int skip;
		const char *why;
	} cases[] = {
		/* Not an object, or not all of one. */
		{ "empty text", "", 1, "not a JSON object" },
		{ "blank text", " \n", 1, "not a JSON object" },
		{ "an array", "[1]", 1, "not a JSON object" },
		{ "a number", "1", 1, "not a JSON object" },
		{ "key=value", "tok_s=5", 1, "not a JSON object" },
		{ "a byte order mark", "\xef\xbb\xbf{}", 1, "not a JSON object" },
		{ "'{' alone", "{", 1, "expected a key" },
		{ "a key alone", "{\"x\"", 1, "expected ':'" },
		{ "a key and ':'", "{\"x\":", 1, "expected a value" },
		{ "no closing brace", "{\"x\": 1", 1, "expected ',' or '}'" },
		{ "cut after a comma", "{\"x\": 1,", 1, "expected a key" },
		{ "a trailing comma", "{\"x\": 1,}", 1, "expected a key" },
		{ "a leading comma", "{,\"x\": 1}", 1, "expected a key" },
		{ "a bare key", "{x: 1}", 1, "expected a key" },
		{ "a single-quoted key", "{'x': 1}", 1, "expected a key" },
		{ "a number as key", "{1: 1}", 1, "expected a key" },
		{ "no colon", "{\"x\" 1}", 1, "expected ':'" },
		{ "'=' for ':'", "{\"x\" = 1}", 1, "expected ':'" },
		{ "no comma", "{\"x\": 1 \"y\": 2}", 1, "expected ',' or '}'" },
		{ "';' for ','", "{\"x\": 1; \"y\": 2}", 1, "expected ',' or '}'" },
		{ "no value", "{\"x\": }", 1, "expected a value" },
		{ "trailing garbage", "{\"x\": 1}garbage", 1, "trailing characters after the object" },
		{ "a second object", "{\"x\": 1} {}", 1, "trailing characters after the object" },
		{ "a stray brace", "{\"x\": 1}}", 1, "trailing characters after the object" },
		/* Duplicate keys: which value would win is anyone's guess. */
		{ "a duplicate key", "{\"x\": 1, \"x\": 2}", 1, "duplicate key 'x'" },
		{ "a duplicate key of another type", "{\"a\": 0, \"x\": \"s\", \"b\": 1, \"x\": null}", 1,
		  "duplicate key 'x'" },
		{ "a duplicate key once unescaped", "{\"ab\": 1, \"a\\u0062\": 2}", 1, "duplicate key 'ab'" },
		{ "a duplicate empty key", "{\"\": 1, \"\": 2}", 1, "duplicate key ''" },
		{ "a duplicate key of a skipped value", "{\"x\": [1], \"x\": 2}", 1, "duplicate key 'x'" },
		{ "two skipped values of one key", "{\"x\": {}, \"x\": []}", 1, "duplicate key 'x'" },
		/* Literals JSON does not have, and numbers it does not allow. */
		{ "NaN", "{\"x\": NaN}", 1, "expected a value" },
		{ "nan", "{\"x\": nan}", 1, "expected a value" },
		{ "Infinity", "{\"x\": Infinity}", 1, "expected a value" },
		{ "-Infinity", "{\"x\": -Infinity}", 1, "expected a value" },
		{ "True", "{\"x\": True}", 1, "expected a value" },
		{ "a cut literal", "{\"x\": tru}", 1, "expected a value" },
		{ "a literal run on", "{\"x\": truex}", 1, "expected a value" },
		{ "undefined", "{\"x\": undefined}", 1, "expected a value" },
		{ "a single-quoted string", "{\"x\": 'a'}", 1, "expected a value" },
		{ "1e999", "{\"x\": 1e999}", 1, "number out of range" },
		{ "-1e999", "{\"x\": -1e999}", 1, "number out of range" },
		{ "a 400-digit integer",
		  "{\"x\": 1000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "00000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
		  "0000000000000000000000000000000000000000000000000000000000}", 1, "number out of range" },
		{ "a leading zero", "{\"x\": 01}", 1, "bad number" },
		{ "a negative leading zero", "{\"x\": -01.5}", 1, "bad number" },
		{ "a leading plus", "{\"x\": +1}", 1, "expected a value" },
		{ "a leading point", "{\"x\": .5}", 1, "expected a value" },
		{ "a trailing point", "{\"x\": 1.}", 1, "bad number" },
		{ "an empty exponent", "{\"x\": 1e}", 1, "bad number" },
		{ "an exponent sign alone", "{\"x\": 1e+}", 1, "bad number" },
		{ "a minus alone", "{\"x\": -}", 1, "expected a value" },
		{ "a letter then digits", "{\"x\": t01}", 1, "expected a value" },
		{ "a minus then a letter", "{\"x\": -e1}", 1, "expected a value" },
		{ "hexadecimal", "{\"x\": 0x10}", 1, "expected ',' or '}'" },
		{ "a number run on", "{\"x\": 12ab}", 1, "expected ',' or '}'" },
		/* Strings. */
		{ "an unterminated string", "{\"x\": \"abc", 1, "unterminated string" },
		{ "an unterminated key", "{\"x", 1, "unterminated string" },
		{ "a backslash at the end", "{\"x\": \"a\\", 1, "bad escape in string" },
		{ "an unknown escape", "{\"x\": \"a\\qb\"}", 1, "bad escape in string" },
		{ "an escaped single quote", "{\"x\": \"\\'\"}", 1, "bad escape in string" },
		{ "a short \\u", "{\"x\": \"\\u12\"}", 1, "bad escape in string" },
		{ "a \\u cut by the end", "{\"x\": \"\\u00", 1, "bad escape in string" },
		{ "\\U", "{\"x\": \"\\U0041\"}", 1, "bad escape in string" },
		{ "\\x", "{\"x\": \"\\x41\"}", 1, "bad escape in string" },
		{ "a raw tab", "{\"x\": \"a\tb\"}", 1, "control character in string" },
		{ "a raw newline", "{\"x\": \"a\nb\"}", 1, "control character in string" },
		{ "a raw newline in a key", "{\"a\nb\": 1}", 1, "control character in string" },
		{ "\\u0000", "{\"x\": \"a\\u0000b\"}", 1, "NUL in string" },
		/* Text that is not UTF-8. */
		{ "a 0xff byte", "{\"x\": \"\xff\"}", 1, "invalid UTF-8 in string" },
		{ "Latin-1", "{\"x\": \"caf\xe9\"}", 1, "invalid UTF-8 in string" },
		{ "a lone continuation byte", "{\"x\": \"\x80\"}", 1, "invalid UTF-8 in string" },
		{ "a cut 2-byte sequence", "{\"x\": \"\xc3\"}", 1, "invalid UTF-8 in string" },
		{ "a cut 3-byte sequence", "{\"x\": \"\xe2\x82\"}", 1, "invalid UTF-8 in string" },
		{ "a cut 4-byte sequence", "{\"x\": \"\xf0\x9f\x98\"}", 1, "invalid UTF-8 in string" },
		{ "an overlong 2-byte '/'", "{\"x\": \"\xc0\xaf\"}", 1, "invalid UTF-8 in string" },
		{ "an overlong 3-byte '/'", "{\"x\": \"\xe0\x80\xaf\"}", 1, "invalid UTF-8 in string" },
		{ "an overlong 4-byte '/'", "{\"x\": \"\xf0\x80\x80\xaf\"}", 1, "invalid UTF-8 in string" },
		{ "a surrogate in UTF-8", "{\"x\": \"\xed\xa0\x80\"}", 1, "invalid UTF-8 in string" },
		{ "past U+10FFFF", "{\"x\": \"\xf4\x90\x80\x80\"}", 1, "invalid UTF-8 in string" },
		{ "a 5-byte lead", "{\"x\": \"\xf8\x88\x80\x80\x80\"}", 1, "invalid UTF-8 in string" },
		{ "invalid UTF-8 in a key", "{\"\xff\": 1}", 1, "invalid UTF-8 in string" },
		/* Surrogates must come in pairs, high then low. */
		{ "a lone high surrogate", "{\"x\": \"\\ud800\"}", 1, "lone surrogate in \\u escape" },
		{ "a high surrogate then text", "{\"x\": \"\\ud83dx\"}", 1, "lone surrogate in \\u escape" },
		{ "a high surrogate then another \\u", "{\"x\": \"\\ud800\\u0041\"}", 1,
		  "lone surrogate in \\u escape" },
		{ "two high surrogates", "{\"x\": \"\\ud800\\ud800\"}", 1, "lone surrogate in \\u escape" },
		{ "a lone low surrogate", "{\"x\": \"\\udc00\"}", 1, "lone surrogate in \\u escape" },
		{ "a pair in the wrong order", "{\"x\": \"\\ude00\\ud83d\"}", 1, "lone surrogate in \\u escape" },
		{ "a high surrogate cut by the end", "{\"x\": \"\\ud83d\\u", 1, "bad escape in string" },
		/* Nested values: refused unless skipped, and skipped only when they are JSON too. */
		{ "an array when not skipping", "{\"a\": [1]}", 0, "nested value" },
		{ "an object when not skipping", "{\"a\": {}}", 0, "nested value" },
		{ "an unterminated array", "{\"a\": [1, 2", 1, "expected ',' or ']'" },
		{ "an unterminated object", "{\"a\": {\"b\": 1", 1, "expected ',' or '}'" },
		{ "a bracket for a brace", "{\"a\": [1}, \"b\": 1}", 1, "expected ',' or ']'" },
		{ "a brace for a bracket", "{\"a\": {\"b\": 1], \"c\": 1}", 1, "expected ',' or '}'" },
		{ "no comma in an array", "{\"a\": [1 2]}", 1, "expected ',' or ']'" },
		{ "a trailing comma in an array", "{\"a\": [1,]}", 1, "expected a value" },
		{ "a bare word in an array", "{\"a\": [garbage]}", 1, "expected a value" },
		{ "NaN in an array", "{\"a\": [NaN]}", 1, "expected a value" },
		{ "1e999 in an array", "{\"a\": [1e999]}", 1, "number out of range" },
		{ "a bad key in a nested object", "{\"a\": {b: 1}}", 1, "expected a key" },
		{ "no colon in a nested object", "{\"a\": {\"b\" 1}}", 1, "expected ':'" },
		{ "a duplicate key in a nested object", "{\"a\": {\"b\": 1, \"b\": 2}}", 1, "duplicate key 'b'" },
		{ "a lone surrogate in an array", "{\"a\": [\"\\ud800\"]}", 1, "lone surrogate in \\u escape" },
		{ "invalid UTF-8 in an array", "{\"a\": [\"\xff\"]}", 1, "invalid UTF-8 in string" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++)
		check_bad(cases[i].name, cases[i].text, cases[i].skip, cases[i].why);
}

/* Nesting is followed by recursion: a hostile depth is refused, not a stack overflow. */
static void test_depth(void)
{
	struct strbuf sb = STRBUF_INIT;
	struct json_obj o;
	char err[128];
	int rc;

	sb_adds(&sb, "{\"a\": ");
	for (int i = 0; i < 63; i++)
		sb_addc(&sb, '[');
	for (int i = 0; i < 63; i++)
		sb_addc(&sb, ']');
	sb_adds(&sb, ", \"b\": 1}");
	rc = json_parse_flat(sb.buf, &o, 1, err, sizeof(err));
	CHECK(rc == 0 && o.n == 1, "64 levels deep parses (%s)", rc ? err : "ok");
	json_obj_release(&o);
	sb_reset(&sb);
	sb_adds(&sb, "{\"a\": ");
	for (int i = 0; i < 64; i++)
		sb_addc(&sb, '[');
	check_bad("65 levels", sb.buf, 1, "nesting deeper than 64 levels");
	sb_reset(&sb);
	sb_adds(&sb, "{\"a\": ");
	for (int i = 0; i < 1000000; i++)
		sb_adds(&sb, "{\"a\":");
	check_bad("a million levels", sb.buf, 1, "nesting deeper than 64 levels");
	sb_release(&sb);
}

static void test_obj_write(void)
{
	struct json_obj o = JSON_OBJ_INIT;
	struct strbuf sb = STRBUF_INIT;

	json_obj_write(&sb, &o);
	CHECK_STR(sb.buf, "{}", "an empty object");
	json_obj_add(&o, "s", "a\"b", JSON_STR);
	json_obj_add(&o, "k\"ey", "1.5e3", JSON_NUM);
	json_obj_add(&o, "t", "true", JSON_BOOL);
	json_obj_add(&o, "z", "null", JSON_NULL);
	sb_reset(&sb);
	json_obj_write(&sb, &o);
	CHECK_TEXT(sb.buf, "{\"s\":\"a\\\"b\",\"k\\\"ey\":1.5e3,\"t\":true,\"z\":null}",
		  "compact, in order, numbers as written, keys escaped");
	json_obj_release(&o);

	/* A number whose text is not a JSON number is written as one (JSON has no hex, no "inf"). */
	json_obj_add(&o, "hex", "0x10", JSON_NUM);
	json_obj_add(&o, "point", ".5", JSON_NUM);
	json_obj_add(&o, "plus", "+2", JSON_NUM);
	json_obj_add(&o, "zeros", "007", JSON_NUM);
	json_obj_add(&o, "inf", "inf", JSON_NUM);
	json_obj_add(&o, "nan", "nan", JSON_NUM);
	json_obj_add(&o, "huge", "1e999", JSON_NUM);
	json_obj_add(&o, "word", "fast", JSON_NUM);
	json_obj_add(&o, "empty", "", JSON_NUM);
	json_obj_add(&o, "b", "yes", JSON_BOOL);
	json_obj_add(&o, "f", "false", JSON_BOOL);
	json_obj_add(&o, "n", "", JSON_NULL);
	sb_reset(&sb);
	json_obj_write(&sb, &o);
	CHECK_STR(sb.buf, "{\"hex\":16,\"point\":0.5,\"plus\":2,\"zeros\":7,\"inf\":null,\"nan\":null,\"huge\":null,"
		  "\"word\":null,\"empty\":null,\"b\":null,\"f\":false,\"n\":null}",
		  "texts that are not JSON numbers or literals become valid JSON");
	json_obj_release(&o);
	sb_release(&sb);
}

/* write -> parse -> write gives the same text, and the same pairs. */
static void test_round_trip(void)
{
	static const double nums[] = { 0, -0.0, 1, -7, 0.1, 1.0 / 3, 1e15, 1e-7, -2.5e300, 5e-324, NAN };
	static const char *const strs[] = { "", "plain", "q\"uo\\te/", "\n\r\t\b\f\x01\x1f\x7f",
		"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", "bad \xff utf-8 \xed\xa0\x80", "{\"x\": [1]}" };
	struct json_obj o = JSON_OBJ_INIT, back;
	struct strbuf sb = STRBUF_INIT, again = STRBUF_INIT, num = STRBUF_INIT;
	char key[32], err[128];
	int rc, same = 1;

	for (size_t i = 0; i < ARRAY_SIZE(nums); i++) {
		snprintf(key, sizeof(key), "n%zu", i);
		num_json(&num, nums[i]);
		json_obj_add(&o, key, num.buf, !strcmp(num.buf, "null") ? JSON_NULL : JSON_NUM);
	}
	for (size_t i = 0; i < ARRAY_SIZE(strs); i++)
		json_obj_add(&o, strs[i], strs[i], JSON_STR);
	json_obj_add(&o, "yes", "true", JSON_BOOL);
	json_obj_add(&o, "no", "false", JSON_BOOL);
	json_obj_write(&sb, &o);
	rc = json_parse_flat(sb.buf, &back, 0, err, sizeof(err));
	CHECK(rc == 0, "what json_obj_write writes parses (%s)", rc ? err : "ok");
	if (rc) {
		char buf[1200];

		printf("# %s\n", test_shown(buf, sizeof(buf), sb.buf));
	}
	json_obj_write(&again, &back);
	CHECK(!strcmp(sb.buf, again.buf), "written again, the same text (%zu bytes)", sb.len);
	CHECK_INT(back.n, o.n, "the same number of pairs");
	for (size_t i = 0; !rc && i < o.n && i < back.n && i < ARRAY_SIZE(nums); i++)
		same &= !strcmp(o.v[i].key, back.v[i].key) && !strcmp(o.v[i].val, back.v[i].val) &&
			o.v[i].type == back.v[i].type;
	CHECK(same, "numbers, null and their keys read back unchanged");
	for (size_t i = 0; !rc && i < ARRAY_SIZE(strs); i++) {
		const char *v = json_obj_get(&back, i == 5 ? "bad " FFFD " utf-8 " FFFD FFFD FFFD : strs[i]);

		CHECK_TEXT(v, i == 5 ? "bad " FFFD " utf-8 " FFFD FFFD FFFD : strs[i], "string read back");
	}
	json_obj_release(&o);
	json_obj_release(&back);
	sb_release(&sb);
	sb_release(&again);
	sb_release(&num);
}

/* The values path selects in the first document of text, shown compact and joined by spaces. */
static char *select_shown(const char *text, const char *path)
{
	struct json_docs d;
	struct json_sel sel = { NULL, 0, 0 };
	struct strbuf sb = STRBUF_INIT;
	char err[200];
	long docline, errline;

	if (json_docs_read(text, strlen(text), 1, &d, &docline, &errline, err, sizeof(err)))
		return xasprintf("read: %s", err);
	if (json_select(d.v[0], path, &sel, err, sizeof(err)))
		sb_addf(&sb, "path: %s", err);
	for (size_t i = 0; i < sel.n; i++) {
		if (i)
			sb_addc(&sb, ' ');
		json_val_show(&sb, sel.v[i], 100);
	}
	json_sel_release(&sel);
	json_docs_release(&d);
	sb_add(&sb, "", 0);
	return sb_detach(&sb);
}

/* Documents in a program's output, and paths into them. */
static void test_docs_paths(void)
{
	static const char fio[] =
		"{\"jobs\": [{\"jobname\": \"r\", \"read\": {\"iops\": 16100.5, \"clat_ns\": {\"percentile\": "
		"{\"99.000000\": 2048}}}}, {\"jobname\": \"w\", \"read\": {\"iops\": 0}}],\n"
		" \"n\": [1, 2, 3], \"m\": {\"a\": 1, \"b\": \"x\"}, \"s\": [{\"t\": \"x/y\", \"v\": 1}, {\"t\": 2, \"v\": 3}]}";
	static const struct {
		const char *path, *want;
	} cases[] = {
		{ ".", NULL }, { "jobs[0].read.iops", "16100.5" }, { ".jobs[1].jobname", "\"w\"" },
		{ "jobs[-1].jobname", "\"w\"" }, { "jobs[-3]", "" }, { "jobs[2]", "" }, { "jobs[*].jobname", "\"r\" \"w\"" },
		{ "jobs[0].read.clat_ns.percentile[\"99.000000\"]", "2048.0" }, { "n[*]", "1.0 2.0 3.0" },
		{ "m[*]", "1.0 \"x\"" }, { "s[t=x/y].v", "1.0" }, { "s[t=2].v", "3.0" }, { "s[t=nope]", "" }, { "nope.x", "" }, { "n.x", "" },
		{ "jobs[0]", NULL }, { "a..b", "path: bad path at '..b': a path is '.', or keys and indexes like a.b[0], [*], "
		  "[key=value] or [\"a.b\"]" },
	};
	struct json_docs d;
	char err[200], *got;
	const char *text;
	long docline = 0, errline = 0;

	for (size_t i = 0; i < ARRAY_SIZE(cases); i++) {
		got = select_shown(fio, cases[i].path);
		if (cases[i].want)
			CHECK_STR(got, cases[i].want, cases[i].path);
		else
			CHECK(got[0] == '{', "%s selects an object: %.40s", cases[i].path, got);
		free(got);
	}
	CHECK(!json_path_check("benchmarks[*]", 1, err, sizeof(err)), "[*] for records");
	CHECK(json_path_check("benchmarks[*].x", 0, err, sizeof(err)) && strstr(err, "selects many values"),
	      "not in a metric's path: %s", err);
	CHECK(json_path_check("", 1, err, sizeof(err)) && strstr(err, "empty path"), "an empty path: %s", err);
	CHECK(json_path_check("a[k=]", 1, err, sizeof(err)) && strstr(err, "bad path"), "an empty filter: %s", err);

	text = "log line\n{\"a\": 1,\n \"b\": [1,\n 2]}\nmore log\n[1]\n  {\"c\": 3}";
	CHECK(!json_docs_read(text, strlen(text), 0, &d, &docline, &errline, err, sizeof(err)) && d.n == 2 && d.line[0] == 2 && d.line[1] == 7,
	      "documents over lines, log lines between, '[' lines skipped without arrays: %zu at %ld, %ld", d.n,
	      d.n ? d.line[0] : 0, d.n > 1 ? d.line[1] : 0);
	json_docs_release(&d);
	text = "{\"a\": 1}\n{\"a\": 1,\n \"a\": 2}\n";
	CHECK(json_docs_read(text, strlen(text), 0, &d, &docline, &errline, err, sizeof(err)) && docline == 2 && errline == 3 && !strcmp(err, "duplicate key 'a'"),
	      "a fault: where its document starts and where it is: %ld, %ld: %s", docline, errline, err);
	text = "{\"a\": 1} {\"b\": 2}\n";
	CHECK(json_docs_read(text, strlen(text), 0, &d, &docline, &errline, err, sizeof(err)) &&
	      errline == 1 && !strcmp(err, "text after the JSON value"), "a document ends its line: %s", err);
	CHECK(json_docs_read("{\"a\": NaN}", 10, 0, &d, &docline, &errline, err, sizeof(err)) &&
	      !strcmp(err, "expected a value"), "strict JSON: %s", err);

	/* A key twice (iperf3 -P 2): its last or its first value, at every level, when asked. */
	text = "log {\"x\": 0}\n{\"a\": 1, \"n\": {\"s\": \"x,}\\\"\", \"s\": [1, {\"s\": 5}]},\n \"a\": {\"deep\": [2]},"
	       " \"b\": 3, \"a\": 4}\n{\"c\": 5}\n";
	{
		static const struct {
			int flags;
			const char *want;
		} dup[] = {
			{ JSON_DOCS_DUP_LAST, "{\"a\":4.0,\"n\":{\"s\":[1.0,{\"s\":5.0}]},\"b\":3.0}" },
			{ JSON_DOCS_DUP_FIRST, "{\"a\":1.0,\"n\":{\"s\":\"x,}\\\"\"},\"b\":3.0}" },
		};

		for (size_t i = 0; i < ARRAY_SIZE(dup); i++) {
			struct strbuf sb = STRBUF_INIT;
			int rc = json_docs_read(text, strlen(text), dup[i].flags, &d, &docline, &errline, err, sizeof(err));

			if (!rc)
				json_val_show(&sb, d.v[0], 200);
			CHECK(!rc && d.n == 2 && d.line[0] == 2 && d.last[0] == 3 && d.line[1] == 4 && sb.buf &&
			      !strcmp(sb.buf, dup[i].want), "duplicate keys %s: %s (%s)", i ? "first" : "last",
			      sb.buf ? sb.buf : "", rc ? err : "read");
			sb_release(&sb);
			json_docs_release(&d);
		}
	}
	CHECK(json_docs_read(text, strlen(text), 0, &d, &docline, &errline, err, sizeof(err)) &&
	      !strcmp(err, "duplicate key 's'"), "refused by default: %s", err);
}

int main(void)
{
	test_write_str();
	test_write_num();
	test_read();
	test_number_text();
	test_order();
	test_refuse();
	test_depth();
	test_obj_write();
	test_round_trip();
	test_docs_paths();
	return test_done();
}
