/* query.h: the rows of an SQL query as a table (table.h), for commands that print what they ask for. */
#ifndef SWEEP_QUERY_H
#define SWEEP_QUERY_H

#include "store.h"
#include "table.h"

/*
 * Run sql (read-only) with binds on st and collect its rows into t, headed by the query's column names.
 * Returns the number of rows (t is initialised only when there is at least one: the caller releases it
 * then), or -1 on an SQL error (after error()).
 */
int query_table(struct store *st, const char *sql, const char *const *binds, int nbind, struct table *t);

/* query_table, then print the table in fmt under title (when not NULL). With no rows: "(no rows)" after
 * the title, or nothing when quiet_empty. Returns 0 or -1. */
int query_print(struct store *st, const char *title, const char *sql, const char *const *binds, int nbind,
		const struct table_format *fmt, int quiet_empty);

/* Run sql (read-only) on st and print its rows in fmt to f as they come, a few thousand at a time (text
 * and Markdown aligned within each such chunk), so that memory stays bounded whatever the query gives;
 * "(no rows)" when it gives none. Rows printed before an SQL error stay printed. Returns 0 or -1. */
int query_stream(struct store *st, const char *sql, const struct table_format *fmt, FILE *f);

#endif
