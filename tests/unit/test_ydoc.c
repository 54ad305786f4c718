/* test_ydoc.c: YAML into struct ynode: kinds, texts, order, positions, shared aliases, errors, depth. */
#include <stdlib.h>

#include "test.h"
#include "util.h"
#include "ydoc.h"

/* ydoc_parse of a NUL-terminated text. */
static int parse(struct ydoc *d, const char *text, int max_depth)
{
	return ydoc_parse(d, text, strlen(text), max_depth);
}

/* The value of key in mapping n, or NULL. */
static const struct ynode *get(const struct ynode *n, const char *key)
{
	for (int i = 0; n && n->kind == YNODE_MAP && i < n->n; i++)
		if (ydoc_key(n, i)->kind == YNODE_SCALAR && !strcmp(ydoc_key(n, i)->text, key))
			return ydoc_value(n, i);
	return NULL;
}

#define CHECK_POS(n_, l_, c_, name) do { \
	const struct ynode *pn_ = (n_); \
	CHECK(pn_ && pn_->line == (l_) && pn_->col == (c_), "%s at %d:%d (got %d:%d)", name, (l_), (c_), \
	      pn_ ? pn_->line : 0, pn_ ? pn_->col : 0); \
} while (0)

static void test_scalars(void)
{
	struct ydoc d;
	const struct ynode *r, *n;
	int rc = parse(&d, "plain: some text\n"
			   "'single': 'it''s'\n"
			   "double: \"a\\0b\\tc\"\n"
			   "num: 42\n"
			   "empty:\n"
			   "tagged: !!str 7\n"
			   "block: |\n"
			   "  line one\n"
			   "  line two\n", 10);

	CHECK_INT(rc, 0, "parse scalars");
	r = d.root;
	CHECK(r && r->kind == YNODE_MAP && r->n == 7, "root is a mapping of 7 pairs");
	CHECK_POS(r, 1, 1, "root");
	n = get(r, "plain");
	CHECK(n && n->kind == YNODE_SCALAR && n->plain, "plain scalar is plain");
	CHECK_STR(n ? n->text : NULL, "some text", "plain text");
	CHECK_INT(n ? (long long)n->len : -1, 9, "plain len");
	CHECK_POS(n, 1, 8, "plain value");
	CHECK(!ydoc_key(r, 1)->plain, "a quoted key is not plain");
	CHECK_STR(ydoc_key(r, 1)->text, "single", "quoted key text");
	CHECK_POS(ydoc_key(r, 1), 2, 1, "quoted key");
	n = get(r, "single");
	CHECK(n && !n->plain, "single-quoted scalar is not plain");
	CHECK_STR(n ? n->text : NULL, "it's", "single-quoted text");
	n = get(r, "double");
	CHECK(n && !n->plain, "double-quoted scalar is not plain");
	CHECK_INT(n ? (long long)n->len : -1, 5, "len counts the NUL byte");
	CHECK_INT(n ? (long long)strlen(n->text) : -1, 1, "strlen stops at the NUL byte");
	CHECK(n && !memcmp(n->text, "a\0b\tc", 6), "bytes after the NUL are kept, and a final NUL added");
	CHECK_POS(n, 3, 9, "double-quoted value");
	n = get(r, "num");
	CHECK(n && n->plain && !strcmp(n->text, "42"), "a number is a plain scalar '42'");
	n = get(r, "empty");
	CHECK(n && n->kind == YNODE_SCALAR && n->plain && n->len == 0 && !strcmp(n->text, ""),
	      "an empty value is a plain empty scalar");
	n = get(r, "tagged");
	CHECK(n && n->plain && !strcmp(n->text, "7"), "a tag is ignored");
	n = get(r, "block");
	CHECK(n && !n->plain, "a block scalar is not plain");
	CHECK(n && !strcmp(n->text, "line one\nline two\n"), "a block scalar's text keeps its newlines");
	CHECK_POS(n, 7, 8, "block scalar");
	CHECK(d.second_line == 0 && !d.trailing_error, "one document");
	ydoc_release(&d);
	CHECK(d.root == NULL && d.nodes == NULL, "release empties the ydoc");
	ydoc_release(&d);
}

static void test_collections(void)
{
	struct ydoc d;
	const struct ynode *r, *n, *m;
	static const char *const keys[] = { "zeta", "alpha", "mid", "list", "flow" };
	int rc = parse(&d, "zeta: 1\n"
			   "alpha: 2\n"
			   "mid: {b: x, a: y}\n"
			   "list:\n"
			   "  - one\n"
			   "  - [two, three]\n"
			   "  - k: v\n"
			   "    k2: v2\n"
			   "flow: []\n", 10);

	CHECK_INT(rc, 0, "parse collections");
	r = d.root;
	CHECK(r && r->kind == YNODE_MAP && r->n == 5, "root has 5 pairs");
	for (int i = 0; r && i < 5 && i < r->n; i++)
		CHECK_STR(ydoc_key(r, i)->text, keys[i], "keys in file order");
	CHECK_POS(ydoc_key(r, 1), 2, 1, "second key");
	m = get(r, "mid");
	CHECK(m && m->kind == YNODE_MAP && m->n == 2, "flow mapping of 2 pairs");
	CHECK(m && !strcmp(ydoc_key(m, 0)->text, "b") && !strcmp(ydoc_value(m, 0)->text, "x") &&
	      !strcmp(ydoc_key(m, 1)->text, "a") && !strcmp(ydoc_value(m, 1)->text, "y"),
	      "flow mapping pairs in order, not sorted");
	CHECK_POS(m, 3, 6, "flow mapping");
	CHECK_POS(m ? ydoc_value(m, 1) : NULL, 3, 16, "flow mapping value");
	n = get(r, "list");
	CHECK(n && n->kind == YNODE_SEQ && n->n == 3, "block sequence of 3 items");
	CHECK_POS(n, 5, 3, "block sequence");
	CHECK(n && ydoc_item(n, 0)->kind == YNODE_SCALAR && !strcmp(ydoc_item(n, 0)->text, "one"), "item 0");
	CHECK(n && ydoc_item(n, 1)->kind == YNODE_SEQ && ydoc_item(n, 1)->n == 2 &&
	      !strcmp(ydoc_item(ydoc_item(n, 1), 1)->text, "three"), "item 1 is a flow sequence");
	CHECK_POS(n ? ydoc_item(n, 1) : NULL, 6, 5, "flow sequence item");
	CHECK_POS(n ? ydoc_item(ydoc_item(n, 1), 1) : NULL, 6, 11, "flow sequence's second item");
	CHECK(n && ydoc_item(n, 2)->kind == YNODE_MAP && ydoc_item(n, 2)->n == 2 &&
	      !strcmp(get(ydoc_item(n, 2), "k2")->text, "v2"), "item 2 is a mapping");
	CHECK_POS(n ? ydoc_item(n, 2) : NULL, 7, 5, "block mapping item");
	n = get(r, "flow");
	CHECK(n && n->kind == YNODE_SEQ && n->n == 0, "empty flow sequence");
	ydoc_release(&d);

	rc = parse(&d, "? [a, b]\n: 1\n", 10);
	CHECK(!rc && d.root && d.root->n == 1 && ydoc_key(d.root, 0)->kind == YNODE_SEQ &&
	      ydoc_key(d.root, 0)->n == 2, "a complex key is a sequence node");
	ydoc_release(&d);

	rc = parse(&d, "- a\n- b\n", 10);
	CHECK(!rc && d.root && d.root->kind == YNODE_SEQ && d.root->n == 2, "a sequence at the root");
	ydoc_release(&d);
	rc = parse(&d, "just text\n", 10);
	CHECK(!rc && d.root && d.root->kind == YNODE_SCALAR && !strcmp(d.root->text, "just text"),
	      "a scalar at the root");
	ydoc_release(&d);
}

static void test_aliases(void)
{
	struct ydoc d;
	struct strbuf sb = STRBUF_INIT;
	const struct ynode *r, *base, *one, *top, *c;
	int rc = parse(&d, "base: &b {x: 1}\n"
			   "one: [*b, *b]\n"
			   "two: *b\n"
			   "s: &s text\n"
			   "k: {*s : v}\n"
			   "c: &c [x, *c]\n", 10);

	CHECK_INT(rc, 0, "parse aliases");
	r = d.root;
	base = get(r, "base");
	one = get(r, "one");
	CHECK(base && base->kind == YNODE_MAP && base->n == 1, "the anchored node");
	CHECK(one && one->n == 2 && ydoc_item(one, 0) == base && ydoc_item(one, 1) == base,
	      "an alias is the anchored node itself, twice under one parent");
	CHECK(get(r, "two") == base, "and under another parent");
	CHECK_POS(get(r, "two"), 1, 7, "an alias has its anchor's position");
	CHECK(get(r, "k") && ydoc_key(get(r, "k"), 0) == get(r, "s"), "an alias as a key");
	c = get(r, "c");
	CHECK(c && c->kind == YNODE_SEQ && c->n == 2 && ydoc_item(c, 1) == c,
	      "an alias inside its own anchor is a cycle");
	ydoc_release(&d);

	/* 10 levels of 10 references: 10^10 leaves if copied, 10 lists and 91 nodes when shared. */
	sb_adds(&sb, "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
	for (int i = 1; i < 10; i++) {
		sb_addf(&sb, "a%d: &a%d [", i, i);
		for (int j = 0; j < 10; j++)
			sb_addf(&sb, "%s*a%d", j ? ", " : "", i - 1);
		sb_adds(&sb, "]\n");
	}
	rc = parse(&d, sb.buf, 10);
	CHECK_INT(rc, 0, "parse an alias bomb");
	top = get(d.root, "a9");
	CHECK(top && top->n == 10 && ydoc_item(top, 0) == ydoc_item(top, 9) &&
	      ydoc_item(top, 0) == get(d.root, "a8") && ydoc_item(ydoc_item(top, 3), 7) == get(d.root, "a7"),
	      "the bomb's references are shared nodes");
	ydoc_release(&d);
	sb_release(&sb);
}

static void test_empty(void)
{
	static const char *const empties[] = { "", "# only a comment\n", "\n\n" };
	struct ydoc d;

	for (size_t i = 0; i < ARRAY_SIZE(empties); i++) {
		int rc = parse(&d, empties[i], 10);

		CHECK(rc == 0 && d.root == NULL && d.second_line == 0 && !d.trailing_error && !d.err.msg[0],
		      "empty document %zu: NULL root, no error", i);
		ydoc_release(&d);
	}
	/* An explicit empty document is a null, not nothing. */
	CHECK(!parse(&d, "---\n", 10) && d.root && d.root->kind == YNODE_SCALAR && d.root->plain &&
	      d.root->len == 0, "'---' alone holds an empty plain scalar");
	ydoc_release(&d);
}

static void test_errors(void)
{
	struct ydoc d;
	int rc;

	rc = parse(&d, "a: [1, 2\nb: 3\n", 10);
	CHECK(rc == -1 && d.root == NULL, "an unclosed flow sequence fails");
	CHECK(d.err.line == 2 && d.err.col == 2, "at 2:2 (got %d:%d)", d.err.line, d.err.col);
	CHECK_STR(d.err.msg, "did not find expected ',' or ']' (while parsing a flow sequence at 1:4)",
		  "message with libyaml's context");
	ydoc_release(&d);

	rc = parse(&d, "a: b\n\tc: d\n", 10);
	CHECK(rc == -1 && d.err.line == 2 && d.err.col == 1, "a tab: 2:1 (got %d:%d)", d.err.line, d.err.col);
	CHECK_STR(d.err.msg, "found a tab character that violates indentation (while scanning a plain scalar "
		  "at 1:4)", "tab message");
	ydoc_release(&d);

	rc = parse(&d, "a: *nope\n", 10);
	CHECK(rc == -1 && d.err.line == 1 && d.err.col == 4, "an undefined alias at 1:4 (got %d:%d)",
	      d.err.line, d.err.col);
	CHECK_STR(d.err.msg, "found undefined alias", "undefined alias message, no context");
	ydoc_release(&d);

	/* A reader error has a byte offset only: its line and column are counted from it. */
	rc = parse(&d, "a: b\n\n  c: \xff\n", 10);
	CHECK(rc == -1 && d.err.line == 3 && d.err.col == 6, "bad UTF-8 at 3:6 (got %d:%d)", d.err.line,
	      d.err.col);
	CHECK_STR(d.err.msg, "invalid leading UTF-8 octet", "bad UTF-8 message");
	ydoc_release(&d);

	rc = ydoc_parse(&d, "a: b\0c\n", 7, 10);
	CHECK(rc == -1 && d.err.line == 1 && d.err.col == 5, "a raw NUL byte at 1:5 (got %d:%d)", d.err.line,
	      d.err.col);
	CHECK_STR(d.err.msg, "control characters are not allowed", "raw NUL message");
	ydoc_release(&d);
}

static void test_second_document(void)
{
	struct ydoc d;
	int rc;

	rc = parse(&d, "a: 1\n---\nb: 2\n", 10);
	CHECK(rc == 0 && d.root && d.root->n == 1 && !strcmp(ydoc_key(d.root, 0)->text, "a"),
	      "the first document is the root");
	CHECK(d.second_line == 3 && d.second_col == 1 && !d.trailing_error,
	      "a second document at 3:1 (got %d:%d)", d.second_line, d.second_col);
	ydoc_release(&d);

	rc = parse(&d, "---\n---\n", 10);
	CHECK(rc == 0 && d.root && d.root->kind == YNODE_SCALAR && d.second_line == 3 && d.second_col == 1,
	      "'---' twice: two empty documents, the second at 3:1 (got %d:%d)", d.second_line, d.second_col);
	ydoc_release(&d);

	rc = parse(&d, "a: 1\n...\n", 10);
	CHECK(rc == 0 && d.root && d.second_line == 0 && !d.trailing_error, "a document end marker alone");
	ydoc_release(&d);

	rc = parse(&d, "a: 1\n---\n[\n", 10);
	CHECK(rc == 0 && d.root && d.root->n == 1, "a syntax error after the first document is no failure");
	CHECK(d.trailing_error && d.second_line == 0 && d.err.line == 4 && d.err.col == 1,
	      "but is noted, at 4:1 (got %d:%d)", d.err.line, d.err.col);
	CHECK_STR(d.err.msg, "did not find expected node content (while parsing a flow node at 4:1)",
		  "trailing error message");
	ydoc_release(&d);
}

static void test_depth(void)
{
	struct ydoc d;
	struct strbuf sb = STRBUF_INIT;
	int rc;

	rc = parse(&d, "[[[x]]]", 3);
	CHECK(rc == 0 && d.root && d.root->kind == YNODE_SEQ &&
	      ydoc_item(ydoc_item(d.root, 0), 0)->kind == YNODE_SEQ, "3 levels pass a maximum of 3");
	ydoc_release(&d);

	rc = parse(&d, "[[[[x]]]]", 3);
	CHECK(rc == -1 && d.root == NULL && d.err.line == 1 && d.err.col == 4,
	      "4 levels fail at 1:4 (got %d:%d)", d.err.line, d.err.col);
	CHECK_STR(d.err.msg, "nesting deeper than 3 levels", "depth message");
	ydoc_release(&d);

	rc = parse(&d, "a:\n  b:\n    c:\n      d: 1\n", 3);
	CHECK(rc == -1 && d.err.line == 4 && d.err.col == 7,
	      "block mappings: the 4th level at 4:7 (got %d:%d)", d.err.line, d.err.col);
	ydoc_release(&d);

	rc = parse(&d, "a: 1\n---\n[[[[x]]]]\n", 3);
	CHECK(rc == -1 && d.err.line == 3 && d.err.col == 4, "a second document is checked too (got %d:%d)",
	      d.err.line, d.err.col);
	ydoc_release(&d);

	/* The depth check walks events on the heap: 100,000 levels must not reach the recursive loader. */
	for (int i = 0; i < 100000; i++)
		sb_addc(&sb, '[');
	rc = ydoc_parse(&d, sb.buf, sb.len, 64);
	CHECK(rc == -1 && d.err.line == 1 && d.err.col == 65, "100,000 '[' stop at 1:65 (got %d:%d)",
	      d.err.line, d.err.col);
	CHECK_STR(d.err.msg, "nesting deeper than 64 levels", "deep message");
	ydoc_release(&d);
	sb_release(&sb);
}

static void test_big_scalar(void)
{
	struct ydoc d;
	struct strbuf sb = STRBUF_INIT;
	size_t big = (size_t)1 << 20;
	int rc;

	sb_adds(&sb, "k: ");
	for (size_t i = 0; i < big; i++)
		sb_addc(&sb, (char)('a' + i % 26));
	sb_adds(&sb, "\n");
	rc = ydoc_parse(&d, sb.buf, sb.len, 10);
	CHECK(rc == 0 && d.root && ydoc_value(d.root, 0)->len == big &&
	      strlen(ydoc_value(d.root, 0)->text) == big &&
	      !memcmp(ydoc_value(d.root, 0)->text, sb.buf + 3, big), "a 1 MiB scalar, byte for byte");
	ydoc_release(&d);
	sb_release(&sb);
}

int main(void)
{
	test_scalars();
	test_collections();
	test_aliases();
	test_empty();
	test_errors();
	test_second_document();
	test_depth();
	test_big_scalar();
	return test_done();
}
