/* query.c: the rows of an SQL query collected into a table and printed. */
#include "query.h"

#include <stdio.h>

struct collect {
	struct table *t;
	int rows;
};

static int collect_row(const struct store_row *row, void *data)
{
	struct collect *c = data;

	if (!c->rows)
		table_init(c->t, row->ncol, row->names);
	table_add(c->t, row->text);
	c->rows++;
	return 0;
}

int query_table(struct store *st, const char *sql, const char *const *binds, int nbind, struct table *t)
{
	struct collect c = { t, 0 };

	if (store_query(st, sql, binds, nbind, 1, collect_row, &c)) {
		if (c.rows)
			table_release(t);
		return -1;
	}
	return c.rows;
}

int query_print(struct store *st, const char *title, const char *sql, const char *const *binds, int nbind,
		const struct table_format *fmt, int quiet_empty)
{
	struct table t;
	int rows = query_table(st, sql, binds, nbind, &t);

	if (rows < 0)
		return -1;
	if (!rows) {
		if (!quiet_empty)
			printf("%s(no rows)\n", title ? title : "");
		return 0;
	}
	if (title)
		printf("%s", title);
	table_print(&t, stdout, fmt);
	table_release(&t);
	return 0;
}
