/* store_dispatch.c: the store in a run's dispatch: its cells in flight and the counts it keeps itself. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include "store_int.h"
#include "util.h"

/*
 * In dispatch mode (store_dispatching) the triggers that keep cell_counts are off: their program, run by
 * every mark and every result, cost the master a third of its time. The store counts instead: each cell
 * a window loads is noted with its sweep and replica (a pair), each change of its state is a delta of
 * its pair, and the deltas of a transaction are written at its commit, one statement a pair. The cells
 * noted are those loaded and those in flight: a hand-back (store_unfly) reads them instead of every cell.
 * A rolled-back transaction takes its deltas with it; the cells noted may then be out of date, so the
 * hand-back reads every cell after one (flight.unsure).
 */

static int flight_err(struct store *st)
{
	return error("sql error: %s", sqlite3_errmsg(st->db));
}

static size_t flight_slot(const struct store_flight *f, int64_t id)
{
	size_t i = (size_t)(id * 0x9e3779b97f4a7c15ULL) & (f->cap - 1);

	while (f->cells[i].id && f->cells[i].id != id)
		i = (i + 1) & (f->cap - 1);
	return i;
}

static void flight_put(struct store_flight *f, int64_t id, int pair)
{
	size_t i;

	if (4 * (f->n + 1) > 3 * f->cap) {
		struct flight_cell *old = f->cells;
		size_t oldcap = f->cap;

		f->cap = f->cap ? 2 * f->cap : 1024;
		f->cells = xcalloc(f->cap, sizeof(*f->cells));
		f->n = 0;
		for (size_t k = 0; k < oldcap; k++)
			if (old[k].id)
				flight_put(f, old[k].id, old[k].pair);
		free(old);
	}
	i = flight_slot(f, id);
	f->n += !f->cells[i].id;
	f->cells[i].id = id;
	f->cells[i].pair = pair;
}

/* Take id out, keeping every other id reachable from its slot (backward-shift deletion). */
static void flight_take(struct store_flight *f, int64_t id)
{
	size_t i, j;

	if (!f->cap || !f->cells[i = flight_slot(f, id)].id)
		return;
	f->cells[i].id = 0;
	f->n--;
	for (j = (i + 1) & (f->cap - 1); f->cells[j].id; j = (j + 1) & (f->cap - 1)) {
		struct flight_cell c = f->cells[j];

		f->cells[j].id = 0;
		f->n--;
		flight_put(f, c.id, c.pair);
	}
}

static int flight_pair(struct store_flight *f, const char *sweep, const char *replica)
{
	for (size_t i = 0; i < f->npairs; i++)
		if (!strcmp(f->pairs[i].sweep, sweep) && !strcmp(f->pairs[i].replica, replica))
			return (int)i;
	ALLOC_GROW(f->pairs, f->npairs + 1, f->alloc_pairs);
	memset(&f->pairs[f->npairs], 0, sizeof(f->pairs[0]));
	f->pairs[f->npairs].sweep = xstrdup(sweep);
	f->pairs[f->npairs].replica = xstrdup(replica);
	return (int)f->npairs++;
}

void store_flight_note(struct store *st, int64_t cell, const char *sweep, const char *replica)
{
	if (st->flight.on)
		flight_put(&st->flight, cell, flight_pair(&st->flight, sweep, replica));
}

/* The pair of a cell, noted when it was loaded, else read (a cell tried again, one a test marks). */
static int flight_find(struct store *st, int64_t cell, int *pair)
{
	struct store_flight *f = &st->flight;
	sqlite3_stmt *s;
	size_t i;
	int rc;

	if (f->cap && f->cells[i = flight_slot(f, cell)].id) {
		*pair = f->cells[i].pair;
		return 0;
	}
	if (sqlite3_prepare_v2(st->db, "SELECT sweep, replica FROM cells WHERE id = ?1", -1, &s, NULL))
		return flight_err(st);
	sqlite3_bind_int64(s, 1, cell);
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		store_flight_note(st, cell, (const char *)sqlite3_column_text(s, 0),
				  (const char *)sqlite3_column_text(s, 1));
	sqlite3_finalize(s);
	if (rc != SQLITE_ROW)
		return rc == SQLITE_DONE ? error("no cell %" PRId64 " in '%s'", cell, st->path) : flight_err(st);
	*pair = f->cells[flight_slot(f, cell)].pair;
	return 0;
}

int store_flight_move(struct store *st, int64_t cell, enum count_state from, enum count_state to, int done)
{
	int pair = 0;

	if (!st->flight.on)
		return 0;
	if (flight_find(st, cell, &pair))
		return -1;
	st->flight.pairs[pair].delta[from]--;
	st->flight.pairs[pair].delta[to]++;
	if (done)
		flight_take(&st->flight, cell);
	/* A statement of its own (no transaction) is committed already: so are its counts. */
	return st->in_tx ? 0 : store_flight_flush(st);
}

void store_flight_count(struct store *st, const char *sweep, const char *replica, enum count_state from,
			enum count_state to, int64_t n)
{
	int pair;

	if (!st->flight.on)
		return;
	pair = flight_pair(&st->flight, sweep, replica);
	st->flight.pairs[pair].delta[from] -= n;
	st->flight.pairs[pair].delta[to] += n;
}

int store_flight_each(struct store *st, int (*fn)(struct store *, int64_t, void *), void *data)
{
	struct store_flight *f = &st->flight;
	int64_t *ids;
	size_t n = 0;
	int ret = 0;

	/* fn may take cells out: the ids are copied first. */
	ids = xcalloc(f->n + 1, sizeof(*ids));
	for (size_t i = 0; i < f->cap; i++)
		if (f->cells[i].id)
			ids[n++] = f->cells[i].id;
	for (size_t i = 0; i < n && !ret; i++)
		ret = fn(st, ids[i], data);
	free(ids);
	return ret;
}

int store_flight_flush(struct store *st)
{
	static const char sql[] = "UPDATE cell_counts SET planned = planned + ?3, running = running + ?4,"
		" ok = ok + ?5, quarantined = quarantined + ?6 WHERE sweep = ?1 AND replica = ?2";
	struct store_flight *f = &st->flight;
	sqlite3_stmt *s = NULL;
	int ret = 0;

	for (size_t i = 0; i < f->npairs && !ret; i++) {
		struct flight_pair *p = &f->pairs[i];

		if (!p->delta[0] && !p->delta[1] && !p->delta[2] && !p->delta[3])
			continue;
		if (!s && sqlite3_prepare_v2(st->db, sql, -1, &s, NULL))
			return flight_err(st);
		sqlite3_bind_text(s, 1, p->sweep, -1, SQLITE_STATIC);
		sqlite3_bind_text(s, 2, p->replica, -1, SQLITE_STATIC);
		for (int k = 0; k < 4; k++)
			sqlite3_bind_int64(s, 3 + k, p->delta[k]);
		if (sqlite3_step(s) != SQLITE_DONE)
			ret = flight_err(st);
		sqlite3_reset(s);
		memset(p->delta, 0, sizeof(p->delta));
	}
	sqlite3_finalize(s);
	return ret;
}

void store_flight_drop(struct store *st)
{
	for (size_t i = 0; i < st->flight.npairs; i++)
		memset(st->flight.pairs[i].delta, 0, sizeof(st->flight.pairs[i].delta));
	st->flight.unsure = st->flight.on;
}

void store_flight_release(struct store_flight *f)
{
	for (size_t i = 0; i < f->npairs; i++) {
		free(f->pairs[i].sweep);
		free(f->pairs[i].replica);
	}
	free(f->pairs);
	free(f->cells);
	memset(f, 0, sizeof(*f));
}
