/* test_plan_db.c: what a run's start reads instead of every cell: cell_counts kept by triggers, the figures
 * of a planned grid (a plan of the same spec is not expanded again), recovery through the index of cells
 * in flight, and starts stopped by an interrupt with the database as it was. */
#include <inttypes.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include "interrupt.h"
#include "plan.h"
#include "plan_db.h"
#include "store.h"
#include "test.h"
#include "util.h"

static char dir[256];

static int text_cb(const struct store_row *row, void *data)
{
	struct strbuf *sb = data;

	for (int i = 0; i < row->ncol; i++)
		sb_addf(sb, "%s%s", i ? "|" : sb->len ? ";" : "", row->text[i] ? row->text[i] : "NULL");
	return 0;
}

/* Every row of sql, columns joined by |, rows by ; ("error" when it fails). The caller frees it. */
static char *rows(struct store *st, const char *sql)
{
	struct strbuf sb = STRBUF_INIT;

	if (store_query(st, sql, NULL, 0, 0, text_cb, &sb) < 0) {
		sb_release(&sb);
		return xstrdup("error");
	}
	return sb_detach(&sb);
}

static long long num(struct store *st, const char *sql)
{
	char *s = rows(st, sql);
	long long v = strtoll(s, NULL, 10);

	free(s);
	return v;
}

/* cell_counts says what counting the cells says, row for row (rows of nothing but zeros aside). */
static void check_counts(struct store *st, const char *when)
{
	char *kept = rows(st, "SELECT sweep, replica, planned, running, ok, quarantined, template, retired"
			  " FROM cell_counts WHERE planned + running + ok + quarantined + template + retired > 0"
			  " ORDER BY sweep, replica");
	char *counted = rows(st, "SELECT sweep, replica, count(*) FILTER (WHERE state = 'planned'),"
			     " count(*) FILTER (WHERE state = 'running'), count(*) FILTER (WHERE state = 'ok'),"
			     " count(*) FILTER (WHERE state = 'quarantined'), count(*) FILTER (WHERE state = 'template'),"
			     " count(*) FILTER (WHERE state = 'retired') FROM cells GROUP BY sweep, replica"
			     " ORDER BY sweep, replica");

	CHECK(!strcmp(kept, counted), "cell_counts %s: kept '%s', counted '%s'", when, kept, counted);
	free(kept);
	free(counted);
}

static int add(struct store *st, const char *sweep, const char *key, uint64_t ord, const char *state)
{
	char params[64];
	int added;

	snprintf(params, sizeof(params), "{\"k\":\"%s\"}", key);
	return store_add_cell(st, sweep, key, params, 0, "", ord, state, &added);
}

static int noop_cb(const struct task *t, void *data)
{
	return 0;
}

/* A result stored as a run's dispatch stores it: triggers off, the store counts. */
static void put(struct store *st, int64_t run, const char *key, enum result_status status)
{
	struct result r;
	char *sql = xasprintf("SELECT id FROM cells WHERE key = '%s'", key);

	result_init(&r);
	r.cell = num(st, sql);
	r.worker = 0;
	r.status = status;
	if (status != RESULT_OK)
		result_fail(&r, status, "failed on purpose");
	else
		result_add_sample(&r, 1.0, NAN);
	CHECK_INT(store_mark_running(st, r.cell), 0, "mark");
	CHECK_INT(store_put_result(st, run, &r, 2, NULL, NULL), 0, "result");
	result_release(&r);
	free(sql);
}

/* Dispatch mode (store_dispatching): the triggers are off, and the counts stay those of the cells. */
static void test_dispatch_counts(struct store *st)
{
	int64_t run, host;

	for (int i = 0; i < 4; i++) {
		char k[16];

		snprintf(k, sizeof(k), "u%d", i);
		CHECK_INT(add(st, "u", k, (uint64_t)i, "planned"), 0, "add");
	}
	CHECK_INT(store_run_begin(st, "test", "s", 0, &run), 0, "run");
	CHECK_INT(store_put_host(st, "{\"hostname\":\"h\"}", &host), 0, "host");
	CHECK_INT(store_put_worker(st, run, 0, host, -1, NULL, "", NULL), 0, "worker");
	CHECK_INT(store_dispatching(st, 1), 0, "dispatch mode");
	CHECK_INT(store_begin(st), 0, "begin");
	put(st, run, "k2", RESULT_OK);
	put(st, run, "k3", RESULT_ERROR);
	put(st, run, "k3", RESULT_ERROR);
	put(st, run, "k9", RESULT_ERROR);
	CHECK_INT(store_commit(st), 0, "commit");
	CHECK_INT(num(st, "SELECT count(*) FROM cells WHERE state = 'quarantined'"), 1, "k3 quarantined");
	CHECK_INT(num(st, "SELECT count(*) FROM cells WHERE key IN ('k2', 'k5') AND state = 'ok'"), 2, "k2 ok");
	CHECK_INT(store_mark_running(st, num(st, "SELECT id FROM cells WHERE key = 'k9'")), 0, "k9 running");
	check_counts(st, "after results in dispatch mode");
	/* A hand-back reads the cells loaded (a window notes them), or every cell after a rollback. */
	{
		struct store_cursor cur = STORE_CURSOR_INIT;
		int got;
		uint64_t n;

		CHECK_INT(store_pending(st, "u", "", &cur, 100, noop_cb, NULL, &got), 0, "a window");
		CHECK_INT(got, 4, "four pending cells loaded");
		CHECK_INT(store_begin(st), 0, "begin");
		CHECK_INT(store_mark_running(st, num(st, "SELECT id FROM cells WHERE key = 'u0'")), 0, "u0 running");
		CHECK_INT(store_mark_sent(st, num(st, "SELECT id FROM cells WHERE key = 'u1'")), 0, "u1 sent");
		CHECK_INT(store_commit(st), 0, "commit");
		CHECK_INT(store_begin(st), 0, "begin");
		CHECK_INT(store_unfly(st, "u", &n), 0, "hand back the cells loaded");
		CHECK_INT((long long)n, 2, "u0 and u1");
		CHECK_INT(store_commit(st), 0, "commit");
		check_counts(st, "after a hand-back of the cells loaded");
		CHECK_INT(store_begin(st), 0, "begin");
		CHECK_INT(store_mark_running(st, num(st, "SELECT id FROM cells WHERE key = 'u2'")), 0, "u2 running");
		CHECK_INT(store_commit(st), 0, "commit");
		CHECK_INT(store_begin(st), 0, "begin");
		CHECK_INT(store_mark_running(st, num(st, "SELECT id FROM cells WHERE key = 'u3'")), 0, "u3 running");
		store_rollback(st);
		CHECK_INT(store_begin(st), 0, "begin");
		CHECK_INT(store_unfly(st, "u", &n), 0, "hand back after a rollback: every cell");
		CHECK_INT((long long)n, 1, "u2");
		CHECK_INT(store_commit(st), 0, "commit");
		CHECK_INT(num(st, "SELECT count(*) FROM cells WHERE sweep = 'u' AND (state <> 'planned' OR flight <> 0"
			      " OR attempts <> 0)"), 0, "u's cells as they were");
		check_counts(st, "after a hand-back of every cell");
	}
	CHECK_INT(store_dispatching(st, 0), 0, "dispatch mode off");
	CHECK_INT(store_query(st, "UPDATE cells SET state = 'retired' WHERE key = 'k2'", NULL, 0, 0, NULL, NULL),
		  0, "triggers on again");
	check_counts(st, "after dispatch mode");
}

/* The triggers count every insert, update and delete, bulk planning included (which drops the insert
 * trigger and counts what it added itself), and a rollback takes the counts back with the cells. */
static void test_counts(void)
{
	char *path = xasprintf("%s/counts.db", dir);
	struct store *st;
	struct store_counts c;
	uint64_t n;
	int failed = 0;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_begin(st), 0, "begin");
	for (int i = 0; i < 3000; i++) {
		char k[32];

		snprintf(k, sizeof(k), "a%d", i % 2500);   /* repeats end bulk mode on the way */
		failed += add(st, i < 2000 ? "s" : "t", k, (uint64_t)i, i % 7 ? "planned" : "template");
	}
	CHECK_INT(failed, 0, "bulk adds");
	CHECK_INT(num(st, "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'"), 4,
		  "the insert trigger is back once bulk mode ends");
	CHECK_INT(store_commit(st), 0, "commit");
	check_counts(st, "after a bulk plan");
	CHECK_INT(store_cell_counts(st, "s", NULL, &c), 0, "counts of s");
	CHECK_INT((long long)(c.planned + c.template), 2000, "s: every cell, by state");
	CHECK_INT((long long)c.template, 286, "s: its templates");

	/* A bulk transaction rolled back: no cells, no counts, the trigger in place. */
	store_close(st);
	store_remove_files(path);
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "reopen");
	CHECK_INT(store_begin(st), 0, "begin");
	CHECK_INT(add(st, "s", "x", 0, "planned"), 0, "bulk add");
	store_rollback(st);
	CHECK_INT(num(st, "SELECT count(*) FROM cell_counts"), 0, "no counts after the rollback");
	CHECK_INT(num(st, "SELECT count(*) FROM sqlite_master WHERE name = 'cells_count_insert'"), 1,
		  "trigger kept");

	/* The lifecycle, one step at a time. */
	CHECK_INT(store_begin(st), 0, "begin");
	for (int i = 0; i < 6; i++) {
		char k[16];

		snprintf(k, sizeof(k), "k%d", i);
		failed += add(st, "s", k, (uint64_t)i, i < 2 ? "template" : "planned");
	}
	CHECK_INT(store_commit(st), 0, "commit");
	CHECK_INT(add(st, "s", "k9", 9, "planned"), 0, "one more, outside bulk mode");
	check_counts(st, "after planning");
	CHECK_INT(store_replicate(st, "s", "h1", &failed), 0, "replicate");
	check_counts(st, "after replicas");
	CHECK_INT(store_mark_running(st, num(st, "SELECT id FROM cells WHERE key = 'k2'")), 0, "k2 running");
	CHECK_INT(store_mark_sent(st, num(st, "SELECT id FROM cells WHERE key = 'k3'")), 0, "k3 sent");
	check_counts(st, "after marks");
	CHECK_INT(store_unfly(st, "s", &n), 0, "unfly");
	CHECK_INT((long long)n, 2, "both handed back, through the index of cells in flight");
	check_counts(st, "after unfly");
	CHECK_INT(store_query(st, "UPDATE cells SET state = 'ok' WHERE key IN ('k4', 'k5')", NULL, 0, 0, NULL,
			      NULL), 0, "states by hand");
	CHECK_INT(store_query(st, "UPDATE cells SET state = 'quarantined' WHERE key = 'k9'", NULL, 0, 0, NULL,
			      NULL), 0, "and another");
	CHECK_INT(store_query(st, "DELETE FROM cells WHERE key = 'k4'", NULL, 0, 0, NULL, NULL), 0, "delete");
	CHECK_INT(store_query(st, "UPDATE cells SET replica = 'h2', sweep = 't' WHERE key = 'k5'", NULL, 0, 0,
			      NULL, NULL), 0, "a cell moved to another sweep and replica");
	check_counts(st, "after edits");
	CHECK_INT(store_begin(st), 0, "begin");
	CHECK_INT(store_retry(st, "s", RETRY_QUARANTINED, NULL, NULL, 0, &n), 0, "retry");
	CHECK_INT(store_force(st, "s", NULL, NULL, 0, &n, &n), 0, "force");
	CHECK_INT(store_commit(st), 0, "commit");
	check_counts(st, "after retry and force");
	CHECK_INT(store_cell_counts(st, "s", "h1", &c), 0, "counts of one replica");
	CHECK_INT((long long)c.planned, 2, "h1: its two replicas");
	test_dispatch_counts(st);
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* Cells a dead job left in flight are read only when the sweep's latest run died: one that ended (done,
 * or interrupted: it hands its cells back) leaves none. */
static void test_recover(void)
{
	char *path = xasprintf("%s/recover.db", dir);
	struct store *st;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	for (int i = 0; i < 4; i++) {
		char k[16];

		snprintf(k, sizeof(k), "r%d", i);
		CHECK_INT(add(st, "s", k, (uint64_t)i, "planned"), 0, "add");
	}
	CHECK_INT(store_mark_running(st, num(st, "SELECT id FROM cells WHERE key = 'r0'")), 0, "r0 running");
	CHECK_INT(store_mark_sent(st, num(st, "SELECT id FROM cells WHERE key = 'r1'")), 0, "r1 sent");
	CHECK_INT(store_query(st, "UPDATE cells SET state = 'running', attempts = 1 WHERE key = 'r2'", NULL, 0, 0,
			      NULL, NULL), 0, "r2 running by hand, flight 0");
	CHECK_INT(store_query(st, "INSERT INTO runs(sweep, started, finished, status) VALUES('s', 'x', 'y', 'ok')",
			      NULL, 0, 0, NULL, NULL), 0, "the sweep's latest run ended");
	CHECK_INT(store_recover(st, "s", 3), 0, "recover");
	CHECK_INT(num(st, "SELECT count(*) FROM cells WHERE state = 'running' OR flight = 1"), 3, "nothing read");
	CHECK_INT(store_query(st, "INSERT INTO runs(sweep, started, status) VALUES('s', 'x', 'killed')", NULL, 0,
			      0, NULL, NULL), 0, "the sweep's latest run died");
	CHECK_INT(store_recover(st, "s", 3), 0, "recover after a run that died");
	check_counts(st, "after recover");
	{
		char *got = rows(st, "SELECT key, state, attempts, flight FROM cells ORDER BY key");

		CHECK_STR(got, "r0|planned|1|2;r1|planned|0|2;r2|planned|1|2;r3|planned|0|0",
			  "suspects: running and sent ones, the one left running by hand too");
		free(got);
	}
	CHECK_INT(store_recover(st, "s", 3), 0, "recover again: nothing in flight");
	CHECK_INT(num(st, "SELECT count(*) FROM cells WHERE flight = 2"), 3, "suspects stay suspects");
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* A statement of an interruptible store stops at an interrupt, failing without a word; off, it runs. */
static void test_interruptible(void)
{
	static const char sql[] = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n"
		" WHERE i < 3000000) SELECT count(*) FROM n";
	char *path = xasprintf("%s/intr.db", dir), *msg;
	struct store *st;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	interrupt_catch();
	CHECK_INT(interrupt_signal(), 0, "no interrupt yet");
	raise(SIGINT);
	CHECK_INT(interrupt_signal(), SIGINT, "SIGINT caught, the process alive");
	store_interruptible(st, 1);
	test_capture_start();
	CHECK_INT(store_query(st, sql, NULL, 0, 1, NULL, NULL), -1, "stopped");
	msg = test_capture_end();
	CHECK_STR(msg, "", "nothing said");
	free(msg);
	store_interruptible(st, 0);
	CHECK_INT(store_query(st, sql, NULL, 0, 1, NULL, NULL), 0, "runs when not interruptible");
	interrupt_release();
	store_close(st);
	store_remove_files(path);
	free(path);
}

static int parse(const char *text, struct spec *s)
{
	return spec_parse("t.yaml", text, strlen(text), s);
}

/* The order-free sums of the keys of sweep's cells with replica "", as store_grid keeps them. */
static void sums_of_cells(struct store *st, const char *sweep, struct store_grid *g)
{
	char *sql = xasprintf("SELECT group_concat(key, ' ') FROM cells WHERE sweep = '%s' AND replica = ''"
			      " AND state <> 'retired'", sweep);
	char *keys = rows(st, sql), *p = keys;

	memset(g, 0, sizeof(*g));
	while (*p) {
		char *end;
		uint64_t k = strtoull(p, &end, 16);

		g->cells++;
		g->sum += k;
		g->mix ^= hash64(HASH64_INIT, &k, sizeof(k));
		p = *end ? end + 1 : end;
	}
	free(keys);
	free(sql);
}

static const char grid_a[] = "sweep: g\nkernel: debug.fail\nparams:\n  mode: ok\n  i: [1, 2, 3]\n"
	"  ms: [0, 0.5]\norder: shuffle\n";
/* The same cells: the axes in another order, a comment. */
static const char grid_b[] = "sweep: g\nkernel: debug.fail\n# the same cells\nparams:\n  ms: [0, 0.5]\n"
	"  i: [3, 2, 1]\n  mode: ok\norder: shuffle\n";
/* Grown by a value. */
static const char grid_c[] = "sweep: g\nkernel: debug.fail\nparams:\n  mode: ok\n  i: [1, 2, 3, 4]\n"
	"  ms: [0, 0.5]\norder: shuffle\n";

/*
 * A plan keeps its grid's figures; planning the same spec again (or one with the same cells) expands
 * nothing: cells deleted by hand in between are not made again, which expanding would. A grid that
 * grew, a plan of one shard followed by a plan of all, and figures of another spec than the stored one
 * are expanded (and the figures kept anew).
 */
static void test_plan_same(void)
{
	char *path = xasprintf("%s/plan.db", dir);
	struct plan_db_opts one = { 1, 2, 0, 0, NULL }, all = { 0, 0, 0, 0, NULL };
	struct store_grid g, want;
	struct store *st;
	struct spec a, b, c;
	uint64_t added, existing;
	int found;

	CHECK_INT(parse(grid_a, &a) || parse(grid_b, &b) || parse(grid_c, &c), 0, "specs parse");
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(plan_db_with(&a, st, &all, &added, &existing), 0, "plan a");
	CHECK_INT((long long)added, 6, "six cells");
	CHECK_INT(store_grid_get(st, "g", &g, &found), 0, "figures");
	CHECK(found, "kept");
	sums_of_cells(st, "g", &want);
	CHECK(g.cells == 6 && g.sum == want.sum && g.mix == want.mix,
	      "the figures are those of the cells' keys: %" PRIu64 " %" PRIx64 " %" PRIx64, g.cells, g.sum, g.mix);
	CHECK_STR(g.shard, "", "every shard planned");
	check_counts(st, "after a plan");

	CHECK_INT(store_query(st, "DELETE FROM cells WHERE id IN (SELECT id FROM cells LIMIT 2)", NULL, 0, 0,
			      NULL, NULL), 0, "two cells deleted by hand");
	CHECK_INT(plan_db_with(&a, st, &all, &added, &existing), 0, "plan a again");
	CHECK_INT((long long)added, 0, "nothing new");
	CHECK_INT((long long)existing, 4, "the cells there");
	CHECK_INT(num(st, "SELECT count(*) FROM cells"), 4, "the grid was not expanded again");
	CHECK_INT(plan_db_with(&b, st, &all, &added, &existing), 0, "plan b: the same cells");
	CHECK_INT(num(st, "SELECT count(*) FROM cells"), 4, "not expanded either");
	CHECK_INT(store_grid_get(st, "g", &g, &found), 0, "figures");
	CHECK(found && g.sum == want.sum && g.cells == 6, "kept for b's text");

	/* Figures of another text than the sweep's: of no use. */
	CHECK_INT(store_query(st, "UPDATE grids SET hash = '0000000000000000'", NULL, 0, 0, NULL, NULL), 0,
		  "stale figures");
	CHECK_INT(store_grid_get(st, "g", &g, &found), 0, "figures");
	CHECK(!found, "not found");
	CHECK_INT(plan_db_with(&b, st, &all, &added, &existing), 0, "plan b without figures");
	CHECK_INT((long long)added, 2, "expanded: the deleted cells are made again");
	CHECK_INT(plan_db_with(&c, st, &all, &added, &existing), 0, "plan c: grown");
	CHECK_INT((long long)added, 2, "two new cells");
	CHECK_INT(store_grid_get(st, "g", &g, &found), 0, "figures");
	sums_of_cells(st, "g", &want);
	CHECK(found && g.cells == 8 && g.sum == want.sum && g.mix == want.mix, "c's figures kept");
	check_counts(st, "after plans");
	store_close(st);
	store_remove_files(path);

	/* One shard, then every shard. */
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(plan_db_with(&a, st, &one, &added, &existing), 0, "plan shard 1/2");
	CHECK_INT(store_grid_get(st, "g", &g, &found), 0, "figures");
	CHECK(found && g.cells == 6, "the whole grid's figures");
	CHECK_STR(g.shard, "1/2", "one shard planned");
	CHECK_INT(plan_db_with(&a, st, &one, &added, &existing), 0, "the same shard again");
	CHECK_INT((long long)added, 0, "nothing new");
	CHECK_INT(plan_db_with(&a, st, &all, &added, &existing), 0, "every shard");
	CHECK_INT((long long)(added + existing), 6, "the other shard's cells added");
	CHECK(added > 0 && existing > 0, "both shards had cells: %" PRIu64 " + %" PRIu64, added, existing);
	CHECK_INT(num(st, "SELECT count(*) FROM cells"), 6, "all six");
	CHECK_INT(store_grid_get(st, "g", &g, &found), 0, "figures");
	CHECK_STR(g.shard, "", "every shard planned now");
	store_close(st);
	store_remove_files(path);
	spec_release(&a);
	spec_release(&b);
	spec_release(&c);
	free(path);
}

/* An interrupt stops a plan: nothing written, whatever the step. */
static void test_plan_interrupted(void)
{
	char *path = xasprintf("%s/intr-plan.db", dir);
	struct plan_db_opts all = { 0, 0, 0, 0, NULL };
	struct store *st;
	struct spec a, c;
	uint64_t added, existing;

	CHECK_INT(parse(grid_a, &a) || parse(grid_c, &c), 0, "specs parse");
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	interrupt_catch();
	raise(SIGTERM);
	CHECK_INT(plan_db_with(&a, st, &all, &added, &existing), -1, "a fresh plan stops");
	CHECK_INT(num(st, "SELECT count(*) FROM cells") + num(st, "SELECT count(*) FROM sweeps") +
		  num(st, "SELECT count(*) FROM grids") + num(st, "SELECT count(*) FROM cell_counts"), 0,
		  "nothing written");
	interrupt_release();
	CHECK_INT(plan_db_with(&a, st, &all, &added, &existing), 0, "planned without an interrupt");
	interrupt_catch();
	raise(SIGINT);
	CHECK_INT(plan_db_with(&c, st, &all, &added, &existing), -1, "a grown grid's plan stops");
	CHECK_INT(num(st, "SELECT count(*) FROM cells"), 6, "the cells as they were");
	CHECK_INT(num(st, "SELECT cells FROM grids"), 6, "the figures as they were");
	interrupt_release();
	store_close(st);
	store_remove_files(path);
	spec_release(&a);
	spec_release(&c);
	free(path);
}

/* The first plan of a database goes through a rollback journal (its pages are new: written once), and
 * the database is in WAL again after it, committed or rolled back; a later plan, or one with a reader
 * open, stays in WAL. */
static void test_first_plan(void)
{
	char *path = xasprintf("%s/first.db", dir), *mode;
	struct store *st, *reader;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_begin_plan(st, 3000), 0, "begin a first plan");
	mode = rows(st, "PRAGMA journal_mode");
	CHECK_STR(mode, "delete", "a rollback journal meanwhile");
	free(mode);
	for (int i = 0; i < 3000; i++) {
		char k[16];

		snprintf(k, sizeof(k), "f%d", i);
		if (add(st, "s", k, (uint64_t)i, "planned"))
			CHECK(0, "add %s", k);
	}
	store_rollback(st);
	mode = rows(st, "PRAGMA journal_mode");
	CHECK_STR(mode, "wal", "WAL after a rollback");
	free(mode);
	CHECK_INT(num(st, "SELECT count(*) FROM cells"), 0, "nothing left");
	CHECK_INT(store_begin_plan(st, 10), 0, "begin again");
	CHECK_INT(add(st, "s", "f0", 0, "planned"), 0, "add");
	CHECK_INT(store_commit(st), 0, "commit");
	mode = rows(st, "PRAGMA journal_mode");
	CHECK_STR(mode, "wal", "WAL after a commit");
	free(mode);
	CHECK_INT(store_begin_plan(st, 10), 0, "a plan of a database with cells");
	mode = rows(st, "PRAGMA journal_mode");
	CHECK_STR(mode, "wal", "stays in WAL");
	free(mode);
	store_rollback(st);
	CHECK_INT(store_query(st, "DELETE FROM cells", NULL, 0, 0, NULL, NULL), 0, "empty again");
	CHECK_INT(store_open(path, STORE_RO, &reader), 0, "a reader");
	CHECK_INT(num(reader, "SELECT count(*) FROM cells"), 0, "it reads");
	CHECK_INT(store_begin_plan(st, 10), 0, "a first plan with a reader open");
	mode = rows(st, "PRAGMA journal_mode");
	CHECK_STR(mode, "wal", "the reader keeps WAL");
	free(mode);
	CHECK_INT(add(st, "s", "f1", 1, "planned"), 0, "add");
	CHECK_INT(num(reader, "SELECT count(*) FROM cells"), 0, "the reader reads meanwhile");
	CHECK_INT(store_commit(st), 0, "commit");
	check_counts(st, "after first plans");
	store_close(reader);
	store_close(st);
	store_remove_files(path);
	free(path);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_plan_db.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_counts();
	test_recover();
	test_interruptible();
	test_plan_same();
	test_plan_interrupted();
	test_first_plan();
	rmdir(dir);
	return test_done();
}
