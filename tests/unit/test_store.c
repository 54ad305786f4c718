/* test_store.c: the results database on temporary files: schema, cell lifecycle, results, SQL functions. */
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>
#include "exitcode.h"
#include "test.h"
#include "plan.h"
#include "stats.h"
#include "store.h"
#include "util.h"

static char dir[256];

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}


static int first_cb(const struct store_row *row, void *data)
{
	char **out = data;

	*out = xstrdup(row->ncol && row->text[0] ? row->text[0] : "NULL");
	return 1;
}

/* The first column of the first row as text ("NULL" for NULL, "none" when no row, "error" on error).
 * The caller frees it. */
static char *q1(struct store *st, const char *sql)
{
	char *out = NULL;

	if (store_query(st, sql, NULL, 0, 0, first_cb, &out) < 0) {
		free(out);
		return xstrdup("error");
	}
	return out ? out : xstrdup("none");
}

static long long q1_int(struct store *st, const char *sql)
{
	char *s = q1(st, sql);
	long long v = strtoll(s, NULL, 10);

	free(s);
	return v;
}

static int num_cb(const struct store_row *row, void *data)
{
	*(double *)data = row->num[0];
	return 1;
}

/* The first column of the first row as a number (NaN for NULL, text, no row or an error). */
static double q1_num(struct store *st, const char *sql)
{
	double v = NAN;

	store_query(st, sql, NULL, 0, 0, num_cb, &v);
	return v;
}

static void check_q1(struct store *st, const char *sql, const char *want)
{
	char *got = q1(st, sql);

	CHECK_STR(got, want, sql);
	free(got);
}

static void write_file(const char *path, const char *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	fwrite(data, 1, n, f);
	fclose(f);
}

/* The kinds store_open gives where the database cannot be used, each decided where it happens. */
static void test_open_kinds(void)
{
	char *path = tmp_path("kinds.db"), *dir = tmp_path("kinds-dir"), *deep = tmp_path("no-dir/x.db"), *msg, *wal;
	struct store *st = NULL;
	char page[512];
	FILE *f;

	/* A writer makes a missing file, not a missing folder; a folder is not a database. */
	test_capture_start();
	CHECK_INT(store_open(deep, STORE_RW, &st), FAIL_MISSING, "rw in a missing folder");
	CHECK_INT(store_open(deep, STORE_RO, &st), FAIL_MISSING, "ro in a missing folder");
	CHECK(mkdir(dir, 0755) == 0, "a folder");
	CHECK_INT(store_open(dir, STORE_RW, &st), FAIL_NOT_SWEEP, "rw of a folder");
	msg = test_capture_end();
	CHECK(strstr(msg, "Is a directory") != NULL, "a folder's message: %s", msg);
	free(msg);
	rmdir(dir);
	/* A sweep database whose schema page is overwritten: SQLite finds it damaged (SQLITE_CORRUPT). */
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "a database");
	store_close(st);
	wal = xasprintf("%s-wal", path);
	CHECK(access(wal, F_OK) != 0, "the last close left no -wal beside it: all is in the file");
	free(wal);
	memset(page, 0x5a, sizeof(page));
	f = fopen(path, "r+b");
	CHECK(f && fseek(f, 100, SEEK_SET) == 0 && fwrite(page, 1, sizeof(page), f) == sizeof(page), "page 1 hit");
	if (f)
		fclose(f);
	test_capture_start();
	CHECK_INT(store_open(path, STORE_RO, &st), FAIL_CORRUPT, "ro damaged: corrupt");
	CHECK_INT(store_open(path, STORE_RW, &st), FAIL_CORRUPT, "rw damaged: corrupt");
	msg = test_capture_end();
	CHECK(strstr(msg, "malformed") != NULL, "damaged message: %s", msg);
	free(msg);
	store_remove_files(path);
	free(path);
	free(dir);
	free(deep);
}

static void test_open(void)
{
	char *path = tmp_path("open.db"), *want, *msg;
	struct store *st = NULL;
	int64_t ver = store_schema_version();

	CHECK(ver >= 1, "schema version %" PRId64, ver);
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "create");
	CHECK_INT(q1_int(st, "PRAGMA user_version"), ver, "user_version after create");
	check_q1(st, "PRAGMA journal_mode", "wal");
	check_q1(st, "PRAGMA foreign_keys", "1");
	check_q1(st, "PRAGMA synchronous", "2");   /* FULL: a commit is on the disk (a power cut keeps it) */
	check_q1(st, "PRAGMA busy_timeout", "10000");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM sqlite_master WHERE name IN ('sweeps', 'runs', "
			 "'hosts', 'workers', 'cells', 'results', 'samples', 'metrics', 'items', 'controls', "
			 "'probes', 'predictions', 'v_results', 'results_one_ok', 'cells_key')"), 15,
		  "tables, view and indexes");
	/* Every migration ran on a schema it had read again: version 3 edits results' text, and a later
	 * ALTER TABLE ADD COLUMN wrote into it at the old text's offsets before the cookie was bumped after
	 * each script (the column names came out cut and spliced). */
	check_q1(st, "SELECT group_concat(name, ' ') FROM pragma_table_info('results')",
		 "id cell run worker status attempt started wall n median mean min max stdev q1 q3 noise noise_ok "
		 "throttled sm_clock error stdout stderr stop launches warmup cpu_user cpu_sys peak_rss ci_lo ci_hi precise "
		 "settled note");
	check_q1(st, "SELECT group_concat(name, ' ') FROM pragma_table_info('v_results') WHERE cid >= 30",
		 "cpu_user cpu_sys peak_rss ci_lo ci_hi precise settled joules watts lock_sm lock_mem locked_sm "
		 "locked_mem note");
	check_q1(st, "PRAGMA integrity_check", "ok");
	store_close(st);
	store_close(NULL);

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "reopen rw");
	CHECK_INT(q1_int(st, "PRAGMA user_version"), ver, "user_version after reopen");
	store_close(st);
	CHECK_INT(store_open(path, STORE_RO, &st), 0, "reopen ro");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells"), 0, "ro reads");
	/* A write through a read-only connection fails even when the caller allows writes. */
	test_capture_start();
	CHECK_INT(store_query(st, "INSERT INTO runs(started) VALUES('x')", NULL, 0, 0, NULL, NULL), -1,
		  "write on ro store");
	msg = test_capture_end();
	CHECK(strstr(msg, "sql error: ") && strstr(msg, "readonly"), "ro write message: %s", msg);
	free(msg);
	store_close(st);

	/* A missing file. */
	store_remove_files(path);
	free(path);
	path = tmp_path("missing.db");
	test_capture_start();
	CHECK_INT(store_open(path, STORE_RO, &st), FAIL_MISSING, "ro missing file: its kind");
	msg = test_capture_end();
	CHECK(st == NULL, "no store on failure");
	CHECK(strstr(msg, path) && strstr(msg, "No such file"), "missing message: %s", msg);
	CHECK(access(path, F_OK) != 0, "ro open did not create the file");
	free(msg);

	/* Garbage bytes: neither mode accepts them, and RW does not overwrite them. */
	free(path);
	path = tmp_path("garbage.db");
	{
		char junk[4096];

		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = "not a database\n"[i % 15];
		write_file(path, junk, sizeof(junk));
	}
	test_capture_start();
	CHECK_INT(store_open(path, STORE_RO, &st), FAIL_NOT_SWEEP, "ro garbage: not a sweep database");
	CHECK_INT(store_open(path, STORE_RW, &st), FAIL_NOT_SWEEP, "rw garbage: not a sweep database");
	msg = test_capture_end();
	want = xasprintf("cannot open '%s': file is not a database", path);
	CHECK(strstr(msg, want) != NULL, "garbage message: %s", msg);
	free(want);
	free(msg);
	store_remove_files(path);

	/* An empty file is an empty SQLite database: RO refuses it, RW makes it a sweep database. */
	free(path);
	path = tmp_path("empty.db");
	write_file(path, "", 0);
	test_capture_start();
	CHECK_INT(store_open(path, STORE_RO, &st), FAIL_NOT_SWEEP, "ro empty file");
	msg = test_capture_end();
	want = xasprintf("'%s' is not a sweep database", path);
	CHECK(strstr(msg, want) != NULL, "empty message: %s", msg);
	free(want);
	free(msg);
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "rw empty file");
	/* Now make it a non-sweep SQLite database: tables but user_version 0. */
	CHECK_INT(store_query(st, "PRAGMA user_version = 0", NULL, 0, 0, NULL, NULL), 0,
		  "reset user_version");
	store_close(st);
	test_capture_start();
	CHECK_INT(store_open(path, STORE_RO, &st), FAIL_NOT_SWEEP, "ro non-sweep sqlite");
	CHECK_INT(store_open(path, STORE_RW, &st), FAIL_NOT_SWEEP, "rw non-sweep sqlite");
	msg = test_capture_end();
	want = xasprintf("'%s' is not a sweep database", path);
	CHECK(strstr(msg, want) != NULL, "non-sweep ro message: %s", msg);
	free(want);
	want = xasprintf("'%s' is an SQLite database without a sweep schema", path);
	CHECK(strstr(msg, want) != NULL, "non-sweep rw message: %s", msg);
	free(want);
	free(msg);

	/* A newer schema than this build knows. */
	store_remove_files(path);
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "fresh");
	CHECK_INT(store_query(st, "PRAGMA user_version = 99", NULL, 0, 0, NULL, NULL), 0, "future version");
	store_close(st);
	test_capture_start();
	CHECK_INT(store_open(path, STORE_RW, &st), FAIL_NOT_SWEEP, "rw newer schema");
	CHECK_INT(store_open(path, STORE_RO, &st), FAIL_NOT_SWEEP, "ro newer schema");
	msg = test_capture_end();
	CHECK(strstr(msg, "schema version 99") != NULL, "newer message: %s", msg);
	free(msg);
	store_remove_files(path);
	free(path);
	test_open_kinds();
}

struct collect {
	struct strbuf keys;
	int n, stop_at;
	int isolate[8];
	int not_cells;         /* tasks with control set or no cell id */
};

static int collect_cb(const struct task *t, void *data)
{
	struct collect *c = data;

	if (c->n < 8)
		c->isolate[c->n] = t->isolate;
	sb_addf(&c->keys, "%s%s", c->keys.len ? "," : "", t->key);
	c->not_cells += t->control != 0 || t->cell <= 0;
	c->n++;
	return c->stop_at && c->n == c->stop_at ? 7 : 0;
}

/* Every pending cell of sweep's replica through store_pending, w at a time; its return value. */
static int each_pending(struct store *st, const char *sweep, const char *replica, int w, struct collect *c)
{
	struct store_cursor cur = STORE_CURSOR_INIT;
	int got, rc;

	do
		rc = store_pending(st, sweep, replica, &cur, w, collect_cb, c, &got);
	while (!rc && got == w);
	return rc;
}

static void test_cells(void)
{
	char *path = tmp_path("cells.db");
	struct store *st;
	struct collect c = { STRBUF_INIT, 0, 0, { 0 }, 0 };
	char key[17];
	int added, total = 0;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_begin(st), 0, "begin");
	/* Inserted out of ord order: pending must come back by ord. */
	CHECK_INT(store_add_cell(st, "s", "k2", "{\"n\":2}", 0, "", 2, "planned", &added), 0, "add k2");
	total += added;
	CHECK_INT(store_add_cell(st, "s", "k0", "{\"n\":0}", 0, "", 0, "planned", &added), 0, "add k0");
	total += added;
	CHECK_INT(store_add_cell(st, "s", "k1", "{\"n\":1}", 0, NULL, 1, "planned", &added), 0, "add k1");
	total += added;
	CHECK_INT(total, 3, "three new cells");
	CHECK_INT(store_add_cell(st, "s", "k1", "{\"n\":99}", 5, "x", 9, "planned", &added), 0,
		  "add k1 again");
	CHECK_INT(added, 0, "existing key not added");
	check_q1(st, "SELECT params || ord || state FROM cells WHERE key = 'k1'", "{\"n\":1}1planned");
	test_capture_start();
	CHECK_INT(store_add_cell(st, "s", "k9", "{}", 0, "", 9, "bogus", &added), -1, "bad state refused");
	free(test_capture_end());
	CHECK_INT(store_add_cell(st, "s", "t1", "{\"m\":1}", 1, "", 3, "template", &added), 0, "template 1");
	CHECK_INT(store_add_cell(st, "s", "t0", "{\"m\":\"a b\"}", 0, "", 4, "template", &added), 0,
		  "template 0");
	CHECK_INT(store_add_cell(st, "other", "o0", "{}", 0, "", 0, "planned", &added), 0, "other sweep");
	CHECK_INT(store_commit(st), 0, "commit");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells"), 6, "cell count");

	/* Replicas: one planned copy of each template per replica, keyed by plan_key. */
	CHECK_INT(store_replicate(st, "s", "hostA", &added), 0, "replicate A");
	CHECK_INT(added, 2, "two replicas for A");
	CHECK_INT(store_replicate(st, "s", "hostA", &added), 0, "replicate A again");
	CHECK_INT(added, 0, "replicate is idempotent");
	CHECK_INT(store_replicate(st, "s", "hostB", &added), 0, "replicate B");
	CHECK_INT(added, 2, "two replicas for B");
	plan_key("s", "{\"m\":1}", 1, "hostA", key);
	{
		const char *b[] = { key };
		char *got = NULL;

		CHECK_INT(store_query(st, "SELECT replica || '|' || pass || '|' || ord || '|' || state || "
				      "'|' || params FROM cells WHERE key = ?1", b, 1, 1, first_cb, &got), 1,
			  "query");
		CHECK_STR(got, "hostA|1|3|planned|{\"m\":1}", "replica row by plan_key");
		free(got);
	}
	plan_key("s", "{\"m\":\"a b\"}", 0, "hostB", key);
	{
		char *sql = xasprintf("SELECT count(*) FROM cells WHERE key = '%s' AND replica = 'hostB'",
				      key);

		CHECK_INT(q1_int(st, sql), 1, "second template replica");
		free(sql);
	}
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells WHERE state = 'template'"), 2, "templates stay");

	/* Pending: planned cells of sweep s by ord, then id, replica by replica (replicas share their
	 * template's ord), read in windows of two. */
	CHECK_INT(each_pending(st, "s", "", 2, &c), 0, "each pending");
	CHECK_INT(each_pending(st, "s", "hostA", 2, &c), 0, "each pending of hostA");
	CHECK_INT(each_pending(st, "s", "hostB", 2, &c), 0, "each pending of hostB");
	CHECK_INT(c.n, 7, "pending count");
	{
		char a0[17], b0[17], a1[17], b1[17];
		char *want;

		plan_key("s", "{\"m\":1}", 1, "hostA", a1);
		plan_key("s", "{\"m\":1}", 1, "hostB", b1);
		plan_key("s", "{\"m\":\"a b\"}", 0, "hostA", a0);
		plan_key("s", "{\"m\":\"a b\"}", 0, "hostB", b0);
		want = xasprintf("k0,k1,k2,%s,%s,%s,%s", a1, a0, b1, b0);
		CHECK_STR(c.keys.buf, want, "pending order");
		free(want);
	}
	CHECK_INT(c.isolate[0], 0, "no suspect before a recovery");
	CHECK_INT(c.not_cells, 0, "every task is a cell, not a control");
	sb_reset(&c.keys);
	c.n = 0;
	c.stop_at = 2;
	CHECK_INT(each_pending(st, "s", "", 5, &c), 7, "stop early returns fn's value");
	CHECK_INT(c.n, 2, "stopped after two");

	/* mark_running counts attempts; recover puts running cells back or quarantines them. */
	CHECK_INT(store_mark_running(st, q1_int(st, "SELECT id FROM cells WHERE key = 'k0'")), 0,
		  "mark k0");
	check_q1(st, "SELECT state || attempts FROM cells WHERE key = 'k0'", "running1");
	CHECK_INT(store_mark_running(st, q1_int(st, "SELECT id FROM cells WHERE key = 'k1'")), 0,
		  "mark k1");
	CHECK_INT(store_mark_running(st, q1_int(st, "SELECT id FROM cells WHERE key = 'k1'")), 0,
		  "mark k1 again");
	check_q1(st, "SELECT state || attempts FROM cells WHERE key = 'k1'", "running2");
	test_capture_start();
	CHECK_INT(store_mark_running(st, 999999), -1, "mark missing cell");
	free(test_capture_end());
	CHECK_INT(store_mark_running(st, q1_int(st, "SELECT id FROM cells WHERE key = 'o0'")), 0,
		  "mark other sweep");

	CHECK_INT(store_recover(st, "s", 2), 0, "recover: no run died");
	check_q1(st, "SELECT count(*) FROM cells WHERE state = 'running'", "3");
	CHECK_INT(store_query(st, "INSERT INTO runs(sweep, started, status) VALUES('s', 'x', 'killed')", NULL, 0, 0,
			      NULL, NULL), 0, "the sweep's latest run died");
	CHECK_INT(store_recover(st, "s", 2), 0, "recover");
	check_q1(st, "SELECT state || attempts || coalesce(error, '-') FROM cells WHERE key = 'k0'",
		 "planned1-");
	check_q1(st, "SELECT state || attempts || error FROM cells WHERE key = 'k1'",
		 "quarantined2worker died during the cell");
	check_q1(st, "SELECT state FROM cells WHERE key = 'o0'", "running");
	sb_reset(&c.keys);
	c.n = 0;
	c.stop_at = 0;
	CHECK_INT(each_pending(st, "s", "", 1, &c), 0, "pending after recover");
	CHECK_INT(c.n, 2, "k1 no longer pending");
	CHECK_STR(c.keys.buf, "k0,k2", "k0 then k2");
	CHECK_INT(c.isolate[0], 1, "k0, in flight when its job died, is a suspect");
	CHECK_INT(c.isolate[1], 0, "k2 was not in flight");
	sb_release(&c.keys);
	store_close(st);

	/* Paging: more pending cells than one page, inserted in a scrambled order. */
	store_remove_files(path);
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open paging");
	CHECK_INT(store_begin(st), 0, "begin");
	for (int i = 0; i < 1300; i++) {
		int ord = (i * 7919) % 1300;   /* 7919 is prime: a permutation of 0..1299 */
		char k[32], p[32];

		snprintf(k, sizeof(k), "p%04d", ord);
		snprintf(p, sizeof(p), "{\"i\":%d}", ord);
		store_add_cell(st, "big", k, p, 0, "", ord, "planned", &added);
	}
	CHECK_INT(store_commit(st), 0, "commit");
	{
		struct collect d = { STRBUF_INIT, 0, 0, { 0 }, 0 };
		struct strbuf want = STRBUF_INIT;

		CHECK_INT(each_pending(st, "big", "", 256, &d), 0, "pending big");
		for (int i = 0; i < 1300; i++)
			sb_addf(&want, "%sp%04d", i ? "," : "", i);
		CHECK_INT(d.n, 1300, "every cell once");
		CHECK(!strcmp(d.keys.buf, want.buf), "1300 cells in ord order");
		sb_release(&d.keys);
		sb_release(&want);
	}
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* Bulk planning (cells_key dropped and rebuilt inside a transaction that fills an empty table) must
 * look exactly like the plain way: the same added counts, the index back at the end. */
static void test_bulk(void)
{
	char *path = tmp_path("bulk.db"), *msg;
	struct store *st;
	int added, total = 0, failed = 0;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_begin(st), 0, "begin");
	for (int i = 0; i < 3000; i++) {
		char k[32];

		snprintf(k, sizeof(k), "b%d", i % 2000);   /* the last 1000 repeat earlier keys */
		failed += store_add_cell(st, "s", k, "{}", 0, "", i, "planned", &added) != 0;
		total += added;
	}
	CHECK_INT(failed, 0, "bulk adds that failed");
	CHECK_INT(total, 2000, "duplicates in a bulk transaction are not added");
	/* A query inside the transaction sees the cells, with the index back. */
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells"), 2000, "cells visible in the transaction");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM sqlite_master WHERE name = 'cells_key'"), 1, "index back");
	CHECK_INT(store_add_cell(st, "s", "b1", "{}", 0, "", 1, "planned", &added), 0, "add after settle");
	CHECK_INT(added, 0, "existing key after settle");
	CHECK_INT(store_add_cell(st, "s", "new", "{}", 0, "", 5000, "planned", &added), 0,
		  "new after settle");
	CHECK_INT(added, 1, "new key after settle");
	CHECK_INT(store_commit(st), 0, "commit");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells"), 2001, "cells after commit");
	check_q1(st, "SELECT group_concat(ord) FROM cells WHERE key = 'b1'", "1");

	/* A bulk transaction rolled back leaves no cells and the index in place. */
	store_close(st);
	store_remove_files(path);
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "reopen fresh");
	CHECK_INT(store_begin(st), 0, "begin");
	CHECK_INT(store_add_cell(st, "s", "x", "{}", 0, "", 0, "planned", &added), 0, "bulk add x");
	CHECK_INT(added, 1, "x added");
	store_rollback(st);
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells"), 0, "rolled back");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM sqlite_master WHERE name = 'cells_key'"), 1, "index kept");

	/* Ended by commit, with a duplicate as the very first repeat. */
	CHECK_INT(store_begin(st), 0, "begin");
	CHECK_INT(store_add_cell(st, "s", "x", "{}", 0, "", 0, "planned", &added), 0, "x");
	CHECK_INT(store_add_cell(st, "s", "y", "{}", 0, "", 1, "planned", &added), 0, "y");
	CHECK_INT(store_add_cell(st, "s", "x", "{}", 0, "", 2, "planned", &added), 0, "x again");
	CHECK_INT(added, 0, "x again not added");
	CHECK_INT(store_commit(st), 0, "commit");

	/* The plain way: a table that has cells, and a cell added outside a transaction. */
	CHECK_INT(store_begin(st), 0, "begin");
	CHECK_INT(store_add_cell(st, "s", "y", "{}", 0, "", 1, "planned", &added), 0, "y again");
	CHECK_INT(added, 0, "y exists");
	CHECK_INT(store_add_cell(st, "s", "z", "{}", 0, "", 3, "planned", &added), 0, "z");
	CHECK_INT(added, 1, "z added");
	CHECK_INT(store_commit(st), 0, "commit");
	CHECK_INT(store_add_cell(st, "s", "w", "{}", 0, "", 4, "planned", &added), 0,
		  "w without transaction");
	CHECK_INT(added, 1, "w added");
	CHECK_INT(store_add_cell(st, "s", "w", "{}", 0, "", 4, "planned", &added), 0, "w again");
	CHECK_INT(added, 0, "w exists");
	check_q1(st, "SELECT group_concat(key, ',') FROM (SELECT key FROM cells ORDER BY ord)", "x,y,z,w");
	/* The unique index is really there. */
	test_capture_start();
	CHECK_INT(store_query(st, "INSERT INTO cells(sweep, key, params, pass, ord, state) "
			      "VALUES('s', 'x', '{}', 0, 9, 'planned')", NULL, 0, 0, NULL, NULL), -1,
		  "unique key");
	msg = test_capture_end();
	CHECK(strstr(msg, "UNIQUE constraint failed: cells.key") != NULL, "unique message: %s", msg);
	free(msg);
	store_close(st);
	store_remove_files(path);
	free(path);
}

static int64_t cell_id(struct store *st, const char *key)
{
	char *sql = xasprintf("SELECT id FROM cells WHERE key = '%s'", key);
	int64_t id = q1_int(st, sql);

	free(sql);
	return id;
}

static void test_results(void)
{
	char *path = tmp_path("results.db"), *msg;
	struct store *st;
	struct result r;
	int64_t run, host, host2, id, id2, c1, c2, c3;
	int added, again;
	const char *facts = "{\"hostname\":\"node1\",\"cpus\":8,\"gpus\":[{\"name\":\"x\"}]}";

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_run_begin(st, "sweep run x.yaml", "s", 0xabcdef0123456789ULL, &run), 0, "run begin");
	CHECK(run > 0, "run id %" PRId64, run);
	check_q1(st, "SELECT spec_hash || status || argv FROM runs",
		 "abcdef0123456789runningsweep run x.yaml");
	CHECK_INT(q1_int(st, "SELECT started LIKE '____-__-__T__:__:__.___Z' FROM runs"), 1, "iso start");
	CHECK_INT(store_put_host(st, facts, &host), 0, "host");
	CHECK_INT(store_put_host(st, facts, &host2), 0, "same host again");
	CHECK_INT(host, host2, "same facts, same host id");
	CHECK_INT(store_put_host(st, "{\"hostname\":\"node2\"}", &host2), 0, "other host");
	CHECK(host2 != host, "other facts, other id");
	test_capture_start();
	CHECK_INT(store_put_host(st, "{\"cpus\":1}", &host2), -1, "facts without hostname");
	free(test_capture_end());
	CHECK_INT(q1_int(st, "SELECT count(*) FROM hosts"), 2, "two hosts");
	check_q1(st, "SELECT hostname FROM hosts WHERE id = 1", "node1");
	CHECK_INT(store_put_worker(st, run, 0, host, -1, NULL, "0-3", NULL), 0, "worker 0");
	CHECK_INT(store_put_worker(st, run, 1, host, 0, "GPU-1", "4-7", NULL), 0, "worker 1");
	CHECK_INT(store_put_worker(st, run, 1, host, 1, "GPU-2", "4-7", NULL), 0, "worker 1 again");
	check_q1(st, "SELECT count(*) || '|' || max(gpu) || '|' || max(gpu_uuid) FROM workers WHERE rank = 1",
		 "1|1|GPU-2");
	check_q1(st, "SELECT coalesce(gpu, 'none') FROM workers WHERE rank = 0", "none");

	store_add_cell(st, "s", "c1", "{\"n\":1}", 0, "", 0, "planned", &added);
	store_add_cell(st, "s", "c2", "{\"n\":2}", 0, "", 1, "planned", &added);
	store_add_cell(st, "s", "c3", "{\"n\":3}", 0, "", 2, "planned", &added);
	c1 = cell_id(st, "c1");
	c2 = cell_id(st, "c2");
	c3 = cell_id(st, "c3");

	/* An ok result with known numbers. */
	CHECK_INT(store_mark_running(st, c1), 0, "mark c1");
	result_init(&r);
	r.cell = c1;
	r.worker = 1;
	r.started = 1700000000.25;
	r.wall = 1.5;
	r.throttled = 2;
	result_add_sample(&r, 1, 1500);
	result_add_sample(&r, 2, 0);
	result_add_sample(&r, 3, 1400);
	result_add_sample(&r, 4, 1600);
	result_add_sample(&r, 10, 1700);
	result_summarize(&r, 0.5, NAN);   /* noise 0.88: over the target, noise_ok 0 */
	result_set_metric(&r, "gflops", 12.5);
	result_set_metric(&r, "gbs", 3);
	result_set_metric(&r, "joules", 0.25);
	result_set_metric(&r, "watts", 400);
	result_set_metric(&r, "lock_sm", 1410);
	result_set_metric(&r, "locked_sm", 1405);
	result_add_item(&r, "a", "t", 1.5);
	result_add_item(&r, "b", "t", 2.5);
	CHECK_INT(store_begin(st), 0, "begin");
	CHECK_INT(store_put_result(st, run, &r, 3, &id, NULL), 0, "put ok");
	CHECK_INT(store_commit(st), 0, "commit");
	CHECK(id > 0, "result id");
	check_q1(st, "SELECT status || '|' || attempt || '|' || n || '|' || median || '|' || mean || '|' ||"
		 " min || '|' || max || '|' || q1 || '|' || q3 || '|' || noise_ok || '|' || throttled ||"
		 " '|' || sm_clock || '|' || wall || '|' || started FROM results",
		 "ok|1|5|3.0|4.0|1.0|10.0|2.0|4.0|0|2|1550.0|1.5|2023-11-14T22:13:20.250Z");
	CHECK_NEAR(q1_num(st, "SELECT stdev FROM results"), sqrt(12.5), 1e-15, "stdev");
	CHECK_NEAR(q1_num(st, "SELECT noise FROM results"), sqrt(12.5) / 4, 1e-15, "noise");
	check_q1(st, "SELECT group_concat(i || ':' || seconds || ':' || coalesce(sm_clock, '-'), ' ') FROM "
		 "(SELECT * FROM samples ORDER BY i)",
		 "0:1.0:1500.0 1:2.0:- 2:3.0:1400.0 3:4.0:1600.0 4:10.0:1700.0");
	check_q1(st, "SELECT group_concat(name || '=' || value, ' ') FROM "
		 "(SELECT * FROM metrics ORDER BY name)",
		 "gbs=3.0 gflops=12.5 joules=0.25 lock_sm=1410.0 locked_sm=1405.0 watts=400.0");
	/* The GPU's conditions in v_results, from the metrics (migration 9): NULL where none was read. */
	check_q1(st, "SELECT joules || '|' || watts || '|' || lock_sm || '|' || coalesce(lock_mem, '-') || '|' ||"
		 " locked_sm || '|' || coalesce(locked_mem, '-') FROM v_results", "0.25|400.0|1410.0|-|1405.0|-");
	check_q1(st, "SELECT group_concat(item || metric || value, ' ') FROM "
		 "(SELECT * FROM items ORDER BY item)",
		 "at1.5 bt2.5");
	check_q1(st, "SELECT state || coalesce(error, '-') FROM cells WHERE key = 'c1'", "ok-");
	/* 5 samples: no interval; nothing asked of it (NaN): precise; no clock read: settled NULL. */
	check_q1(st, "SELECT coalesce(ci_lo, '-') || coalesce(ci_hi, '-') || precise || coalesce(settled, '-')"
		 " FROM v_results", "--1-");
	check_q1(st, "SELECT key || '|' || host || '|' || gpu || '|' || params || '|' || replica || '|' ||"
		 " run || '|' || median FROM v_results", "c1|node1|1|{\"n\":1}||1|3.0");

	/* A duplicate ok is refused; the first one stays. */
	test_capture_start();
	CHECK_INT(store_put_result(st, run, &r, 3, &id2, NULL), 0, "duplicate ok returns 0");
	msg = test_capture_end();
	CHECK_INT(id2, id, "duplicate reports the kept result");
	CHECK(strstr(msg, "already has an ok result") != NULL, "duplicate warning: %s", msg);
	free(msg);
	CHECK_INT(q1_int(st, "SELECT count(*) FROM results"), 1, "still one result");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM samples"), 5, "still five samples");
	/* The partial unique index itself refuses a second ok row. */
	test_capture_start();
	CHECK_INT(store_query(st, "INSERT INTO results(cell, status, attempt, n, noise_ok) "
			      "SELECT cell, 'ok', 2, 0, 1 FROM results", NULL, 0, 0, NULL, NULL), -1,
		  "second ok row refused by the index");
	msg = test_capture_end();
	CHECK(strstr(msg, "sql error: UNIQUE constraint failed") != NULL, "index message: %s", msg);
	free(msg);
	/* A failed attempt after the ok is kept as history, but the cell stays ok. */
	result_fail(&r, RESULT_ERROR, "late failure");
	again = -1;
	CHECK_INT(store_put_result(st, run, &r, 3, &id2, &again), 0, "error after ok");
	CHECK_INT(again, 0, "an ok cell is not tried again");
	check_q1(st, "SELECT state || coalesce(error, '-') FROM cells WHERE key = 'c1'", "ok-");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM results WHERE cell = 1"), 2, "two results for c1");
	result_release(&r);

	/* Errors: back to planned until max_attempts (2), then quarantined. No samples: NULL summary. */
	CHECK_INT(store_mark_running(st, c2), 0, "mark c2");
	result_init(&r);
	r.cell = c2;
	r.worker = 0;
	result_fail(&r, RESULT_ERROR, "bad %s", "input");
	CHECK_INT(store_put_result(st, run, &r, 2, NULL, &again), 0, "put error");
	CHECK_INT(again, 1, "attempt 1 of 2 failed: again");
	check_q1(st, "SELECT state || attempts || error FROM cells WHERE id = 2", "planned1bad input");
	check_q1(st, "SELECT status || n || coalesce(median, '-') || coalesce(noise, '-') || error || worker "
		 "FROM results WHERE cell = 2", "error0--bad input1");
	CHECK_INT(store_mark_running(st, c2), 0, "mark c2 again");
	check_q1(st, "SELECT attempts FROM cells WHERE id = 2", "2");
	result_release(&r);
	result_init(&r);
	r.cell = c2;
	r.worker = 1;
	result_add_sample(&r, 0.5, 0);
	result_summarize(&r, 0.5, NAN);
	result_fail(&r, RESULT_TIMEOUT, "timed out after 15 s");
	CHECK_INT(store_put_result(st, run, &r, 2, &id, &again), 0, "put timeout");
	CHECK_INT(again, 0, "attempt 2 of 2 failed: quarantined");
	check_q1(st, "SELECT state || attempts || error FROM cells WHERE id = 2",
		 "quarantined2timed out after 15 s");
	check_q1(st, "SELECT status || attempt || n || median || coalesce(noise, '-') || "
		 "coalesce(sm_clock, '-') FROM results WHERE cell = 2 AND attempt = 2", "timeout210.5--");
	result_release(&r);

	/* A timeout with max_attempts not reached on c3, and a result from an unrecorded worker. */
	CHECK_INT(store_mark_running(st, c3), 0, "mark c3");
	result_init(&r);
	r.cell = c3;
	r.worker = 5;
	result_fail(&r, RESULT_TIMEOUT, "slow");
	test_capture_start();
	CHECK_INT(store_put_result(st, run, &r, 3, NULL, &again), 0, "put from unknown worker");
	CHECK_INT(again, 1, "attempt 1 of 3 failed: again");
	msg = test_capture_end();
	CHECK(strstr(msg, "no worker row for run 1 rank 5") != NULL, "unknown worker warning: %s", msg);
	free(msg);
	check_q1(st, "SELECT state || error FROM cells WHERE id = 3", "plannedslow");
	check_q1(st, "SELECT coalesce(host, 'none') FROM v_results WHERE cell = 3", "none");
	/* A result for a cell that does not exist changes nothing. */
	r.cell = 424242;
	test_capture_start();
	CHECK_INT(store_put_result(st, run, &r, 3, NULL, NULL), -1, "result for a missing cell");
	msg = test_capture_end();
	CHECK(strstr(msg, "result for cell 424242, which is not in") != NULL, "missing cell: %s", msg);
	free(msg);
	CHECK_INT(q1_int(st, "SELECT count(*) FROM results"), 5, "results in all");
	/* As a run's dispatch writes: references unchecked, in its transaction. A missing cell is still
	 * refused (the attempt it would name is NULL); a duplicate ok is dropped and the transaction goes
	 * on with the other results. */
	CHECK_INT(store_dispatching(st, 1), 0, "dispatch mode: references off");
	CHECK_INT(store_begin(st), 0, "begin (references off)");
	test_capture_start();
	CHECK_INT(store_put_result(st, run, &r, 3, NULL, NULL), -1, "missing cell, references off");
	msg = test_capture_end();
	CHECK(strstr(msg, "which is not in") != NULL, "missing cell, references off: %s", msg);
	free(msg);
	r.cell = 1;
	r.worker = 0;
	r.status = RESULT_OK;
	test_capture_start();
	CHECK_INT(store_put_result(st, run, &r, 3, &id2, NULL), 0, "duplicate ok in a transaction");
	msg = test_capture_end();
	CHECK_INT(id2, q1_int(st, "SELECT id FROM results WHERE cell = 1 AND status = 'ok'"),
		  "duplicate in a transaction reports the kept result");
	CHECK(strstr(msg, "already has an ok result") != NULL, "duplicate in a transaction: %s", msg);
	free(msg);
	r.cell = 3;
	r.status = RESULT_ERROR;
	CHECK_INT(store_put_result(st, run, &r, 3, NULL, NULL), 0, "error result after the duplicate");
	CHECK_INT(store_commit(st), 0, "commit (references off)");
	CHECK_INT(store_dispatching(st, 0), 0, "references on");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM results"), 6, "the error result, not the others");
	CHECK_INT(q1_int(st, "SELECT attempt FROM results ORDER BY id DESC LIMIT 1"),
		  q1_int(st, "SELECT attempts FROM cells WHERE id = 3"), "attempt read from the cell");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM pragma_foreign_key_check"), 0, "no dangling references");
	result_release(&r);

	/* Control cells go to controls. */
	result_init(&r);
	r.worker = 0;
	r.started = 1700000000;
	result_add_sample(&r, 2, 0);
	result_add_sample(&r, 4, 0);
	result_add_sample(&r, 3, 0);
	result_summarize(&r, 0.5, NAN);
	CHECK_INT(store_put_control(st, run, "s", "{\"n\":0}", &r, &id), 0, "control");
	check_q1(st, "SELECT sweep || params || median || n || worker || coalesce(error, '-') || started "
		 "FROM controls", "s{\"n\":0}3.031-2023-11-14T22:13:20.000Z");
	CHECK_NEAR(q1_num(st, "SELECT noise FROM controls"), 1.0 / 3, 1e-15, "control noise");
	result_release(&r);

	CHECK_INT(store_run_end(st, run, "ok"), 0, "run end");
	check_q1(st, "SELECT status || (finished IS NOT NULL) FROM runs", "ok1");
	test_capture_start();
	CHECK_INT(store_run_end(st, 77, "ok"), -1, "end of a missing run");
	free(test_capture_end());
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* A command's results: what each run cost (samples and the result's medians and peak, in v_results), and a
 * failure no attempt can change, quarantined at its first attempt. */
static void test_command_results(void)
{
	char *path = tmp_path("command.db");
	struct run_usage u[] = { { 0.25, 0.5, 8e6 }, { 0.125, 0.25, 9e6 }, { 1, 0.75, 7e6 } };
	struct store *st;
	struct result r;
	int64_t run, c1, c2;
	int added, again = -1;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_run_begin(st, "sweep run c.yaml", "c", 1, &run), 0, "run begin");
	store_add_cell(st, "c", "k1", "{\"n\":1}", 0, "", 0, "planned", &added);
	store_add_cell(st, "c", "k2", "{\"n\":2}", 0, "", 1, "planned", &added);
	c1 = cell_id(st, "k1");
	c2 = cell_id(st, "k2");
	CHECK_INT(store_mark_running(st, c1), 0, "mark k1");
	result_init(&r);
	r.cell = c1;
	for (int i = 0; i < 3; i++) {
		result_add_sample(&r, 0.05 + i * 0.01, 0);
		result_set_usage(&r, &u[i]);
	}
	result_summarize(&r, INFINITY, NAN);
	test_capture_start();
	CHECK_INT(store_put_result(st, run, &r, 3, NULL, NULL), 0, "put a command's result");
	free(test_capture_end());
	check_q1(st, "SELECT group_concat(i || ':' || cpu_user || ':' || cpu_sys || ':' || peak_rss, ' ') FROM "
		 "(SELECT * FROM samples ORDER BY i)", "0:0.25:0.5:8000000 1:0.125:0.25:9000000 2:1.0:0.75:7000000");
	check_q1(st, "SELECT cpu_user || '|' || cpu_sys || '|' || peak_rss || '|' || typeof(peak_rss) FROM v_results",
		 "0.25|0.5|9000000|integer");
	result_release(&r);

	CHECK_INT(store_mark_running(st, c2), 0, "mark k2");
	result_init(&r);
	r.cell = c2;
	result_fail(&r, RESULT_INVALID, "metric 't': regex 'x' matched no line of stdout (3 lines)");
	test_capture_start();
	CHECK_INT(store_put_result(st, run, &r, 3, NULL, &again), 0, "put an invalid result");
	free(test_capture_end());
	CHECK_INT(again, 0, "not tried again, with attempts left");
	check_q1(st, "SELECT state || attempts || ':' || error FROM cells WHERE key = 'k2'",
		 "quarantined1:metric 't': regex 'x' matched no line of stdout (3 lines)");
	check_q1(st, "SELECT status || coalesce(cpu_user, '-') || coalesce(peak_rss, '-') FROM results WHERE cell = 2",
		 "error--");
	result_release(&r);
	store_close(st);
	store_remove_files(path);
	free(path);
}

static void test_sweep(void)
{
	char *path = tmp_path("sweep.db");
	struct store *st;
	struct spec s;
	char *cmd[] = { "echo", "{n}" };

	memset(&s, 0, sizeof(s));
	s.name = "demo";
	s.text = "sweep: demo\n";
	s.hash = 0x1234;
	s.command = cmd;
	s.ncommand = 2;
	s.per = PER_HOST;
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_put_sweep(st, &s), 0, "put sweep");
	check_q1(st, "SELECT name || '|' || coalesce(kernel, '-') || '|' || command || '|' || per || '|' ||"
		 " hash FROM sweeps", "demo|-|[\"echo\",\"{n}\"]|host|0000000000001234");
	s.text = "sweep: demo\nrepeat: 2\n";
	s.hash = 0x5678;
	CHECK_INT(store_put_sweep(st, &s), 0, "update sweep");
	check_q1(st, "SELECT count(*) || spec || hash FROM sweeps",
		 "1sweep: demo\nrepeat: 2\n0000000000005678");
	store_close(st);
	store_remove_files(path);
	free(path);
}

static void check_ratio(struct store *st, const char *sql, double ci, int boot, uint64_t seed,
			const double *a, const double *b, size_t n)
{
	double r, lo, hi, gr = NAN, glo = NAN, ghi = NAN;
	char *got = q1(st, sql);

	CHECK_INT(stats_ratio_ci(a, b, n, ci, boot, seed, &r, &lo, &hi), 0, "stats_ratio_ci");
	CHECK(sscanf(got, "[%lf,%lf,%lf]", &gr, &glo, &ghi) == 3, "ratio_ci JSON: %s", got);
	CHECK(gr == r && glo == lo && ghi == hi, "%s = %s, want [%.17g,%.17g,%.17g]", sql, got, r, lo, hi);
	CHECK(lo < r && r < hi, "interval around the ratio: %s", got);
	free(got);
}

static void test_functions(void)
{
	char *path = tmp_path("fn.db"), *msg;
	struct store *st;
	static const double a[] = { 10, 12, 9, 11, 14, 10.5, 13, 9.5, 12.5, 11 };
	static const double b[] = { 5, 6.5, 4, 5.5, 7.5, 5, 6, 4.5, 6, 5.5 };
	struct strbuf sql = STRBUF_INIT;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	check_q1(st, "SELECT median(column1) FROM (VALUES (1), (2), (3), (4))", "2.5");
	check_q1(st, "SELECT median(column1) FROM (VALUES (3), (NULL), (1))", "2.0");
	check_q1(st, "SELECT median(column1) FROM (VALUES (1)) WHERE 0", "NULL");
	check_q1(st, "SELECT median(column1) FROM (VALUES (NULL))", "NULL");
	check_q1(st, "SELECT quantile(column1, 0.1) FROM (VALUES (4), (1), (3), (2))", "1.3");
	check_q1(st, "SELECT quantile(column1, 0.9) FROM (VALUES (4), (1), (3), (2))", "3.7");
	check_q1(st, "SELECT quantile(column1, 1) FROM (VALUES (4), (1), (3), (2))", "4.0");
	check_q1(st, "SELECT quantile(column1, 0.5) FROM (VALUES (1)) WHERE 0", "NULL");
	CHECK_NEAR(q1_num(st, "SELECT geomean(column1) FROM (VALUES (1), (10), (100), (NULL))"), 10, 1e-15,
		   "geomean");
	check_q1(st, "SELECT geomean(column1) FROM (VALUES (1), (-1))", "NULL");
	CHECK_NEAR(q1_num(st, "SELECT stdev(column1) FROM (VALUES (2), (4), (4), (4), (5), (5), (7), (9))"),
		   sqrt(32.0 / 7), 1e-15, "stdev");
	check_q1(st, "SELECT stdev(column1) FROM (VALUES (2))", "NULL");
	CHECK_NEAR(q1_num(st, "SELECT cv(column1) FROM (VALUES (2), (4), (4), (4), (5), (5), (7), (9))"),
		   sqrt(32.0 / 7) / 5, 1e-15, "cv: stdev over mean");
	/* The median's interval: 0..11 gives ranks 2 and 9 (l = 2 at n = 12, test_stats.c); under 6 rows none;
	 * at 90 % five rows give [min, max]. */
	check_q1(st, "SELECT median_ci(column1) FROM (VALUES (5), (0), (11), (1), (10), (2), (9), (3), (8), (4),"
		 " (7), (6))", "[2,9]");
	check_q1(st, "SELECT median_ci(column1) FROM (VALUES (1), (2), (3), (4), (5))", "NULL");
	check_q1(st, "SELECT median_ci(column1, 0.9) FROM (VALUES (1), (2), (3), (4), (5))", "[1,5]");
	check_q1(st, "SELECT ci_rel(99, 103, 100)", "0.02");
	check_q1(st, "SELECT coalesce(ci_rel(NULL, 103, 100), 'none')", "none");
	/* Per group, as reports use them. */
	check_q1(st, "SELECT group_concat(g || '=' || m, ' ') FROM (SELECT column1 AS g, median(column2) AS m"
		 " FROM (VALUES ('a', 1), ('a', 3), ('b', 5)) GROUP BY column1 ORDER BY column1)",
		 "a=2.0 b=5.0");
	test_capture_start();
	check_q1(st, "SELECT quantile(column1, 2) FROM (VALUES (1))", "error");
	msg = test_capture_end();
	CHECK(strstr(msg, "sql error: quantile(x, q): q must be a number in [0, 1]") != NULL,
	      "q msg: %s", msg);
	free(msg);

	/* ratio_ci over paired rows against stats_ratio_ci on the same arrays. */
	sb_adds(&sql, "WITH t(a, b) AS (VALUES ");
	for (size_t i = 0; i < ARRAY_SIZE(a); i++)
		sb_addf(&sql, "%s(%.17g, %.17g)", i ? ", " : "", a[i], b[i]);
	sb_adds(&sql, ", (NULL, 1), (2, NULL)) SELECT ratio_ci(a, b");
	{
		size_t base = sql.len;

		sb_adds(&sql, ") FROM t");
		check_ratio(st, sql.buf, 0.95, 10000, 1, a, b, ARRAY_SIZE(a));
		sql.len = base;
		sb_adds(&sql, ", 0.9, 2000, 7) FROM t");
		check_ratio(st, sql.buf, 0.9, 2000, 7, a, b, ARRAY_SIZE(a));
		sql.len = base;
		sb_adds(&sql, ", 0.9) FROM t");
		check_ratio(st, sql.buf, 0.9, 10000, 1, a, b, ARRAY_SIZE(a));
	}
	CHECK_NEAR(q1_num(st, "SELECT json_extract(ratio_ci(column1, column2, 0.95, 100), '$[0]') FROM "
			  "(VALUES (2, 1), (4, 2))"), 2, 1e-15, "ratio of means is JSON");
	check_q1(st, "SELECT ratio_ci(column1, column2) FROM (VALUES (1, 0), (2, 0))", "NULL");
	check_q1(st, "SELECT ratio_ci(column1, column2) FROM (VALUES (1, 1)) WHERE 0", "NULL");
	test_capture_start();
	check_q1(st, "SELECT ratio_ci(column1, column2, 1.5) FROM (VALUES (1, 1))", "error");
	msg = test_capture_end();
	CHECK(strstr(msg, "ci must be in (0, 1)") != NULL, "ci msg: %s", msg);
	free(msg);
	{
		char key[17];

		plan_key("s", "{\"b\":2,\"a\":\"x\"}", 1, "r", key);
		check_q1(st, "SELECT sweep_key('s', '{\"b\":2,\"a\":\"x\"}', 1, 'r')", key);
	}
	test_capture_start();
	check_q1(st, "SELECT sweep_key('s', 'not json', 0, '')", "error");
	free(test_capture_end());
	sb_release(&sql);
	store_close(st);

	/* The functions exist on read-only connections too. */
	CHECK_INT(store_open(path, STORE_RO, &st), 0, "open ro");
	check_q1(st, "SELECT median(column1) FROM (VALUES (1), (2), (3), (4))", "2.5");
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* sweep_param(params, path) is json_extract(params, path): the same type and value, the same errors, for
 * the members a scan reads, those json_extract alone reads (an object, an escaped name) and other paths. */
static void test_param(void)
{
	static const char *const doc[] = {
		"{\"M\":64,\"dtype\":\"f32\",\"N\":0}", "{ \"M\" :\t-64 ,\n\"dtype\" : \"a b\" }\r\n",
		"{\"M\":0.0005,\"dtype\":1e3,\"N\":-2.5}", "{\"M\":1.0,\"dtype\":true,\"N\":false,\"K\":null}",
		"{\"M\":123456789012345678,\"dtype\":1234567890123456789,\"N\":-0}",
		"{\"M\":\"a\\u0041\\n\",\"dtype\":\"x\\\"y\"}", "{\"M\\u0041\":1,\"M\":2}", "{\"M\":1,\"M\":2}",
		"{\"M\":{\"N\":1},\"N\":[1,2],\"dtype\":3}", "{}", "[1,2]", "5", "{\"M\":\"\"}", "{\"Mx\":1,\"M\":\"x\"}",
	};
	static const char *const path[] = { "$.\"M\"", "$.\"dtype\"", "$.\"N\"", "$.\"K\"", "$.M", "$", "$[0]",
					    "$.\"MA\"" };
	static const char *const bad[] = { "{\"M\":1,\"N\":tru}", "{\"M\":1,}", "{\"M\":01}", "{\"M\":1} x",
					   "{\"M\":\"a\\q\"}", "{\"M\" 1}" };
	char *file = tmp_path("param.db"), *got = NULL, *want = NULL;
	struct strbuf sql = STRBUF_INIT;
	struct store *st;

	CHECK_INT(store_open(file, STORE_RW, &st), 0, "open");
	for (size_t d = 0; d < ARRAY_SIZE(doc); d++)
		for (size_t p = 0; p < ARRAY_SIZE(path); p++) {
			for (int f = 0; f < 2; f++) {
				sb_reset(&sql);
				sb_addf(&sql, "SELECT typeof(v) || ':' || quote(v) FROM (SELECT %s(column1, column2) AS v"
					" FROM (VALUES ('%s', '%s'), ('%s', '%s')))", f ? "json_extract" : "sweep_param",
					doc[d], path[p], doc[d], path[p]);
				if (f)
					want = q1(st, sql.buf);
				else
					got = q1(st, sql.buf);
			}
			CHECK(!strcmp(got, want), "%s of %s: got %s, want %s", path[p], doc[d], got, want);
			free(got);
			free(want);
		}
	check_q1(st, "SELECT sweep_param(NULL, '$.\"M\"') IS NULL AND sweep_param('{\"M\":1}', NULL) IS NULL", "1");
	/* sweep_fact(id, facts, path) is json_extract(facts, path), kept per id: hosts met again, more hosts
	 * than its first table, a NULL id (no host), NULL facts, a missing label */
	check_q1(st, "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 299),"
		 " f(id, facts) AS (SELECT i % 150, json_object('labels', json_object('c', CASE WHEN i % 3 THEN"
		 " i % 150 ELSE 'h' || (i % 150) END)) FROM n UNION ALL VALUES (NULL, '{\"labels\":{\"c\":\"z\"}}'),"
		 " (NULL, '{\"labels\":{\"c\":1.5}}'), (900, NULL), (901, '{\"labels\":{}}'))"
		 " SELECT sum(quote(sweep_fact(id, facts, '$.labels.\"c\"')) IS quote(json_extract(facts,"
		 " '$.labels.\"c\"'))) || '/' || count(*) FROM f", "304/304");
	for (size_t d = 0; d < ARRAY_SIZE(bad); d++) {
		sb_reset(&sql);
		sb_addf(&sql, "SELECT sweep_param('%s', '$.\"M\"')", bad[d]);
		test_capture_start();
		got = q1(st, sql.buf);
		free(test_capture_end());
		CHECK(!strcmp(got, "error"), "malformed %s: got %s", bad[d], got);
		free(got);
	}
	/* more reals than the statement keeps: each past the cache read by json_extract, the same */
	check_q1(st, "WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i < 2999)"
		 " SELECT count(*) FROM (SELECT json_object('x', i + 0.5, 'M', i * 0.25) AS p FROM n, (SELECT 1 UNION"
		 " ALL SELECT 2)) WHERE quote(sweep_param(p, '$.\"M\"')) IS quote(json_extract(p, '$.\"M\"'))", "6000");
	sb_release(&sql);
	store_close(st);
	store_remove_files(file);
	free(file);
}

/* sweep_group(params, n, paths..., keys...) groups as GROUP BY the values does: 64 and 64.0 together, text
 * by its bytes, NULLs together, a parameter as json_extract reads it, past the first thousand groups. */
static void test_group(void)
{
	static const char *const by[][2] = {
		{ "json_extract(p, '$.\"a\"'), h", "sweep_group(p, 1, '$.\"a\"', h)" },
		{ "json_extract(p, '$.\"a\"'), json_extract(p, '$.\"b\"')", "sweep_group(p, 2, '$.\"b\"', '$.\"a\"')" },
		{ "h, k", "sweep_group(NULL, 0, k, h)" },
		{ "json_extract(p, '$.\"b\"'), k", "sweep_group(p, 1, '$.\"b\"', k)" },
	};
	char *file = tmp_path("group.db"), *got = NULL, *want = NULL;
	struct strbuf sql = STRBUF_INIT;
	struct store *st;

	CHECK_INT(store_open(file, STORE_RW, &st), 0, "open");
	CHECK_INT(store_query(st, "CREATE TABLE t(p, h, k, v)", NULL, 0, 0, NULL, NULL), 0, "table");
	CHECK_INT(store_query(st, "INSERT INTO t VALUES ('{\"a\":64,\"b\":\"x\"}', 'n1', 1, 1),"
			      " ('{\"a\":64.0,\"b\":\"x\"}', 'n1', 1.0, 2), ('{ \"a\" : 64 , \"b\" : \"x\" }', NULL, '1', 4),"
			      " ('{\"a\":\"64\",\"b\":\"x\"}', NULL, NULL, 8), ('{\"b\":\"x\\u0041\"}', 'n2', NULL, 16),"
			      " ('{\"a\":1e3,\"b\":\"xA\"}', 'n2', 2.5, 32), ('{\"a\":1000,\"b\":null}', 'n1', x'01', 64),"
			      " ('{\"a\":{\"c\":1},\"b\":true}', 'n1', 'x', 128), ('{\"a\":0.5,\"b\":1}', 'n1', 2.5, 256)",
			      NULL, 0, 0, NULL, NULL), 0, "rows");
	CHECK_INT(store_query(st, "INSERT INTO t WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE"
			      " i < 4999) SELECT json_object('a', i % 1500, 'b', i % 7 * 0.5), 'n' || (i % 3), i % 2, i FROM n",
			      NULL, 0, 0, NULL, NULL), 0, "many rows");
	for (size_t i = 0; i < ARRAY_SIZE(by); i++) {
		for (int f = 0; f < 2; f++) {
			sb_reset(&sql);
			sb_addf(&sql, "SELECT count(*) || ':' || group_concat(x, ' ') FROM (SELECT %s, sum(v) || '/' ||"
				" count(*) AS x FROM t GROUP BY %s ORDER BY %s)", by[i][0], by[i][f], by[i][0]);
			if (f)
				got = q1(st, sql.buf);
			else
				want = q1(st, sql.buf);
		}
		CHECK(!strcmp(got, want) && strncmp(got, "error", 5), "GROUP BY %s: got %.60s, want %.60s", by[i][1], got,
		      want);
		free(got);
		free(want);
	}
	/* sweep_varies(x) is count(DISTINCT x) > 1 (NULLs aside, 1 and 1.0 one value), in groups that vary and
	 * groups that do not */
	check_q1(st, "SELECT sum(a <> b) || ' ' || sum(a) || ' ' || count(*) FROM (SELECT sweep_varies(k) AS a,"
		 " count(DISTINCT k) > 1 AS b FROM t GROUP BY h, v % 5 = 0)", "0 6 7");
	check_q1(st, "SELECT sweep_varies(k) FROM t WHERE h IS NULL", "0");
	test_capture_start();
	got = q1(st, "SELECT sweep_group(p, 3, '$.\"a\"') FROM t");
	free(test_capture_end());
	CHECK(!strcmp(got, "error"), "more paths than arguments: %s", got);
	free(got);
	sb_release(&sql);
	store_close(st);
	store_remove_files(file);
	free(file);
}

struct rows {
	struct strbuf sb;
	int n;
};

static int rows_cb(const struct store_row *row, void *data)
{
	struct rows *r = data;

	for (int i = 0; i < row->ncol; i++)
		sb_addf(&r->sb, "%s%s=%s/%d/%g", i ? " " : "", row->names[i],
			row->text[i] ? row->text[i] : "NULL", (int)row->types[i], row->num[i]);
	sb_addc(&r->sb, ';');
	r->n++;
	return 0;
}

static void test_query(void)
{
	char *path = tmp_path("query.db"), *msg;
	struct store *st;
	struct rows r = { STRBUF_INIT, 0 };
	const char *binds[] = { "7", "abc" };
	int added;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	store_add_cell(st, "s", "k", "{}", 0, "", 0, "planned", &added);
	CHECK_INT(store_query(st, "SELECT 1 AS i, 2.5 AS f, 'x' AS t, NULL AS z, ?1 + 1 AS b, ?2 AS s",
			      binds, 2, 1, rows_cb, &r), 0, "select");
	CHECK_STR(r.sb.buf, "i=1/1/1 f=2.5/2/2.5 t=x/3/nan z=NULL/0/nan b=8/1/8 s=abc/3/nan;", "row values");
	CHECK_INT(r.n, 1, "one row");

	test_capture_start();
	CHECK_INT(store_query(st, "DELETE FROM cells", NULL, 0, 1, NULL, NULL), -1,
		  "readonly refuses DELETE");
	CHECK_INT(store_query(st, "UPDATE cells SET state = 'ok'", NULL, 0, 1, NULL, NULL), -1, "and UPDATE");
	msg = test_capture_end();
	CHECK(strstr(msg, "sql error: the statement would write to the database") != NULL, "msg: %s", msg);
	free(msg);
	check_q1(st, "SELECT count(*) || state FROM cells", "1planned");

	test_capture_start();
	CHECK_INT(store_query(st, "SELECT 1; DELETE FROM cells", NULL, 0, 1, NULL, NULL), -1,
		  "two statements");
	CHECK_INT(store_query(st, "SELECT ?1, ?2", binds, 1, 1, NULL, NULL), -1, "too few binds");
	CHECK_INT(store_query(st, "SELEC 1", NULL, 0, 1, NULL, NULL), -1, "syntax error");
	CHECK_INT(store_query(st, "SELECT * FROM nosuch", NULL, 0, 1, NULL, NULL), -1, "no table");
	msg = test_capture_end();
	CHECK(strstr(msg, "sql error: one statement at a time") != NULL, "two statements msg: %s", msg);
	CHECK(strstr(msg, "sql error: the statement has 2 parameters, 1 value given") != NULL,
	      "binds: %s", msg);
	CHECK(strstr(msg, "sql error: near \"SELEC\": syntax error") != NULL, "syntax msg: %s", msg);
	CHECK(strstr(msg, "sql error: no such table: nosuch") != NULL, "table msg: %s", msg);
	free(msg);
	check_q1(st, "SELECT count(*) FROM cells", "1");
	CHECK_INT(store_query(st, "SELECT 1;  ", NULL, 0, 1, NULL, NULL), 0, "trailing semicolon is fine");
	CHECK_INT(store_query(st, "DELETE FROM cells", NULL, 0, 0, NULL, NULL), 0, "writes when allowed");
	check_q1(st, "SELECT count(*) FROM cells", "0");
	sb_release(&r.sb);
	store_close(st);
	store_remove_files(path);
	free(path);
}

/*
 * A statement split over the results (store_query_split): the part's groups of each slice merged by the
 * final give what the whole statement gives in one pass, for every statistic; a group with no value is
 * NULL; an unknown statistic is an error.
 */
static void test_split(void)
{
	static const char *const stat[][2] = { { "median", "median" }, { "mean", "avg" }, { "geomean", "geomean" },
		{ "min", "min" }, { "max", "max" }, { "stdev", "stdev" }, { "cv", "cv" } };
	char *path = tmp_path("split.db"), key[16], params[32], *msg;
	struct strbuf part = STRBUF_INIT, final = STRBUF_INIT, whole = STRBUF_INIT;
	const char *bind[] = { "0", "0" };
	struct store *st;
	int added;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	for (int i = 0; i < 40; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		snprintf(params, sizeof(params), "{\"g\":%d}", i % 3);
		store_add_cell(st, "s", key, params, 0, "", (uint64_t)i, "planned", &added);
	}
	CHECK_INT(store_query(st, "INSERT INTO results(cell, status, attempt, n, noise_ok, median) SELECT id, 'ok', 1,"
			      " 1, 1, CASE WHEN id % 3 = 2 THEN NULL ELSE 1 + id * id % 17 END FROM cells", NULL, 0, 0,
			      NULL, NULL), 0, "results");
	for (size_t k = 0; k < ARRAY_SIZE(stat) + 1; k++) {
		struct rows a = { STRBUF_INIT, 0 }, b = { STRBUF_INIT, 0 };
		const char *name = k < ARRAY_SIZE(stat) ? stat[k][0] : "quantile";

		sb_reset(&part);
		sb_reset(&final);
		sb_reset(&whole);
		sb_adds(&part, "SELECT sweep_param(c.params, '$.\"g\"'), sweep_values(r.median), count(r.median) FROM"
			" results r JOIN cells c ON c.id = r.cell WHERE r.id BETWEEN ?1 AND ?2 GROUP BY 1");
		sb_addf(&final, "SELECT c1 AS g, sweep_stat('%s', 0.3, c2) AS x, sum(c3) AS n FROM temp.sweep_part"
			" GROUP BY 1 ORDER BY 1", name);
		if (k < ARRAY_SIZE(stat))
			sb_addf(&whole, "SELECT sweep_param(c.params, '$.\"g\"') AS g, %s(r.median) AS x,", stat[k][1]);
		else
			sb_adds(&whole, "SELECT sweep_param(c.params, '$.\"g\"') AS g, quantile(r.median, 0.3) AS x,");
		sb_adds(&whole, " count(r.median) AS n FROM results r JOIN cells c ON c.id = r.cell GROUP BY 1 ORDER BY 1");
		CHECK(!store_query_split(st, part.buf, final.buf, bind, 2, 1, rows_cb, &a), "split %s", name);
		CHECK(!store_query(st, whole.buf, NULL, 0, 1, rows_cb, &b), "whole %s", name);
		CHECK(!strcmp(a.sb.buf, b.sb.buf), "split %s: %s, whole: %s", name, a.sb.buf, b.sb.buf);
		CHECK(a.n == 3, "three groups of %s: %d", name, a.n);
		if (!strcmp(name, "median"))
			CHECK_STR(a.sb.buf, "g=0/1/0 x=9.5/2/9.5 n=14/1/14;g=1/1/1 x=NULL/0/nan n=0/1/0;"
				  "g=2/1/2 x=9.0/2/9 n=13/1/13;", "the medians");
		sb_release(&a.sb);
		sb_release(&b.sb);
	}
	/* pairs (a --limit's metric and limit): each of the four selections against its statistic */
	CHECK_INT(store_query(st, "UPDATE results SET mean = CASE WHEN id % 5 = 1 THEN NULL ELSE id * 0.5 END", NULL,
			      0, 0, NULL, NULL), 0, "second values");
	{
		struct rows a = { STRBUF_INIT, 0 }, b = { STRBUF_INIT, 0 };

		CHECK(!store_query_split(st, "SELECT sweep_param(c.params, '$.\"g\"'), sweep_pairs(r.median, r.mean)"
					 " FROM results r JOIN cells c ON c.id = r.cell WHERE r.id BETWEEN ?1 AND ?2"
					 " GROUP BY 1", "SELECT c1 AS g, sweep_stat('median', 0, c2, 0) AS a,"
					 " sweep_stat('median', 0, c2, 1) AS b, sweep_stat('median', 0, c2, 2) AS c,"
					 " sweep_stat('median', 0, c2, 3) AS d FROM temp.sweep_part GROUP BY 1 ORDER BY 1",
					 bind, 2, 1, rows_cb, &a), "split pairs");
		CHECK(!store_query(st, "SELECT sweep_param(c.params, '$.\"g\"') AS g, median(r.median) AS a,"
				   " median(r.mean) AS b, median(CASE WHEN r.mean IS NOT NULL THEN r.median END) AS c,"
				   " median(CASE WHEN r.median IS NOT NULL THEN r.mean END) AS d FROM results r JOIN"
				   " cells c ON c.id = r.cell GROUP BY 1 ORDER BY 1", NULL, 0, 1, rows_cb, &b),
		      "whole pairs");
		CHECK(!strcmp(a.sb.buf, b.sb.buf), "split pairs: %s, whole: %s", a.sb.buf, b.sb.buf);
		CHECK(strstr(a.sb.buf, "g=1/1/1 a=NULL/0/nan b=10.25/2/10.25 c=NULL/0/nan d=NULL/0/nan;") != NULL,
		      "a group with no metric: %s", a.sb.buf);
		sb_release(&a.sb);
		sb_release(&b.sb);
	}
	/* st's own transaction (a result it wrote, the newest, in the last slice) is a state the other
	 * connections do not see: one slice, on st, reads all, and the result is counted */
	CHECK_INT(store_begin(st), 0, "begin");
	CHECK_INT(store_query(st, "INSERT INTO results(cell, status, attempt, n, noise_ok, median) VALUES (1, 'error',"
			      " 2, 1, 1, 1000)", NULL, 0, 0, NULL, NULL), 0, "a result not committed");
	{
		struct rows a = { STRBUF_INIT, 0 };

		CHECK(!store_query_split(st, "SELECT count(*), sweep_values(r.median) FROM results r WHERE r.id BETWEEN"
					 " ?1 AND ?2", "SELECT sum(c1) AS n, sweep_stat('max', 0, c2) AS x FROM"
					 " temp.sweep_part", bind, 2, 1, rows_cb, &a), "split in a transaction");
		CHECK_STR(a.sb.buf, "n=41/1/41 x=1000.0/2/1000;", "what st wrote, read");
		sb_release(&a.sb);
	}
	store_rollback(st);
	test_capture_start();
	CHECK_INT(store_query_split(st, part.buf, "SELECT sweep_stat('mode', 0, c2) FROM temp.sweep_part", bind, 2,
				    1, NULL, NULL), -1, "no such statistic");
	msg = test_capture_end();
	CHECK(strstr(msg, "sweep_stat(name, q, values): no such statistic") != NULL, "msg: %s", msg);
	free(msg);
	sb_release(&part);
	sb_release(&final);
	sb_release(&whole);
	store_close(st);
	store_remove_files(path);
	free(path);
}

/*
 * A reader trusts nothing of the file: each of the schema's tables made a view (a recursive one that
 * never ends) is refused at the open, naming it; and a read that runs past the time limit is stopped.
 */
static void test_foreign(void)
{
	struct rows names = { STRBUF_INIT, 0 };
	char *path = tmp_path("names.db"), *msg, *p, *next;
	struct store *st;
	double t;
	int n = 0;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_query(st, "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite%'"
			      " ORDER BY name", NULL, 0, 1, rows_cb, &names), 0, "the tables");
	store_close(st);
	store_remove_files(path);
	free(path);
	/* rows_cb writes "name=T/3/nan;" a row */
	for (p = names.sb.buf; p && (p = strstr(p, "name=")); p = next) {
		char *table = xstrndup(p + 5, strcspn(p + 5, "/")), *sql, *view = tmp_path("view.db");

		next = p + 5;
		n++;
		CHECK_INT(store_open(view, STORE_RW, &st), 0, "open");
		sql = xasprintf("DROP TABLE %s", table);
		CHECK(!store_query(st, sql, NULL, 0, 0, NULL, NULL), "drop %s", table);
		free(sql);
		sql = xasprintf("CREATE VIEW %s AS WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
				" SELECT i FROM n WHERE i < 0", table);
		CHECK(!store_query(st, sql, NULL, 0, 0, NULL, NULL), "view %s", table);
		free(sql);
		store_close(st);
		test_capture_start();
		t = now_mono();
		CHECK(store_open(view, STORE_RO, &st) == FAIL_NOT_SWEEP, "a view named %s is refused", table);
		CHECK(now_mono() - t < 2, "at once (%.1f s)", now_mono() - t);
		msg = test_capture_end();
		sql = xasprintf("its '%s' is a view, where sweep keeps a table", table);
		CHECK(strstr(msg, sql) != NULL, "names %s: %s", table, msg);
		free(sql);
		free(msg);
		store_remove_files(view);
		free(view);
		free(table);
	}
	CHECK(n >= 14, "every table of the schema tried (%d)", n);
	sb_release(&names.sb);

	path = tmp_path("limit.db");
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	store_close(st);
	CHECK_INT(store_open(path, STORE_RO, &st), 0, "open read-only");
	store_time_limit(st, 0.3);
	test_capture_start();
	t = now_mono();
	CHECK_INT(store_query(st, "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n)"
			      " SELECT count(*) FROM n", NULL, 0, 1, NULL, NULL), -1, "an endless query is stopped");
	t = now_mono() - t;
	msg = test_capture_end();
	CHECK(t >= 0.3 && t < 2, "past the limit of 0.3 s, soon: %.2f s", t);
	CHECK(strstr(msg, "a read ran past its limit of 0.3 s and was stopped") != NULL, "msg: %s", msg);
	free(msg);
	CHECK_INT(store_query(st, "SELECT 1", NULL, 0, 1, NULL, NULL), 0, "the next read has its own limit");
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* Rollback undoes cells; a result inside a rolled-back batch is gone too. */
static void test_transactions(void)
{
	char *path = tmp_path("tx.db");
	struct store *st, *ro;
	int added;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_begin(st), 0, "begin");
	store_add_cell(st, "s", "a", "{}", 0, "", 0, "planned", &added);
	/* WAL: a reader sees the last commit while the writer's transaction is open. */
	CHECK_INT(store_open(path, STORE_RO, &ro), 0, "reader during a write");
	CHECK_INT(q1_int(ro, "SELECT count(*) FROM cells"), 0, "reader sees no uncommitted cell");
	store_rollback(st);
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells"), 0, "rolled back");
	CHECK_INT(store_begin(st), 0, "begin again");
	store_add_cell(st, "s", "a", "{}", 0, "", 0, "planned", &added);
	CHECK_INT(store_commit(st), 0, "commit");
	CHECK_INT(q1_int(ro, "SELECT count(*) FROM cells"), 1, "reader sees the commit");
	store_close(ro);
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* Timings for the report, not assertions: a million cells in one transaction, and results of one
 * sample each committed in batches of 1000. */
static void bench(void)
{
	char *path = tmp_path("bench.db");
	struct store *st;
	long ncells = 1000000, nres = 50000;
	const char *env = getenv("STORE_BENCH_CELLS");
	double t0, t1, tc, c0, c1;
	int added;
	long total = 0;
	struct result r;
	int64_t run;

#if defined(__SANITIZE_ADDRESS__)
	ncells = 100000;
#endif
	if (env)
		ncells = atol(env);
	if (nres > ncells)
		nres = ncells;
	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open bench");
	t0 = now_mono();
	c0 = (double)clock() / CLOCKS_PER_SEC;
	store_begin(st);
	for (long i = 0; i < ncells; i++) {
		char key[17], params[64];
		uint64_t h = hash64(HASH64_INIT, &i, sizeof(i));

		snprintf(key, sizeof(key), "%016" PRIx64, h);
		snprintf(params, sizeof(params), "{\"M\":%ld,\"N\":%ld,\"dtype\":\"fp32\"}", i % 1000,
			 i / 1000);
		store_add_cell(st, "bench", key, params, 0, "", (uint64_t)i, "planned", &added);
		total += added;
	}
	tc = now_mono();
	CHECK_INT(store_commit(st), 0, "bench commit");
	t1 = now_mono();
	c1 = (double)clock() / CLOCKS_PER_SEC;
	CHECK_INT(total, ncells, "bench cells added");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells"), ncells, "bench cells stored");
	printf("# bench: %ld store_add_cell in one transaction: %.3f s wall (%.3f s of it in the commit), "
	       "%.3f s cpu, %.0f cells/s\n", ncells, t1 - t0, t1 - tc, c1 - c0, ncells / (t1 - t0));

	t0 = now_mono();
	store_begin(st);
	for (long i = 0; i < nres; i++) {
		store_mark_running(st, i + 1);
		if (i % 1000 == 999) {
			store_commit(st);
			store_begin(st);
		}
	}
	store_commit(st);
	t1 = now_mono();
	printf("# bench: %ld store_mark_running, commits of 1000: %.3f s (%.0f/s)\n", nres, t1 - t0,
	       nres / (t1 - t0));

	result_init(&r);
	result_add_sample(&r, 0.001, 1500);
	result_summarize(&r, 0.5, NAN);
	result_set_metric(&r, "gflops", 100);
	r.started = now_wall();
	r.wall = 0.01;
	CHECK_INT(store_run_begin(st, "bench", "bench", 0, &run), 0, "bench run");
	CHECK_INT(store_put_worker(st, run, 0, 0, -1, NULL, NULL, NULL), 0, "bench worker");
	t0 = now_mono();
	c0 = (double)clock() / CLOCKS_PER_SEC;
	store_begin(st);
	total = 0;
	for (long i = 0; i < nres; i++) {
		r.cell = i + 1;
		total += !store_put_result(st, run, &r, 3, NULL, NULL);
		if (i % 1000 == 999) {
			store_commit(st);
			store_begin(st);
		}
	}
	store_commit(st);
	t1 = now_mono();
	c1 = (double)clock() / CLOCKS_PER_SEC;
	result_release(&r);
	CHECK_INT(total, nres, "bench results stored");
	CHECK_INT(q1_int(st, "SELECT count(*) FROM cells WHERE state = 'ok'"), nres, "bench cells ok");
	printf("# bench: %ld store_put_result (1 sample, 1 metric), commits of 1000: %.3f s wall, %.3f s cpu "
	       "(%.0f/s)\n", nres, t1 - t0, c1 - c0, nres / (t1 - t0));
	store_close(st);
	store_remove_files(path);
	free(path);
}

/* The writer lock, what taking it heals, an interrupt's hand-back, retry, and the defaults function. */
static void test_writer(void)
{
	char *path = tmp_path("writer.db"), *lock = xasprintf("%s-writer", path), *err;
	struct store *a, *b, *r;
	struct stat sb;
	char line[256] = "";
	off_t size;
	int added, fd;
	uint64_t n;

	CHECK_INT(store_open(path, STORE_RW, &a), 0, "open a");
	CHECK_INT(store_lock(a, "test a"), 0, "a takes the lock");
	CHECK_INT(store_lock(a, "test a"), 0, "taking it again is a no-op");
	CHECK_INT(store_open(path, STORE_RW, &b), 0, "open b");
	test_capture_start();
	CHECK_INT(store_lock(b, "test b"), FAIL_BUSY, "b is refused: busy");
	err = test_capture_end();
	CHECK(strstr(err, "is being written by another sweep (host ") && strstr(err, ": test a)"),
	      "the message names the holder: %s", err);
	free(err);
	CHECK_INT(store_open(path, STORE_RO, &r), 0, "a reader is not stopped");
	store_close(r);
	/* A run that died: its row still running, a cell with an ok result left running. */
	CHECK_INT(store_add_cell(a, "s", "k1", "{}", 0, "", 0, "planned", &added), 0, "cell");
	CHECK_INT(store_add_cell(a, "s", "k2", "{}", 0, "", 1, "planned", &added), 0, "cell 2");
	check_q1(a, "INSERT INTO runs(sweep, started, status) VALUES('s', 'x', 'running') RETURNING id", "1");
	check_q1(a, "INSERT INTO results(cell, status, attempt, n, noise_ok) VALUES(1, 'ok', 1, 0, 1)"
		 " RETURNING id", "1");
	CHECK_INT(store_mark_running(a, 1), 0, "cell 1 running");
	store_close(a);
	/* A lock file naming a holder that is gone is taken over, and the damage healed. */
	fd = open(lock, O_WRONLY | O_TRUNC);
	CHECK(fd >= 0 && write(fd, "host h pid 1 since t: dead\n", 27) == 27, "a dead holder's name");
	close(fd);
	test_capture_start();
	CHECK_INT(store_lock(b, "test b"), 0, "b takes over");
	err = test_capture_end();
	CHECK(strstr(err, "taking over the writer lock of a sweep that is gone (host h pid 1 since t: dead)") &&
	      strstr(err, "1 run (from run 1) left 'running'") && strstr(err, "1 cell with an ok result"),
	      "takeover and healing said: %s", err);
	free(err);
	check_q1(b, "SELECT status FROM runs WHERE id = 1", "killed");
	check_q1(b, "SELECT state FROM cells WHERE id = 1", "ok");
	/* The room kept for a full disk: megabytes allocated past the lock file's one line, given back. */
	CHECK(!stat(lock, &sb) && sb.st_blocks * 512 >= 8 << 20 && sb.st_size < 200, "room kept: %lld bytes in "
	      "%lld blocks", (long long)sb.st_size, (long long)sb.st_blocks);
	size = sb.st_size;
	CHECK_INT(store_free_reserve(b), 0, "the room given back");
	CHECK(!stat(lock, &sb) && sb.st_blocks * 512 < 1 << 20 && sb.st_size == size, "no room kept: %lld bytes in "
	      "%lld blocks", (long long)sb.st_size, (long long)sb.st_blocks);
	fd = open(lock, O_RDONLY);
	CHECK(fd >= 0 && read(fd, line, sizeof(line) - 1) == size && strstr(line, ": test b\n"),
	      "the holder's line stays: %s", line);
	close(fd);
	/* An interrupt hands back the running cell without its attempt, the sent one to idle. */
	CHECK_INT(store_mark_running(b, 2), 0, "cell 2 running");
	check_q1(b, "SELECT state || attempts FROM cells WHERE id = 2", "running1");
	CHECK_INT(store_unfly(b, "s", &n), 0, "unfly");
	CHECK_INT((int)n, 1, "one cell handed back");
	check_q1(b, "SELECT state || attempts || flight FROM cells WHERE id = 2", "planned00");
	/* Retry: a quarantined cell back with attempts 0; a where picks cells. */
	check_q1(b, "UPDATE cells SET state = 'quarantined', attempts = 3, error = 'e' WHERE id = 2 RETURNING id",
		 "2");
	CHECK_INT(store_retry(b, "s", RETRY_FAILED, NULL, NULL, 0, &n), 0, "retry failed");
	CHECK_INT((int)n, 0, "no failed cell");
	CHECK_INT(store_retry(b, "s", RETRY_QUARANTINED, "c.key = ?1", (const char *[]){ "k1" }, 1, &n), 0,
		  "retry where");
	CHECK_INT((int)n, 0, "k1 is not quarantined");
	CHECK_INT(store_retry(b, "s", RETRY_QUARANTINED, NULL, NULL, 0, &n), 0, "retry");
	CHECK_INT((int)n, 1, "one back");
	check_q1(b, "SELECT state || attempts || coalesce(error, '-') FROM cells WHERE id = 2", "planned0-");
	/* The defaults of a kernel written into params, as planning writes them. */
	check_q1(b, "SELECT sweep_param_defaults('sleep', '{\"ms\":5}')", "{\"ms\":5,\"jitter\":0}");
	check_q1(b, "SELECT sweep_param_defaults('sleep', '{}')", "{\"ms\":1,\"jitter\":0}");
	check_q1(b, "SELECT sweep_param_defaults('cpu.copy', '{}')", "{\"bytes\":67108864}");
	check_q1(b, "SELECT sweep_param_defaults(NULL, '{\"a\":1}')", "{\"a\":1}");
	store_close(b);
	fd = open(lock, O_RDONLY);
	CHECK(fd >= 0 && read(fd, (char[8]){ 0 }, 8) == 0, "a clean close empties the lock file");
	close(fd);
	store_remove_files(path);
	unlink(lock);
	free(lock);
	free(path);
}

/* store_order_text: listed text in its order, anything else after by bytes; equal only when the same. */
static void test_order_text(void)
{
	static const char *const sizes[] = { "small", "medium", "large", "huge" };
	char *path = tmp_path("order.db");
	struct store *st;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, "open");
	CHECK_INT(store_order_text(st, "by_size", sizes, 4), 0, "collation");
	check_q1(st, "SELECT group_concat(v, ' ') FROM (SELECT column1 AS v FROM (VALUES ('huge'), ('b'), "
		 "('small'), (2), ('large'), ('a'), ('medium'), ('small')) ORDER BY v COLLATE by_size)",
		 "2 small small medium large huge a b");
	check_q1(st, "SELECT count(*) FROM (SELECT column1 COLLATE by_size AS v FROM (VALUES ('huge'), "
		 "('small'), ('smal'), ('small')) GROUP BY v)", "3");
	check_q1(st, "SELECT 'large' COLLATE by_size < 'huge' AND 'b' COLLATE by_size > 'huge' AND "
		 "NOT ('smalll' COLLATE by_size = 'small')", "1");
	store_close(st);
	free(path);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_store.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_open();
	test_cells();
	test_bulk();
	test_results();
	test_command_results();
	test_sweep();
	test_functions();
	test_param();
	test_group();
	test_order_text();
	test_query();
	test_split();
	test_foreign();
	test_transactions();
	test_writer();
	bench();
	rmdir(dir);
	return test_done();
}
