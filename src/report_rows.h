/* report_rows.h: the rows a report's stages pass on (typed cells, their marks) and the notes a stage
 * leaves: what every stage reads and writes, with no database and no output (report_rows.c). */
#ifndef SWEEP_REPORT_ROWS_H
#define SWEEP_REPORT_ROWS_H

#include <stddef.h>

/* A text parameter in its spec's order: its key expression sorts through the collation (store_order_text),
 * and a pivot's columns by the values' places. */
struct report_order {
	char *param;
	char *collation;
	char **values;             /* as the spec lists them, each once */
	size_t n;
};

/* What sweep compare pairs within a cell: its items (averaged over passes), its passes, or its samples. */
enum report_unit { UNIT_ITEM, UNIT_PASS, UNIT_SAMPLE };

/* ---- report_rows.c: rows, and the notes a stage leaves ---- */

enum report_col_kind {
	RCOL_KEY,                  /* text of a key: for reading "-" for unknown, a blank-edged value quoted */
	RCOL_LABEL,                /* text: for reading "-" for unknown */
	RCOL_TEXT,                 /* text as it is; unknown empty */
	RCOL_NUM,                  /* a number */
	RCOL_SERIES,               /* numbers separated by spaces (%.17g), each printed as a number */
	RCOL_NOTE                  /* text for programs only (CSV, JSON): what a footnote says of the row for
				    * reading, which leaves the column out */
};
struct report_col {
	char *name;
	enum report_col_kind kind;
	int sig;                   /* NUM, SERIES: significant digits (4 unless set); 0 prints a count */
	int nosum;                 /* NUM: left out of --summary (a count) */
	int align;                 /* NUM: 0, or a group number: the columns of one group (one unit) print
				    * with the same decimals for reading; -1: each value with its own digits */
	int ci;                    /* NUM: followed by its interval's bounds, one cell with them for reading */
};
/*
 * Rows of typed cells: what a statement returns (every cell as text and as a number), what aggregation
 * makes of it and what a printer prints. Owns every string; report_rows_release.
 */
struct report_rows {
	int ncol;
	struct report_col *col;
	size_t n, alloc_text, alloc_num, alloc_mark;
	char **text;               /* n * ncol: NULL for unknown */
	double *num;               /* n * ncol: NaN for unknown or not a number */
	unsigned char *mark;       /* n * ncol: its marks (enum report_mark) */
	int group;                 /* the column of the --summary group, or -1 */
	char *ci_head;             /* the heading of an interval's cell for reading ("a/b [95% CI]") */
	const struct report_order *orders;   /* fetched rows: the context's text orders (borrowed), by which a
					      * pivot sorts its columns as SQL sorted the rows */
	size_t norders;
};
void report_rows_init(struct report_rows *r);
void report_rows_release(struct report_rows *r);
/* Add a column (kind, 4 significant digits); returns its index. Only before the first row. */
int report_rows_col(struct report_rows *r, const char *name, enum report_col_kind kind);
/* Add a row of unknown cells; returns its index. */
size_t report_rows_add(struct report_rows *r);
void report_rows_set_text(struct report_rows *r, size_t row, int col, const char *s);
void report_rows_set_num(struct report_rows *r, size_t row, int col, double v);
/* What a value's mark says; a printer shows MARK_IMPRECISE as table mark 0 (a precise column for programs),
 * MARK_CAVEAT as table mark 1 with report_notes' caveats as its footnote. */
enum report_mark {
	MARK_IMPRECISE = 1,        /* rests on a result whose median misses its precision (STORE_IMPRECISE) */
	MARK_CAVEAT = 2            /* a statistic to read with care: a warning on stderr says why */
};
void report_rows_mark(struct report_rows *r, size_t row, int col, enum report_mark kind);
static inline const char *report_rows_text(const struct report_rows *r, size_t row, int col)
{
	return r->text[row * (size_t)r->ncol + (size_t)col];
}
static inline double report_rows_num(const struct report_rows *r, size_t row, int col)
{
	return r->num[row * (size_t)r->ncol + (size_t)col];
}
/* A series cell: the numbers as text (%.17g, which reads back exact), and read back (owned, *n of them). */
void report_rows_set_series(struct report_rows *r, size_t row, int col, const double *v, size_t n);
double *report_rows_series(const struct report_rows *r, size_t row, int col, size_t *n);
/* A key's value for reading: an empty or blank-edged value in double quotes, so that "" and " " are not
 * both an empty cell (or an empty "v=" heading). Owned. */
char *report_rows_quote(const char *s);
/* The --summary group: the key column called by, else a new RCOL_LABEL column by (call it after the keys,
 * before the values). Sets r->group; returns its index. */
int report_rows_group(struct report_rows *r, const char *by);
/* Order the rows by their group (unknown first), keeping the order within a group. */
void report_rows_sort_group(struct report_rows *r);
/* Whether row a of x and row b of y have the same first nkey cells (as text; unknown equals unknown only). */
int report_rows_same_keys(const struct report_rows *x, size_t a, const struct report_rows *y, size_t b, int nkey);
/* "host=a model=m": the first nkey cells of row j named by keys, for notes; "all" without keys. Owned. */
char *report_rows_name(const struct report_rows *r, size_t j, const char *const *keys, int nkey);
/* Drop the last n columns of every row. */
void report_rows_drop(struct report_rows *r, int n);

/*
 * Remarks a pure stage leaves, printed by the caller in order on stderr: notes ("note: ...") and warnings
 * ("sweep: warning: ..."), the statistics a table must not be read without; and the caveats, the reasons
 * values carry MARK_CAVEAT, each once, for the table's footnote.
 */
struct report_notes {
	char **v;
	unsigned char *warn;       /* v[i] is a warning */
	size_t n, alloc, alloc_warn;
	char **caveat;
	size_t ncaveat;
};
void report_notes_add(struct report_notes *nt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void report_notes_warn(struct report_notes *nt, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Add why some values carry MARK_CAVEAT ("an interval rests on fewer than 5 pairs"), unless said. */
void report_notes_caveat(struct report_notes *nt, const char *why);
/* The caveats joined for a footnote ("a; b"), or NULL without any. Owned. */
char *report_notes_caveats(const struct report_notes *nt);
void report_notes_print(const struct report_notes *nt);
void report_notes_release(struct report_notes *nt);
/* "note: ..." on stderr at once: remarks that must not end up inside a CSV or JSON table. */
void report_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
