/* table.h: a table of text cells printed aligned, or as Markdown, CSV, LaTeX (booktabs), JSON or HTML. */
#ifndef SWEEP_TABLE_H
#define SWEEP_TABLE_H

#include <stdio.h>

/* Owns copies of every string. A NULL cell prints as empty (null in JSON). */
struct table {
	int ncol;
	char **head;
	char **cell;           /* row-major, nrows * ncol */
	size_t nrows, alloc;
	int *numeric;          /* column is all numbers: right-aligned, unquoted in JSON */
	unsigned char *mark;   /* per cell: its footnote marks, bit k for mark k, after it in text, md and LaTeX */
	size_t alloc_mark;
};
/* The footnote marks a cell may carry, as text and Markdown print them: mark 0 (LaTeX: $^\dagger$) and
 * mark 1 (LaTeX: $^\ddagger$). What each means is the footnote's to say. */
#define TABLE_MARK "\u2020"
#define TABLE_MARK2 "\u2021"
#define TABLE_NMARKS 2
/* A footnote of no mark: what the whole table's results say ("Note: 2 records of item r averaged"). */
#define TABLE_NOTE (-1)

/* Column names are unique, so that a reader that keys cells by name (a JSON object, a CSV reader of
 * dictionaries) loses none: a name an earlier column has is renamed with a suffix, _2 or the first of _3,
 * _4, ... that no other column has (docs/reports.md, "Column names"). */
void table_init(struct table *t, int ncol, const char *const *head);
void table_add(struct table *t, const char *const *row);
/* Put mark k (0 or 1) on cell c of the last row added. */
void table_mark(struct table *t, int c, int k);
void table_release(struct table *t);
/* Append s for a terminal or a document: valid UTF-8 as it is, each control character as '?' and each
 * byte that is not UTF-8 as U+FFFD. */
struct strbuf;
void table_add_safe(struct strbuf *sb, const char *s);
/* Append s as HTML text: made safe as table_add_safe does, then & < > " ' as character references. */
void table_add_html(struct strbuf *sb, const char *s);

/*
 * A format tables print in: one struct of methods per format, in the NULL-terminated table_formats (a new
 * format is one more struct there, such as HTML). The methods write to f; a NULL method writes nothing.
 */
struct table_format {
	const char *name;      /* as --format takes it: "md" */
	const char *ext;       /* the file extension that asks for it: ".md" */
	int reading;           /* for people: numbers rounded alike down a column, an interval in its value's
				* cell, unknown as "-", footnote marks; else for programs: every digit, unknown
				* empty (null), a mark as a column of its own */
	int equal_decimals;    /* numbers line up only with equal decimals (LaTeX's right-aligned columns), so
				* a column spanning orders of magnitude keeps its smallest value's decimals */
	int page;              /* a whole document, which the report fills around the table (HTML: its figure,
				* method and conditions) */
	void (*print)(const struct table *t, FILE *f);
	/* A line above the table that titles it (text and Markdown). */
	void (*heading)(const char *text, FILE *f);
	/* The method a table was made with (statistic, interval, resamples): a heading for text and Markdown,
	 * a comment in LaTeX, which a paper includes whole, so that the method travels with the table. */
	void (*method)(const char *text, FILE *f);
	/* After the table: what mark k means ("holds ...") and how to do without it ("; --strict ..."); k
	 * TABLE_NOTE: a note on the table, led by "Note:". */
	void (*footnote)(int k, const char *meaning, const char *hint, FILE *f);
};
extern const struct table_format table_text, table_md, table_csv, table_latex, table_json, table_html;
extern const struct table_format *const table_formats[];
/* The format of that name; NULL after error() naming the formats there are. */
const struct table_format *table_format_find(const char *name);
/* The format a file name's extension asks for (.md, .csv, .tex, .json, .txt, .html, any case), or NULL (no
 * message). */
const struct table_format *table_format_of_path(const char *path);
void table_print(const struct table *t, FILE *f, const struct table_format *fmt);

#endif
