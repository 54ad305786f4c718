/* store_split.c: one statement over slices of the results at once, each on its own connection and thread,
 * and a second statement over the slices' rows (store_query_split). */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "store_int.h"
#include "util.h"

#define SPLIT_MAX 4                /* slices: the cores a report uses at most */

/* One slice: results.id in [lo, hi], read on st; its rows, ncol values each (owned). */
struct slice {
	struct store *st;
	const char *sql;
	const char *const *binds;
	int nbind, at, began;
	int64_t lo, hi;
	sqlite3_value **v;
	size_t nrow, alloc;
	int ncol, ret;
	char *state;               /* what its connection saw first (state_of) */
};

static void slice_release(struct slice *s)
{
	for (size_t i = 0; i < s->nrow * (size_t)s->ncol; i++)
		sqlite3_value_free(s->v[i]);
	free(s->v);
	free(s->state);
}

static void *slice_run(void *arg)
{
	struct slice *sl = arg;
	sqlite3_stmt *s = NULL;
	int rc;

	sl->ret = -1;
	store_read_start(sl->st);
	if (sqlite3_prepare_v2(sl->st->db, sl->sql, -1, &s, NULL)) {
		store_sqlerr(sl->st);
		goto out;
	}
	for (int i = 0; i < sl->nbind; i++)
		store_bind_text(s, i + 1, sl->binds[i]);
	sqlite3_bind_int64(s, sl->at, sl->lo);
	sqlite3_bind_int64(s, sl->at + 1, sl->hi);
	sl->ncol = sqlite3_column_count(s);
	while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
		ALLOC_GROW(sl->v, (sl->nrow + 1) * (size_t)sl->ncol, sl->alloc);
		for (int c = 0; c < sl->ncol; c++)
			if (!(sl->v[sl->nrow * (size_t)sl->ncol + c] = sqlite3_value_dup(sqlite3_column_value(s, c))))
				die("out of memory");
		sl->nrow++;
	}
	if (rc != SQLITE_DONE)
		store_sqlerr(sl->st);
	else
		sl->ret = 0;
out:
	sqlite3_finalize(s);
	store_read_end(sl->st);
	return NULL;
}

/* What a connection sees of the database, to tell that slices read one state: the newest result and
 * every count of cells by state (a retry, a retire or a new result changes one). */
static char *state_of(struct store *st)
{
	sqlite3_stmt *s = NULL;
	char *out = NULL;

	if (!sqlite3_prepare_v2(st->db, "SELECT (SELECT max(id) FROM results) || ':' || (SELECT group_concat("
				"sweep || '/' || replica || '/' || planned || '/' || running || '/' || ok || '/' || "
				"quarantined || '/' || template || '/' || retired, ';') FROM cell_counts)", -1, &s,
				NULL) &&
	    sqlite3_step(s) == SQLITE_ROW)
		out = xstrdup(sqlite3_column_text(s, 0) ? (const char *)sqlite3_column_text(s, 0) : "");
	else
		store_sqlerr(st);
	sqlite3_finalize(s);
	return out;
}

/* The slices' rows into temp.sweep_part(c1, ..., cN), in slice order. */
static int load_parts(struct store *st, const struct slice *sl, int n)
{
	struct strbuf sql = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	int ncol = sl[0].ncol, ret = -1;

	sb_adds(&sql, "DROP TABLE IF EXISTS temp.sweep_part; CREATE TEMP TABLE sweep_part(");
	for (int c = 0; c < ncol; c++)
		sb_addf(&sql, "%sc%d", c ? ", " : "", c + 1);
	sb_adds(&sql, ")");
	if (sqlite3_exec(st->db, sql.buf, NULL, NULL, NULL)) {
		store_sqlerr(st);
		goto out;
	}
	sb_reset(&sql);
	sb_adds(&sql, "INSERT INTO temp.sweep_part VALUES (");
	for (int c = 0; c < ncol; c++)
		sb_addf(&sql, "%s?", c ? ", " : "");
	sb_adds(&sql, ")");
	if (sqlite3_prepare_v2(st->db, sql.buf, -1, &s, NULL)) {
		store_sqlerr(st);
		goto out;
	}
	for (int i = 0; i < n; i++)
		for (size_t r = 0; r < sl[i].nrow; r++) {
			for (int c = 0; c < ncol; c++)
				sqlite3_bind_value(s, c + 1, sl[i].v[r * (size_t)ncol + c]);
			if (sqlite3_step(s) != SQLITE_DONE || sqlite3_reset(s)) {
				store_sqlerr(st);
				goto out;
			}
		}
	ret = 0;
out:
	sqlite3_finalize(s);
	sb_release(&sql);
	return ret;
}

/* How many slices: one per core up to SPLIT_MAX, none smaller than one result. */
static int slices(int64_t lo, int64_t hi)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int n = cpus < 1 ? 1 : cpus > SPLIT_MAX ? SPLIT_MAX : (int)cpus;

	return hi - lo + 1 < n ? 1 : n;
}

int store_query_split(struct store *st, const char *part, const char *final, const char *const *binds,
		      int nbind, int at, int (*fn)(const struct store_row *, void *), void *data)
{
	struct slice sl[SPLIT_MAX];
	pthread_t th[SPLIT_MAX];
	int64_t lo = 0, hi = -1;
	int n, ret = -1, same = 1;

	memset(sl, 0, sizeof(sl));
	if (store_settle(st) || store_int(st, "SELECT coalesce(min(id), 0) FROM results", &lo) ||
	    store_int(st, "SELECT coalesce(max(id), -1) FROM results", &hi))
		return -1;
	n = slices(lo, hi);
	for (int i = 0; i < n; i++) {
		sl[i] = (struct slice){ .sql = part, .binds = binds, .nbind = nbind, .at = at, .st = st };
		if (i && store_open_twin(st, &sl[i].st))
			goto out;
	}
	/* Each connection's read transaction holds the state its first read saw; a commit between two of
	 * them, or st's own transaction (what it wrote and did not commit), would have the slices read two
	 * states: then one slice, on st, reads it all. */
	for (int i = 0; i < n; i++) {
		if (sqlite3_get_autocommit(sl[i].st->db)) {
			if (sqlite3_exec(sl[i].st->db, "BEGIN", NULL, NULL, NULL))
				goto out;
			sl[i].began = 1;
		}
		if (!(sl[i].state = state_of(sl[i].st)))
			goto out;
	}
	for (int i = 1; i < n; i++)
		same &= !strcmp(sl[0].state, sl[i].state);
	if (!same)
		n = 1;
	for (int i = 0; i < n; i++) {
		sl[i].lo = i ? sl[i - 1].hi + 1 : INT64_MIN;
		sl[i].hi = i == n - 1 ? INT64_MAX : lo + (hi - lo + 1) / n * (i + 1) - 1;
	}
	for (int i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, slice_run, &sl[i]))
			die("cannot start a thread");
	slice_run(&sl[0]);
	ret = sl[0].ret;
	for (int i = 1; i < n; i++) {
		pthread_join(th[i], NULL);
		ret |= sl[i].ret;
	}
	if (!ret)
		ret = load_parts(st, sl, n) || store_query(st, final, NULL, 0, 1, fn, data) ? -1 : 0;
	sqlite3_exec(st->db, "DROP TABLE IF EXISTS temp.sweep_part", NULL, NULL, NULL);
out:
	for (int i = 0; i < SPLIT_MAX; i++) {
		if (sl[i].began)
			sqlite3_exec(sl[i].st->db, "COMMIT", NULL, NULL, NULL);
		slice_release(&sl[i]);
		if (i && sl[i].st)
			store_close(sl[i].st);
	}
	return ret;
}
