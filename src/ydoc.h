/* ydoc.h: YAML text read into a tree of struct ynode, so that only ydoc.c includes libyaml. */
#ifndef SWEEP_YDOC_H
#define SWEEP_YDOC_H

#include <stddef.h>

enum ynode_kind { YNODE_SCALAR, YNODE_SEQ, YNODE_MAP };

/*
 * One node of a document. An alias is the very node its anchor names, as libyaml shares it: one node
 * may sit under several parents, or several times under one, and an alias inside its own anchor's node
 * makes a cycle. So a walk that follows every parent repeats work (aliases can make thousands of
 * entries out of a few lines: callers cap what they store), and only a walk of bounded depth ends.
 * Tags are ignored: "!!str 5" is the plain scalar 5.
 */
struct ynode {
	enum ynode_kind kind;
	int line, col;            /* 1-based start of the node, as messages print it */
	const char *text;         /* scalar: its bytes, NUL-terminated */
	size_t len;               /* scalar: its length (a NUL inside makes strlen(text) < len) */
	int plain;                /* scalar: written plain (unquoted), so it may be a number or null */
	struct ynode **kids;      /* seq: n items; map: 2n nodes, key then value, in file order */
	int n;                    /* items, or pairs */
};

/* Item i of a sequence; the key and the value of pair i of a mapping. */
static inline struct ynode *ydoc_item(const struct ynode *seq, int i)
{
	return seq->kids[i];
}

static inline struct ynode *ydoc_key(const struct ynode *map, int i)
{
	return map->kids[2 * i];
}

static inline struct ynode *ydoc_value(const struct ynode *map, int i)
{
	return map->kids[2 * i + 1];
}

/* Why a text could not be read. */
struct ydoc_error {
	int line, col;            /* 1-based: where the problem is (a reader error's from its byte offset) */
	char msg[256];            /* libyaml's problem, then " (CONTEXT at L:C)" when it names a context */
};

/* A parsed text. It owns every node and every text; ydoc_release frees them all. */
struct ydoc {
	struct ynode *root;       /* the first document's; NULL when the text holds no document */
	/* What follows the first document is read too, not kept: */
	int second_line, second_col;   /* where a second document's root starts; 0 when there is none */
	int trailing_error;       /* 1: what follows has a syntax error, described in err */
	struct ydoc_error err;    /* why ydoc_parse failed, or the trailing error */

	struct ynode *nodes;      /* every node: libyaml's node i is nodes[i - 1] */
	struct ynode **kids;      /* the kids of every node, one array */
	char *texts;              /* the text of every scalar, one array */
};

/*
 * Parse text (len bytes, NUL bytes allowed) into d. A text nested deeper than max_depth sequences and
 * mappings anywhere is refused first ("nesting deeper than N levels" at the node that goes too deep):
 * libyaml's loader recurses once per level. Returns 0 with d->root set (NULL for an empty text); a
 * second document or a syntax error after the first is noted in d (see struct ydoc) and is no failure.
 * Returns -1 with d->err set when the first document cannot be read; d->root is then NULL. Either way
 * the caller calls ydoc_release.
 */
int ydoc_parse(struct ydoc *d, const char *text, size_t len, int max_depth);
/* Free what ydoc_parse made; d is left empty (a zeroed struct ydoc may be released too). */
void ydoc_release(struct ydoc *d);

#endif
