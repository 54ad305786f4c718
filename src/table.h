/* table.h: a table of text cells printed aligned, or as Markdown, CSV, LaTeX (booktabs) or JSON. */
#ifndef SWEEP_TABLE_H
#define SWEEP_TABLE_H

#include <stdio.h>

enum table_format { TABLE_TEXT, TABLE_MD, TABLE_CSV, TABLE_LATEX, TABLE_JSON };

/* Owns copies of every string. A NULL cell prints as empty (null in JSON). */
struct table {
	int ncol;
	char **head;
	char **cell;           /* row-major, nrows * ncol */
	size_t nrows, alloc;
	int *numeric;          /* column is all numbers: right-aligned, unquoted in JSON */
	unsigned char *mark;   /* per cell: footnote mark (TABLE_MARK) after it in text, md and LaTeX */
	size_t alloc_mark;
};
/* The footnote mark of a marked cell, as text and Markdown print it (LaTeX: $^\dagger$). */
#define TABLE_MARK "\u2020"

void table_init(struct table *t, int ncol, const char *const *head);
void table_add(struct table *t, const char *const *row);
/* Mark cell c of the last row added. */
void table_mark(struct table *t, int c);
void table_release(struct table *t);
/* The format named "text", "md", "csv", "latex" or "json"; -1 after error() for another name. */
int table_format_parse(const char *name, enum table_format *out);
/* Append s for a terminal or a document: valid UTF-8 as it is, each control character as '?' and each
 * byte that is not UTF-8 as U+FFFD. */
struct strbuf;
void table_add_safe(struct strbuf *sb, const char *s);
/* The format a file name's extension asks for (.md, .csv, .tex, .json, .txt): 0 with *out set, -1 (no
 * message) for another name. */
int table_format_of_path(const char *path, enum table_format *out);
void table_print(const struct table *t, FILE *f, enum table_format fmt);

#endif
