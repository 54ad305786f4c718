/* ydoc.c: YAML text read into a tree of struct ynode; the only file that includes yaml.h. */
#include "ydoc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util.h"

/* libyaml's marks are 0-based; messages are 1-based. */
static void ydoc_error_at(struct ydoc_error *e, int line, int col, const char *msg)
{
	e->line = line;
	e->col = col;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
}

/* libyaml's own message, at its mark (a reader error has only a byte offset into text). */
static void ydoc_error_yaml(struct ydoc_error *e, const yaml_parser_t *y, const char *text, size_t len)
{
	ydoc_error_at(e, (int)y->problem_mark.line + 1, (int)y->problem_mark.column + 1,
		      y->problem ? y->problem : "cannot parse YAML");
	if (y->error == YAML_READER_ERROR) {
		e->line = e->col = 1;
		for (size_t i = 0; i < y->problem_offset && i < len; i++, e->col++)
			if (text[i] == '\n') {
				e->line++;
				e->col = 0;
			}
	} else if (y->context) {
		size_t n = strlen(e->msg);

		snprintf(e->msg + n, sizeof(e->msg) - n, " (%s at %d:%d)", y->context,
			 (int)y->context_mark.line + 1, (int)y->context_mark.column + 1);
	}
}

/*
 * libyaml's loader recurses once per nesting level, so deep enough input overflows the stack. The event
 * parser keeps its state on the heap: walk the events first. -1 with e set when too deep; a syntax
 * error is left for the loader to report.
 */
static int ydoc_depth_check(struct ydoc_error *e, const char *text, size_t len, int max_depth)
{
	yaml_parser_t y;
	yaml_event_t ev;
	int depth = 0, ret = 0, done = 0;
	char msg[64];

	if (!yaml_parser_initialize(&y))
		die("out of memory");
	yaml_parser_set_input_string(&y, (const unsigned char *)text, len);
	while (!done && yaml_parser_parse(&y, &ev)) {
		if (ev.type == YAML_SEQUENCE_START_EVENT || ev.type == YAML_MAPPING_START_EVENT) {
			if (++depth > max_depth) {
				snprintf(msg, sizeof(msg), "nesting deeper than %d levels", max_depth);
				ydoc_error_at(e, (int)ev.start_mark.line + 1, (int)ev.start_mark.column + 1,
					      msg);
				ret = -1;
				done = 1;
			}
		} else if (ev.type == YAML_SEQUENCE_END_EVENT || ev.type == YAML_MAPPING_END_EVENT) {
			depth--;
		}
		done |= ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&y);
	return ret;
}

/* The node of libyaml's index i (1-based), in d. */
static struct ynode *ydoc_node(struct ydoc *d, size_t count, int i)
{
	if (i < 1 || (size_t)i > count)
		BUG("libyaml node %d out of range", i);
	return &d->nodes[i - 1];
}

/*
 * Copy doc into d. libyaml's node i becomes d->nodes[i - 1] and every reference to index i points
 * there, so each node is converted once and an alias stays one shared node: a copy per reference would
 * grow exponentially with nested aliases. No recursion, so a cycle is no problem either.
 */
static void ydoc_convert(struct ydoc *d, yaml_document_t *doc)
{
	size_t count = (size_t)(doc->nodes.top - doc->nodes.start), nkids = 0, ntext = 0, k = 0, t = 0;

	if (!count)
		return;
	for (yaml_node_t *yn = doc->nodes.start; yn < doc->nodes.top; yn++) {
		if (yn->type == YAML_SCALAR_NODE)
			ntext += yn->data.scalar.length + 1;
		else if (yn->type == YAML_SEQUENCE_NODE)
			nkids += (size_t)(yn->data.sequence.items.top - yn->data.sequence.items.start);
		else if (yn->type == YAML_MAPPING_NODE)
			nkids += 2 * (size_t)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
	}
	d->nodes = xcalloc(count, sizeof(*d->nodes));
	d->kids = xcalloc(nkids + 1, sizeof(*d->kids));
	d->texts = xmalloc(ntext + 1);
	for (size_t i = 0; i < count; i++) {
		yaml_node_t *yn = &doc->nodes.start[i];
		struct ynode *n = &d->nodes[i];

		n->line = (int)yn->start_mark.line + 1;
		n->col = (int)yn->start_mark.column + 1;
		switch (yn->type) {
		case YAML_SCALAR_NODE:
			n->kind = YNODE_SCALAR;
			n->len = yn->data.scalar.length;
			n->plain = yn->data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
			memcpy(d->texts + t, yn->data.scalar.value, n->len);
			d->texts[t + n->len] = '\0';
			n->text = d->texts + t;
			t += n->len + 1;
			break;
		case YAML_SEQUENCE_NODE:
			n->kind = YNODE_SEQ;
			n->kids = d->kids + k;
			n->n = (int)(yn->data.sequence.items.top - yn->data.sequence.items.start);
			for (int j = 0; j < n->n; j++)
				d->kids[k++] = ydoc_node(d, count, yn->data.sequence.items.start[j]);
			break;
		case YAML_MAPPING_NODE:
			n->kind = YNODE_MAP;
			n->kids = d->kids + k;
			n->n = (int)(yn->data.mapping.pairs.top - yn->data.mapping.pairs.start);
			for (int j = 0; j < n->n; j++) {
				d->kids[k++] = ydoc_node(d, count, yn->data.mapping.pairs.start[j].key);
				d->kids[k++] = ydoc_node(d, count, yn->data.mapping.pairs.start[j].value);
			}
			break;
		default:
			BUG("libyaml node %zu of type %d", i + 1, (int)yn->type);
		}
	}
	/* A loaded document's root is its first node. */
	d->root = &d->nodes[0];
}

int ydoc_parse(struct ydoc *d, const char *text, size_t len, int max_depth)
{
	yaml_parser_t y;
	yaml_document_t doc, more;
	int ret = -1;

	memset(d, 0, sizeof(*d));
	if (ydoc_depth_check(&d->err, text, len, max_depth))
		return -1;
	if (!yaml_parser_initialize(&y))
		die("out of memory");
	yaml_parser_set_input_string(&y, (const unsigned char *)text, len);
	/* On failure yaml_parser_load frees the document itself. */
	if (!yaml_parser_load(&y, &doc)) {
		ydoc_error_yaml(&d->err, &y, text, len);
		goto out;
	}
	ydoc_convert(d, &doc);
	yaml_document_delete(&doc);
	ret = 0;
	/* A text without a first document has nothing after it. */
	if (!d->root)
		goto out;
	if (!yaml_parser_load(&y, &more)) {
		ydoc_error_yaml(&d->err, &y, text, len);
		d->trailing_error = 1;
		goto out;
	}
	if (yaml_document_get_root_node(&more)) {
		d->second_line = (int)yaml_document_get_root_node(&more)->start_mark.line + 1;
		d->second_col = (int)yaml_document_get_root_node(&more)->start_mark.column + 1;
	}
	yaml_document_delete(&more);
out:
	yaml_parser_delete(&y);
	return ret;
}

void ydoc_release(struct ydoc *d)
{
	free(d->nodes);
	free(d->kids);
	free(d->texts);
	memset(d, 0, sizeof(*d));
}
