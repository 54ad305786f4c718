/* query.c: the rows of an SQL query collected into a table and printed. */
#include "query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Streaming: the rows are printed QUERY_CHUNK at a time, each chunk a table of its own with its header
 * cut off after the first (and JSON's brackets joined), so that memory stays bounded however many rows a
 * query gives. Text and Markdown align each chunk by itself; JSON writes a column's cells unquoted when
 * they are all numbers within their chunk.
 */
#define QUERY_CHUNK 4096

struct stream {
	const struct table_format *fmt;
	FILE *f;
	struct table t;
	int have;                  /* t holds rows not printed yet */
	size_t rows, chunks;
	size_t csv_head;           /* CSV: the bytes of the header record */
};

/* The bytes a chunk after the first leaves out at its start: the header (text: one line, Markdown: two,
 * CSV: its record, which may hold quoted line breaks), or JSON's '['. */
static size_t stream_head(const struct stream *s, const char *buf, size_t len)
{
	const char *nl = memchr(buf, '\n', len);

	if (s->fmt == &table_json)
		return 1;
	if (s->fmt == &table_csv)
		return s->csv_head;
	if (s->fmt == &table_md && nl)
		nl = memchr(nl + 1, '\n', len - (size_t)(nl + 1 - buf));
	return nl ? (size_t)(nl + 1 - buf) : len;
}

static void stream_flush(struct stream *s)
{
	char *buf = NULL;
	size_t len = 0, skip = 0;
	FILE *m;

	if (!s->have)
		return;
	m = open_memstream(&buf, &len);
	if (!m)
		die("out of memory (open_memstream)");
	table_print(&s->t, m, s->fmt);
	fclose(m);
	table_release(&s->t);
	s->have = 0;
	if (s->chunks++)
		skip = stream_head(s, buf, len);
	/* JSON: the closing "]\n" comes once, at the end; the chunks are joined as the rows of one are. */
	if (s->fmt == &table_json && len >= skip + 2)
		len -= 2;
	if (s->fmt == &table_json && skip)
		fputs(",\n ", s->f);
	fwrite(buf + skip, 1, len - skip, s->f);
	free(buf);
}

static int stream_row(const struct store_row *row, void *data)
{
	struct stream *s = data;

	if (!s->rows && s->fmt == &table_csv) {
		char *buf = NULL;
		FILE *m = open_memstream(&buf, &s->csv_head);

		if (!m)
			die("out of memory (open_memstream)");
		table_init(&s->t, row->ncol, row->names);
		table_print(&s->t, m, s->fmt);
		fclose(m);
		table_release(&s->t);
		free(buf);
	}
	if (!s->have)
		table_init(&s->t, row->ncol, row->names);
	s->have = 1;
	table_add(&s->t, row->text);
	if (++s->rows % QUERY_CHUNK == 0)
		stream_flush(s);
	return 0;
}

int query_stream(struct store *st, const char *sql, const struct table_format *fmt, FILE *f)
{
	struct stream s = { fmt, f, { 0 }, 0, 0, 0, 0 };
	int ret = store_query(st, sql, NULL, 0, 1, stream_row, &s);

	stream_flush(&s);
	if (s.chunks && fmt == &table_json)
		fputs("]\n", f);
	if (!ret && !s.rows)
		fputs("(no rows)\n", f);
	return ret;
}
