/* store_query.c: reading a database: ad-hoc SQL with its rows handed to a callback, and snapshots. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store_int.h"
#include "util.h"

/* ---- ad-hoc queries ---- */

int store_query(struct store *st, const char *sql, const char *const *binds, int nbind, int readonly,
		int (*fn)(const struct store_row *, void *), void *data)
{
	sqlite3_stmt *s = NULL;
	const char *tail;
	const char **names = NULL, **text = NULL;
	enum store_type *types = NULL;
	double *num = NULL;
	struct store_row row;
	int ret = -1, rc, ncol, nparam, stop;

	if (store_settle(st))
		return -1;
	st->denied.what[0] = '\0';
	store_read_start(st);
	if (sqlite3_prepare_v2(st->db, sql, -1, &s, &tail)) {
		store_read_end(st);
		return store_sqlerr(st);
	}
	if (!s) {
		store_read_end(st);
		return error("sql error: no statement in '%s'", sql);
	}
	tail += strspn(tail, " \t\r\n;");
	if (*tail) {
		error("sql error: one statement at a time (extra text: '%.40s')", tail);
		goto out;
	}
	if (readonly && !sqlite3_stmt_readonly(s)) {
		error("sql error: the statement would write to the database; "
		      "only read-only queries are allowed");
		goto out;
	}
	nparam = sqlite3_bind_parameter_count(s);
	if (nbind != nparam) {
		error("sql error: the statement has %d parameter%s, %d value%s given",
		      nparam, nparam == 1 ? "" : "s", nbind, nbind == 1 ? "" : "s");
		goto out;
	}
	for (int i = 0; i < nbind; i++)
		store_bind_text(s, i + 1, binds[i]);
	ncol = sqlite3_column_count(s);
	names = xcalloc(ncol + 1, sizeof(*names));
	text = xcalloc(ncol + 1, sizeof(*text));
	types = xcalloc(ncol + 1, sizeof(*types));
	num = xcalloc(ncol + 1, sizeof(*num));
	for (int i = 0; i < ncol; i++)
		names[i] = sqlite3_column_name(s, i);
	row.ncol = ncol;
	row.names = names;
	row.text = text;
	row.types = types;
	row.num = num;
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		for (int i = 0; i < ncol; i++) {
			/* The number first: reading the text of a number adds a text form, which is fine;
			 * the other order could invalidate the text pointer. */
			switch (sqlite3_column_type(s, i)) {
			case SQLITE_INTEGER:
				types[i] = STORE_INT;
				num[i] = (double)sqlite3_column_int64(s, i);
				break;
			case SQLITE_FLOAT:
				types[i] = STORE_FLOAT;
				num[i] = sqlite3_column_double(s, i);
				break;
			case SQLITE_TEXT:
				types[i] = STORE_TEXT;
				num[i] = NAN;
				break;
			case SQLITE_BLOB:
				types[i] = STORE_BLOB;
				num[i] = NAN;
				break;
			default:
				types[i] = STORE_NULL;
				num[i] = NAN;
				break;
			}
			text[i] = types[i] == STORE_NULL ? NULL : (const char *)sqlite3_column_text(s, i);
		}
		if (fn && (stop = fn(&row, data))) {
			ret = stop;
			goto out;
		}
	}
	if (rc != SQLITE_DONE) {
		store_sqlerr(st);
		goto out;
	}
	ret = 0;
out:
	store_read_end(st);
	sqlite3_finalize(s);
	free(names);
	free(text);
	free(types);
	free(num);
	return ret;
}

/* --- snapshot --- */

/* The first column of the one row of sql on db, into buf; -1 when it fails. */
static int snapshot_text(sqlite3 *db, const char *sql, char *buf, size_t n)
{
	sqlite3_stmt *s;
	int ret = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 0)) {
		snprintf(buf, n, "%s", (const char *)sqlite3_column_text(s, 0));
		ret = 0;
	}
	sqlite3_finalize(s);
	return ret;
}

int store_snapshot(const char *path, const char *out)
{
	const char *dbs[] = { path, NULL };
	struct store *st = NULL;
	struct store_out w;
	sqlite3 *copy = NULL;
	sqlite3_stmt *s = NULL;
	char mode[32] = "", check[256] = "";
	int ret = -1;

	/* Into a temporary file by its full path (never read as a "file:" URI), renamed to out once checked:
	 * never over an existing file, a database or its side files. */
	if (store_out_open(&w, "the snapshot", out, dbs, STORE_OUT_DB | STORE_OUT_NEW))
		return -1;
	fclose(w.f);
	w.f = NULL;
	if ((ret = store_open(path, STORE_RO, &st)))
		goto out;
	ret = -1;
	/* VACUUM INTO reads in one read transaction: the copy holds every transaction committed before it
	 * began and nothing of those after, while the run goes on writing (WAL readers do not block it). */
	if (sqlite3_prepare_v2(st->db, "VACUUM INTO ?1", -1, &s, NULL) != SQLITE_OK) {
		error("cannot snapshot '%s': %s", path, sqlite3_errmsg(st->db));
		goto out;
	}
	sqlite3_bind_text(s, 1, w.tmp, -1, SQLITE_STATIC);
	if (sqlite3_step(s) != SQLITE_DONE) {
		error("cannot snapshot '%s' into '%s': %s", path, out, sqlite3_errmsg(st->db));
		goto out;
	}
	/* One self-contained file in rollback-journal mode (no -wal beside it to carry along), checked
	 * before anyone copies it. */
	if (sqlite3_open_v2(w.tmp, &copy, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK) {
		error("cannot open the snapshot '%s': %s", out, copy ? sqlite3_errmsg(copy) : "out of memory");
		goto out;
	}
	if (snapshot_text(copy, "PRAGMA journal_mode = DELETE", mode, sizeof(mode)) || strcmp(mode, "delete")) {
		error("the snapshot '%s' stays in journal mode '%s': %s", out, mode, sqlite3_errmsg(copy));
		goto out;
	}
	if (snapshot_text(copy, "PRAGMA quick_check", check, sizeof(check)) || strcmp(check, "ok")) {
		error("the snapshot '%s' of '%s' fails its check: %s", out, path,
		      *check ? check : sqlite3_errmsg(copy));
		goto out;
	}
	ret = 0;
out:
	sqlite3_finalize(s);
	if (copy && sqlite3_close(copy) != SQLITE_OK && !ret)
		ret = error("cannot close the snapshot '%s'", out);
	store_close(st);
	if (!ret)
		ret = store_out_close(&w);
	store_out_abort(&w);
	return ret;
}
