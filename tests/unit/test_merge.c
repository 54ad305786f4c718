/* test_merge.c: store_merge on temporary files: conflicts, duplicates, cell states, decisions (retry,
 * --force) travelling between copies, shards, hostile inputs.
 * Inputs are made with the store API; hostile edits and every check go through a plain sqlite3
 * connection, so what is checked is what the output file holds. One test reads an input through merge's
 * own connection (store_merge_int.h). */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <sqlite3.h>
#include "test.h"
#include "exitcode.h"
#include "plan.h"
#include "store.h"
#include "store_merge_int.h"
#include "util.h"

static char dir[256];

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}


static void copy_file(const char *from, const char *to)
{
	struct strbuf sb = STRBUF_INIT;
	FILE *f;

	store_remove_files(to);
	if (sb_read_file(&sb, from) < 0)
		BUG("cannot read '%s'", from);
	if (!(f = fopen(to, "wb")) || fwrite(sb.buf, 1, sb.len, f) != sb.len || fclose(f))
		BUG("cannot write '%s'", to);
	sb_release(&sb);
}

/* ---- the files, through a connection of the test's own ---- */

/* Run sql (several statements) on path; 0, or -1 with SQLite's message printed. */
static int sql_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	char *msg = NULL;
	int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_exec(db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK)
		printf("# sql_exec '%s': %s\n", sql, msg ? msg : sqlite3_errmsg(db));
	sqlite3_free(msg);
	sqlite3_close(db);
	return rc == SQLITE_OK ? 0 : -1;
}

/* The first column of the first row as text: "NULL" for NULL, "none" when no row, "error" on an error.
 * The caller frees it. */
static char *sql_text(const char *path, const char *sql)
{
	sqlite3 *db = NULL;
	sqlite3_stmt *s = NULL;
	char *out;
	int rc;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ||
	    sqlite3_prepare_v2(db, sql, -1, &s, NULL)) {
		printf("# sql_text '%s': %s\n", sql, sqlite3_errmsg(db));
		sqlite3_finalize(s);
		sqlite3_close(db);
		return xstrdup("error");
	}
	rc = sqlite3_step(s);
	if (rc == SQLITE_ROW)
		out = xstrdup(sqlite3_column_type(s, 0) == SQLITE_NULL ? "NULL" :
			      (const char *)sqlite3_column_text(s, 0));
	else
		out = xstrdup(rc == SQLITE_DONE ? "none" : "error");
	sqlite3_finalize(s);
	sqlite3_close(db);
	return out;
}

static long long sql_int(const char *path, const char *sql)
{
	char *s = sql_text(path, sql);
	long long v = strtoll(s, NULL, 10);

	free(s);
	return v;
}

static void check_sql(const char *path, const char *sql, const char *want)
{
	char *got = sql_text(path, sql);

	CHECK_STR(got, want, sql);
	free(got);
}

#define CHECK_SQL_INT(path, sql, want) CHECK_INT(sql_int(path, sql), want, sql)

/* Everything a database holds: user_version, its schema, every row of every table (typed), and which
 * companion files exist. "missing" when there is no file. The caller frees it. */
static char *dump(const char *path)
{
	struct strbuf sb = STRBUF_INIT;
	sqlite3 *db = NULL;
	sqlite3_stmt *m = NULL, *s;
	char *p;

	if (access(path, F_OK))
		return xstrdup("missing");
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) ||
	    sqlite3_prepare_v2(db, "SELECT type, name, coalesce(sql, ''), (SELECT user_version FROM "
			       "pragma_user_version) FROM sqlite_master ORDER BY type, name", -1, &m, NULL)) {
		sb_addf(&sb, "error: %s", sqlite3_errmsg(db));
		sqlite3_close(db);
		return sb_detach(&sb);
	}
	while (sqlite3_step(m) == SQLITE_ROW) {
		const char *type = (const char *)sqlite3_column_text(m, 0);
		const char *name = (const char *)sqlite3_column_text(m, 1);

		sb_addf(&sb, "v%d %s %s: %s\n", sqlite3_column_int(m, 3), type, name,
			sqlite3_column_text(m, 2));
		if (strcmp(type, "table"))
			continue;
		p = xasprintf("SELECT * FROM \"%s\"", name);
		if (sqlite3_prepare_v2(db, p, -1, &s, NULL)) {
			sb_addf(&sb, "error: %s\n", sqlite3_errmsg(db));
			free(p);
			continue;
		}
		free(p);
		while (sqlite3_step(s) == SQLITE_ROW) {
			for (int i = 0; i < sqlite3_column_count(s); i++)
				sb_addf(&sb, "%s%d:%s", i ? "|" : "  ", sqlite3_column_type(s, i),
					sqlite3_column_type(s, i) == SQLITE_NULL ? "" :
					(const char *)sqlite3_column_text(s, i));
			sb_addc(&sb, '\n');
		}
		sqlite3_finalize(s);
	}
	sqlite3_finalize(m);
	sqlite3_close(db);
	p = xasprintf("%s-wal", path);
	sb_addf(&sb, "wal %d\n", !access(p, F_OK));
	free(p);
	return sb_detach(&sb);
}

/* ---- inputs, made with the store API ---- */

/* A new input at path (any old one removed) with sweep recorded. */
static struct store *input_open(const char *path)
{
	struct store *st = NULL;

	store_remove_files(path);
	if (store_open(path, STORE_RW, &st))
		BUG("cannot make input '%s'", path);
	return st;
}

static void put_sweep(struct store *st, const char *name, enum spec_per per)
{
	struct spec s;

	memset(&s, 0, sizeof(s));
	s.name = (char *)name;
	s.kernel = "sleep";
	s.text = "sweep: test\n";
	s.hash = 0x5eed;
	s.per = per;
	if (store_put_sweep(st, &s))
		BUG("cannot record sweep %s", name);
}

static int id_cb(const struct store_row *row, void *data)
{
	*(int64_t *)data = row->text[0] ? strtoll(row->text[0], NULL, 10) : 0;
	return 1;
}

/* The id of the cell of sweep with these params, pass and replica (key: plan_key). */
static int64_t cell_id(struct store *st, const char *sweep, const char *params, int pass, const char *replica)
{
	char key[17];
	const char *b[] = { key };
	int64_t id = 0;

	plan_key(sweep, params, pass, replica, key);
	if (store_query(st, "SELECT id FROM cells WHERE key = ?1", b, 1, 1, id_cb, &id) < 0 || !id)
		BUG("no cell %s", params);
	return id;
}

/* Plan a cell of sweep under its plan_key; its id. */
static int64_t add_cell(struct store *st, const char *sweep, const char *params, const char *state)
{
	static uint64_t ord;
	char key[17];
	int added;

	plan_key(sweep, params, 0, "", key);
	if (store_add_cell(st, sweep, key, params, 0, "", ord++, state, &added))
		BUG("cannot add cell %s", params);
	return cell_id(st, sweep, params, 0, "");
}

/* A run of sweep on host hostname, with nworkers workers (rank i on GPU i); its id. */
static int64_t add_run(struct store *st, const char *argv, const char *sweep, const char *hostname,
		       int nworkers)
{
	char *facts = xasprintf("{\"hostname\":\"%s\",\"cpus\":8}", hostname);
	int64_t run, host;

	if (store_run_begin(st, argv, sweep, 0x5eed, &run) || store_put_host(st, facts, &host))
		BUG("cannot begin a run");
	for (int i = 0; i < nworkers; i++) {
		char *uuid = xasprintf("GPU-%s-%d", hostname, i);

		if (store_put_worker(st, run, i, host, i, uuid, "0-3", NULL))
			BUG("cannot add a worker");
		free(uuid);
	}
	free(facts);
	return run;
}

/* An attempt of cell by the worker of rank rank that ends ok with these samples (seconds), metric gflops
 * and, when item is not NULL, one item (item, "t", 1.5). */
static void put_ok(struct store *st, int64_t run, int64_t cell, int rank, double started,
		   const double *samples, int n, double gflops, const char *item)
{
	struct result r;

	result_init(&r);
	r.cell = cell;
	r.worker = rank;
	r.started = started;
	r.wall = 0.5;
	for (int i = 0; i < n; i++) {
		/* What a command's run cost: merge copies it with the sample. */
		struct run_usage u = { samples[i] / 2, samples[i] / 4, 1e6 * (i + 1) };

		result_add_sample(&r, samples[i], 1500);
		result_set_usage(&r, &u);
	}
	result_summarize(&r, INFINITY, NAN);
	result_set_metric(&r, "gflops", gflops);
	if (item)
		result_add_item(&r, item, "t", 1.5);
	if (store_mark_running(st, cell) || store_put_result(st, run, &r, 3, NULL, NULL))
		BUG("cannot store a result");
	result_release(&r);
}

/* An attempt of cell that fails with message why; the cell is quarantined after max_attempts. */
static void put_fail(struct store *st, int64_t run, int64_t cell, int rank, double started, int max_attempts,
		     const char *why)
{
	struct result r;

	result_init(&r);
	r.cell = cell;
	r.worker = rank;
	r.started = started;
	result_fail(&r, RESULT_ERROR, "%s", why);
	if (store_mark_running(st, cell) || store_put_result(st, run, &r, max_attempts, NULL, NULL))
		BUG("cannot store a result");
	result_release(&r);
}

static void check_stats(const struct store_merge_stats *got, const struct store_merge_stats *want,
			const char *what)
{
	char name[160];

#define STAT(f) do { snprintf(name, sizeof(name), "%s: stats." #f, what); \
	CHECK_INT(got->f, want->f, name); } while (0)
	STAT(cells);
	STAT(cells_new);
	STAT(results_new);
	STAT(results_same);
	STAT(conflicts);
	STAT(results_hosts);
	STAT(runs_new);
	STAT(hosts_new);
	STAT(controls_new);
	STAT(probes_new);
	STAT(predictions_new);
#undef STAT
}

/* ---- conflicts ---- */

static const double s123[] = { 1, 2, 3 }, s456[] = { 4, 5, 6 }, s55[] = { 5, 5 }, s9[] = { 9 };

/* Two runs of the same cells, a on host-a and b on host hb: n=1 with other values (a conflict when hb is
 * host-a, a result of its own host otherwise), n=2 with the same (one result); only b ran n=3. */
static void make_conflicting(const char *a, const char *b, const char *hb)
{
	struct store *st;
	int64_t run, c1, c2, c3;

	st = input_open(a);
	put_sweep(st, "s", PER_ANY);
	c1 = add_cell(st, "s", "{\"n\":1}", "planned");
	c2 = add_cell(st, "s", "{\"n\":2}", "planned");
	add_cell(st, "s", "{\"n\":3}", "planned");
	run = add_run(st, "sweep run s.yaml --db a.db", "s", "host-a", 1);
	put_ok(st, run, c1, 0, 1700000001, s123, 3, 10, NULL);
	put_ok(st, run, c2, 0, 1700000002, s55, 2, 7, NULL);
	store_close(st);

	/* Planned in another order: the same cells under other ids. */
	st = input_open(b);
	put_sweep(st, "s", PER_ANY);
	c3 = add_cell(st, "s", "{\"n\":3}", "planned");
	c2 = add_cell(st, "s", "{\"n\":2}", "planned");
	c1 = add_cell(st, "s", "{\"n\":1}", "planned");
	run = add_run(st, "sweep run s.yaml --db b.db", "s", hb, 1);
	put_ok(st, run, c1, 0, 1700000011, s456, 3, 20, "x");
	put_ok(st, run, c2, 0, 1700000012, s55, 2, 7, NULL);
	put_ok(st, run, c3, 0, 1700000013, s9, 1, 1, NULL);
	store_close(st);
}

/* The ok result of the cell with params n=N in a merged database: "median|argv of its run". */
#define KEPT(n) "SELECT r.median || '|' || ru.argv FROM results r JOIN cells c ON c.id = r.cell" \
	" JOIN runs ru ON ru.id = r.run WHERE c.params = '{\"n\":" #n "}' AND r.status = 'ok'"

static void test_conflicts(void)
{
	char *a = tmp_path("conf-a.db"), *b = tmp_path("conf-b.db"), *out = tmp_path("conf-out.db");
	char *out2 = tmp_path("conf-out2.db"), *want;
	struct store_merge_stats stats[2];
	const char *ab[] = { a, b }, *ba[] = { b, a };

	make_conflicting(a, b, "host-a");
	store_remove_files(out);
	CHECK_INT(store_merge(out, ab, 2, NULL, stats), 0, "merge a b");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 3, .cells_new = 3, .results_new = 2,
		    .runs_new = 1, .hosts_new = 1 }, "conflicts: a");
	check_stats(&stats[1], &(struct store_merge_stats){ .cells = 3, .results_new = 1, .results_same = 1,
		    .conflicts = 1, .runs_new = 1 }, "conflicts: b");
	CHECK_SQL_INT(out, "SELECT count(*) FROM results", 3);
	/* n=1: the first input's result is kept, with its samples and metrics. */
	check_sql(out, KEPT(1), "2.0|sweep run s.yaml --db a.db");
	check_sql(out, "SELECT group_concat(seconds, ',') FROM (SELECT s.seconds FROM samples s JOIN"
		  " results r ON r.id = s.result JOIN cells c ON c.id = r.cell WHERE"
		  " c.params = '{\"n\":1}' ORDER BY s.i)",
		  "1.0,2.0,3.0");
	check_sql(out, "SELECT group_concat(m.name || '=' || m.value) FROM metrics m JOIN results r ON"
		  " r.id = m.result JOIN cells c ON c.id = r.cell WHERE c.params = '{\"n\":1}'",
		  "gflops=10.0");
	CHECK_SQL_INT(out, "SELECT count(*) FROM items", 0);
	/* n=2: the same values twice are one result, no conflict. */
	check_sql(out, KEPT(2), "5.0|sweep run s.yaml --db a.db");
	CHECK_SQL_INT(out, "SELECT count(*) FROM results r JOIN cells c ON c.id = r.cell WHERE "
		      "c.params = '{\"n\":2}'", 1);
	check_sql(out, KEPT(3), "9.0|sweep run s.yaml --db b.db");
	CHECK_SQL_INT(out, "SELECT count(*) FROM cells WHERE state = 'ok'", 3);
	/* The other ok result of n=1, whole, in conflicts. */
	CHECK_SQL_INT(out, "SELECT count(*) FROM conflicts", 1);
	check_sql(out, "SELECT n || '|' || median || '|' || mean || '|' || min || '|' || max || '|' ||"
		  " attempt || '|' || started || '|' || noise_ok || '|' || samples || '|' || metrics ||"
		  " '|' || items FROM conflicts",
		  "3|5.0|5.0|4.0|6.0|1|2023-11-14T22:13:31.000Z|1|[4,5,6]|{\"gflops\":20}|"
		  "[[\"x\",\"t\",1.5]]");
	want = xasprintf("11|sweep run s.yaml --db b.db|GPU-host-a-0|%s|%s", b, b);
	check_sql(out, "SELECT (x.cell = (SELECT id FROM cells WHERE params = '{\"n\":1}')) ||"
		  " (x.kept = (SELECT r.id FROM results r JOIN cells c ON c.id = r.cell WHERE"
		  " c.params = '{\"n\":1}' AND r.status = 'ok')) || '|' || ru.argv || '|' || w.gpu_uuid ||"
		  " '|' || m.source || '|' || x.source FROM conflicts x JOIN runs ru ON ru.id = x.run"
		  " JOIN workers w ON w.id = x.worker JOIN merges m ON m.id = x.merge", want);
	free(want);
	check_sql(out, "SELECT count(*) || '|' || group_concat(cells || ',' || results || ',' || conflicts,"
		  " ';') FROM (SELECT * FROM merges ORDER BY id)", "2|3,2,0;0,1,1");

	/* b again: its conflict is known, nothing is added. */
	CHECK_INT(store_merge(out, ba + 0, 1, NULL, stats), 0, "merge b again");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 3, .results_same = 3 },
		    "conflicts: b again");
	CHECK_SQL_INT(out, "SELECT count(*) FROM conflicts", 1);
	CHECK_SQL_INT(out, "SELECT count(*) FROM results", 3);
	CHECK_SQL_INT(out, "SELECT count(*) FROM merges", 2);

	/* The other order keeps the other one: first is the order of the inputs. */
	store_remove_files(out2);
	CHECK_INT(store_merge(out2, ba, 2, NULL, stats), 0, "merge b a");
	check_stats(&stats[1], &(struct store_merge_stats){ .cells = 3, .results_same = 1, .conflicts = 1,
		    .runs_new = 1 }, "conflicts: a after b");
	check_sql(out2, KEPT(1), "5.0|sweep run s.yaml --db b.db");
	want = xasprintf("2.0|[1,2,3]|{\"gflops\":10}|[]|%s", a);
	check_sql(out2, "SELECT median || '|' || samples || '|' || metrics || '|' || items || '|' || source"
		  " FROM conflicts", want);
	free(want);

	store_remove_files(a), store_remove_files(b), store_remove_files(out), store_remove_files(out2);
	free(a), free(b), free(out), free(out2);
}

/* The same, with b on another host: b's n=1 and n=2 are that host's, kept in its own cells (replica host-b,
 * as per: host names them), never a conflict, and n=2 not dropped for having a's figures; merged again, or
 * in the other order, nothing is lost or doubled. */
static void test_hosts_apart(void)
{
	char *a = tmp_path("apart-a.db"), *b = tmp_path("apart-b.db"), *out = tmp_path("apart-out.db");
	char *out2 = tmp_path("apart-out2.db"), key[17], *sql;
	struct store_merge_stats stats[2];
	const char *ab[] = { a, b }, *ba[] = { b, a };

	make_conflicting(a, b, "host-b");
	store_remove_files(out);
	CHECK_INT(store_merge(out, ab, 2, NULL, stats), 0, "merge a b (two hosts)");
	check_stats(&stats[1], &(struct store_merge_stats){ .cells = 3, .cells_new = 2, .results_new = 3,
		    .results_hosts = 2, .runs_new = 1, .hosts_new = 1 }, "hosts apart: b");
	CHECK_SQL_INT(out, "SELECT count(*) FROM conflicts", 0);
	CHECK_SQL_INT(out, "SELECT count(*) FROM results WHERE status = 'ok'", 5);
	check_sql(out, "SELECT group_concat(x, ' ') FROM (SELECT c.params || '@' || c.replica || '=' || r.median ||"
		  " '/' || h.hostname AS x FROM results r JOIN cells c ON c.id = r.cell JOIN workers w ON"
		  " w.id = r.worker JOIN hosts h ON h.id = w.host ORDER BY c.params, c.replica)",
		  "{\"n\":1}@=2.0/host-a {\"n\":1}@host-b=5.0/host-b {\"n\":2}@=5.0/host-a"
		  " {\"n\":2}@host-b=5.0/host-b {\"n\":3}@=9.0/host-b");
	plan_key("s", "{\"n\":1}", 0, "host-b", key);
	sql = xasprintf("SELECT state || '|' || pass || '|' || attempts FROM cells WHERE key = '%s'", key);
	/* made by the merge for b's result, which was its first attempt */
	check_sql(out, sql, "ok|0|1");
	free(sql);
	/* b's samples and metrics came with it */
	check_sql(out, "SELECT group_concat(v) FROM (SELECT m.name || '=' || m.value AS v FROM metrics m JOIN"
		  " results r ON r.id = m.result JOIN cells c ON c.id = r.cell WHERE c.replica = 'host-b' ORDER BY v)",
		  "gflops=20.0,gflops=7.0");
	CHECK_SQL_INT(out, "SELECT count(*) FROM samples s JOIN results r ON r.id = s.result JOIN cells c ON"
		      " c.id = r.cell WHERE c.replica = 'host-b'", 5);

	CHECK_INT(store_merge(out, ba, 2, NULL, stats), 0, "merge b a again");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 3, .results_same = 3 }, "hosts apart: b again");
	check_stats(&stats[1], &(struct store_merge_stats){ .cells = 3, .results_same = 2 }, "hosts apart: a again");
	CHECK_SQL_INT(out, "SELECT count(*) FROM results", 5);

	/* b first: a's n=1 and n=2 go to host-a's cells; the same five results */
	store_remove_files(out2);
	CHECK_INT(store_merge(out2, ba, 2, NULL, stats), 0, "merge b a (two hosts)");
	CHECK_INT(stats[1].results_hosts, 2, "a after b: two results to its host's cells");
	check_sql(out2, "SELECT group_concat(x, ' ') FROM (SELECT c.params || '@' || c.replica || '=' || r.median"
		  " AS x FROM results r JOIN cells c ON c.id = r.cell ORDER BY c.params, c.replica)",
		  "{\"n\":1}@=5.0 {\"n\":1}@host-a=2.0 {\"n\":2}@=5.0 {\"n\":2}@host-a=5.0 {\"n\":3}@=9.0");
	/* the first output merged into the second: host-b's cell brings nothing new and is not left planned */
	{
		const char *one[] = { out };

		CHECK_INT(store_merge(out2, one, 1, NULL, stats), 0, "merge out into out2");
		CHECK_SQL_INT(out2, "SELECT count(*) FROM results", 5);
		CHECK_SQL_INT(out2, "SELECT count(*) FROM cells WHERE state != 'ok'", 0);
		CHECK_INT(stats[0].results_new + stats[0].conflicts, 0, "out into out2: nothing new");
	}

	store_remove_files(a), store_remove_files(b), store_remove_files(out), store_remove_files(out2);
	free(a), free(b), free(out), free(out2);
}

/* ---- duplicates ---- */

/* The same database with every id moved by 100: only the natural keys still match. */
static const char renumber_sql[] =
	"UPDATE hosts SET id = id + 100;"
	"UPDATE runs SET id = id + 100;"
	"UPDATE workers SET id = id + 100, run = run + 100, host = host + 100;"
	"UPDATE cells SET id = id + 100;"
	"UPDATE results SET id = id + 100, cell = cell + 100, run = run + 100, worker = worker + 100;"
	"UPDATE samples SET result = result + 100;"
	"UPDATE metrics SET result = result + 100;"
	"UPDATE items SET result = result + 100;"
	"UPDATE controls SET id = id + 100, run = run + 100, worker = worker + 100;";

#define COUNTS "SELECT (SELECT count(*) FROM hosts) || ' hosts ' || (SELECT count(*) FROM runs) ||" \
	" ' runs ' ||" \
	" (SELECT count(*) FROM workers) || ' workers ' || (SELECT count(*) FROM cells) || ' cells ' ||" \
	" (SELECT count(*) FROM results) || ' results ' || (SELECT count(*) FROM samples) || ' samples ' ||" \
	" (SELECT count(*) FROM controls) || ' controls'"

static void test_duplicates(void)
{
	char *a = tmp_path("dup-a.db"), *copy = tmp_path("dup-copy.db"), *out = tmp_path("dup-out.db");
	char *d1, *d2;
	struct store_merge_stats stats[2];
	const char *in[] = { a, copy };
	struct store *st;
	struct result r;
	int64_t run, c1, c2, c3, c4;

	st = input_open(a);
	put_sweep(st, "s", PER_ANY);
	c1 = add_cell(st, "s", "{\"n\":1}", "planned");
	c2 = add_cell(st, "s", "{\"n\":2}", "planned");
	c3 = add_cell(st, "s", "{\"n\":3}", "planned");
	c4 = add_cell(st, "s", "{\"n\":4}", "planned");
	run = add_run(st, "sweep run s.yaml", "s", "host-a", 2);
	put_ok(st, run, c1, 0, 1700000100, s123, 3, 10, "x");
	put_fail(st, run, c2, 1, 1700000101, 3, "bad input");
	result_init(&r);
	r.worker = 1;
	r.started = 1700000102;
	result_add_sample(&r, 2, 0);
	result_summarize(&r, INFINITY, NAN);
	CHECK_INT(store_put_control(st, run, "s", "{\"n\":0}", &r, NULL), 0, "control");
	result_release(&r);
	store_close(st);

	store_remove_files(out);
	CHECK_INT(store_merge(out, in, 1, NULL, stats), 0, "merge a");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 4, .cells_new = 4, .results_new = 2,
		    .runs_new = 1, .hosts_new = 1, .controls_new = 1 }, "duplicates: a");
	check_sql(out, COUNTS, "1 hosts 1 runs 2 workers 4 cells 2 results 3 samples 1 controls");
	d1 = dump(out);

	CHECK_INT(store_merge(out, in, 1, NULL, stats), 0, "merge a again");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 4, .results_same = 2 },
		    "duplicates: a again");
	d2 = dump(out);
	CHECK(!strcmp(d1, d2), "merging a again leaves the output as it was (%zu bytes of dump)", strlen(d2));
	free(d2);

	/* The same rows under other ids: matched by what they are, not by their ids. */
	copy_file(a, copy);
	CHECK_INT(sql_exec(copy, renumber_sql), 0, "renumber the copy");
	check_sql(copy, "SELECT min(id) || ' ' || (SELECT min(id) FROM hosts) || ' ' || (SELECT min(id) FROM"
		  " cells) || ' ' || (SELECT min(id) FROM workers) FROM runs", "101 101 101 101");
	CHECK_INT(store_merge(out, in, 2, NULL, stats), 0, "merge a and its renumbered copy");
	check_stats(&stats[1], &(struct store_merge_stats){ .cells = 4, .results_same = 2 },
		    "duplicates: renumbered copy");
	d2 = dump(out);
	CHECK(!strcmp(d1, d2), "a renumbered copy adds nothing (%zu bytes of dump)", strlen(d2));
	free(d2);

	/* a grows: a cell, a result of the run merged while it ran (which ends), and a second run on the
	 * same host. Only those come over. */
	CHECK_INT(store_open(a, STORE_RW, &st), 0, "reopen a");
	add_cell(st, "s", "{\"n\":5}", "planned");
	put_ok(st, run, c3, 1, 1700000103, s9, 1, 3, NULL);
	CHECK_INT(store_run_end(st, run, "ok"), 0, "run ends");
	run = add_run(st, "sweep run s.yaml", "s", "host-a", 1);
	put_ok(st, run, c4, 0, 1700000200, s55, 2, 4, NULL);
	store_close(st);
	CHECK_INT(store_merge(out, in, 1, NULL, stats), 0, "merge grown a");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 5, .cells_new = 1, .results_new = 2,
		    .results_same = 2, .runs_new = 1 }, "duplicates: grown a");
	check_sql(out, COUNTS, "1 hosts 2 runs 3 workers 5 cells 4 results 6 samples 1 controls");
	check_sql(out, "SELECT group_concat(status || (finished IS NOT NULL), ' ') FROM (SELECT * FROM runs"
		  " ORDER BY id)", "ok1 running0");
	check_sql(out, "SELECT group_concat(state, ' ') FROM (SELECT state FROM cells ORDER BY"
		  " json_extract(params, '$.n'))", "ok planned ok ok planned");
	d1 = (free(d1), dump(out));

	/* Again, and the stale renumbered copy (its run still running): nothing moves. */
	CHECK_INT(store_merge(out, in, 2, NULL, stats), 0, "merge grown a and the stale copy");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 5, .results_same = 4 },
		    "duplicates: grown a again");
	check_stats(&stats[1], &(struct store_merge_stats){ .cells = 4, .results_same = 2 },
		    "duplicates: stale copy");
	d2 = dump(out);
	CHECK(!strcmp(d1, d2), "grown a again and a stale copy add nothing (%zu bytes of dump)", strlen(d2));
	free(d2);
	free(d1);

	store_remove_files(a), store_remove_files(copy), store_remove_files(out);
	free(a), free(copy), free(out);
}

/* ---- cell states ---- */

#define STATES "SELECT group_concat(state || ':' || coalesce(error, '-'), ' ') FROM (SELECT * FROM cells" \
	" ORDER BY json_extract(params, '$.n'))"

static void test_states(void)
{
	char *a = tmp_path("st-a.db"), *b = tmp_path("st-b.db"), *out = tmp_path("st-out.db");
	struct store_merge_stats stats[1];
	const char *in[1];
	struct store *st;
	int64_t run, c[10];

	st = input_open(a);
	put_sweep(st, "s", PER_ANY);
	for (int n = 1; n <= 9; n++) {
		char *p = xasprintf("{\"n\":%d}", n);

		c[n] = add_cell(st, "s", p, n == 6 ? "template" : "planned");
		free(p);
	}
	run = add_run(st, "sweep run s.yaml --db a.db", "s", "host-a", 1);
	CHECK_INT(store_mark_running(st, c[2]), 0, "n=2 running");
	put_ok(st, run, c[3], 0, 1700000300, s9, 1, 1, NULL);
	put_fail(st, run, c[4], 0, 1700000301, 1, "boom");
	put_fail(st, run, c[7], 0, 1700000302, 3, "flaky");
	store_close(st);
	/* n=5 says ok without an ok result. */
	CHECK_INT(sql_exec(a, "UPDATE cells SET state = 'ok' WHERE params = '{\"n\":5}'"), 0, "fake ok");
	check_sql(a, STATES, "planned:- running:- ok:- quarantined:boom ok:- template:- planned:flaky "
		  "planned:- planned:-");

	store_remove_files(out);
	in[0] = a;
	CHECK_INT(store_merge(out, in, 1, NULL, stats), 0, "merge a");
	check_sql(out, STATES, "planned:- planned:- ok:- quarantined:boom planned:- template:- planned:flaky "
		  "planned:- planned:-");
	check_sql(out, "SELECT group_concat(attempts, ' ') FROM (SELECT attempts FROM cells WHERE"
		  " json_extract(params, '$.n') IN (2, 4, 7) ORDER BY id)", "1 1 1");

	/* b: n=8 quarantined (planned here: it takes that), n=3 quarantined (ok here: it stays ok), n=9
	 * running (planned here: it stays planned), n=5 ok with its ok result (now ok here). */
	st = input_open(b);
	put_sweep(st, "s", PER_ANY);
	c[3] = add_cell(st, "s", "{\"n\":3}", "planned");
	c[5] = add_cell(st, "s", "{\"n\":5}", "planned");
	c[8] = add_cell(st, "s", "{\"n\":8}", "planned");
	c[9] = add_cell(st, "s", "{\"n\":9}", "planned");
	run = add_run(st, "sweep run s.yaml --db b.db", "s", "host-b", 1);
	put_fail(st, run, c[8], 0, 1700000400, 1, "bad 8");
	put_fail(st, run, c[3], 0, 1700000401, 1, "late");
	CHECK_INT(store_mark_running(st, c[9]), 0, "n=9 running");
	put_ok(st, run, c[5], 0, 1700000402, s9, 1, 1, NULL);
	store_close(st);
	check_sql(b, STATES, "quarantined:late ok:- quarantined:bad 8 running:-");

	in[0] = b;
	CHECK_INT(store_merge(out, in, 1, NULL, stats), 0, "merge b");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 4, .results_new = 3, .runs_new = 1,
		    .hosts_new = 1 }, "states: b");
	check_sql(out, STATES, "planned:- planned:- ok:- quarantined:boom ok:- template:- planned:flaky "
		  "quarantined:bad 8 planned:-");
	check_sql(out, "SELECT attempts FROM cells WHERE params = '{\"n\":8}'", "1");
	check_sql(out, "SELECT group_concat(status, ' ') FROM (SELECT r.status FROM results r JOIN cells c ON"
		  " c.id = r.cell WHERE c.params = '{\"n\":3}' ORDER BY r.id)", "ok error");

	store_remove_files(a), store_remove_files(b), store_remove_files(out);
	free(a), free(b), free(out);
}

/* ---- decisions ---- */

/* Each cell as n:state:attempts:the statuses of its results, in id order. */
#define DECIDED \
	"SELECT group_concat(x, ' ') FROM (SELECT json_extract(c.params, '$.n') || ':' || c.state || ':' ||" \
	" c.attempts || ':' || coalesce((SELECT group_concat(t) FROM (SELECT r.status AS t FROM results r" \
	" WHERE r.cell = c.id ORDER BY r.id)), '-') AS x FROM cells c ORDER BY c.id)"

/* When each cell was last decided on. */
#define DECISIONS "SELECT group_concat(decided, ' ') FROM (SELECT decided FROM cells ORDER BY id)"

static struct store *reopen(const char *path)
{
	struct store *st = NULL;

	if (store_open(path, STORE_RW, &st))
		BUG("cannot open '%s'", path);
	return st;
}

/*
 * A retry or --force made on one database holds in a copy merged from it (a shard seeded again), and a
 * copy older than the decision merged back brings none of what it undid (no quarantine, no ok result
 * again, no conflict); once both have the decision, the results decide as ever.
 */
static void test_decisions(void)
{
	char *a = tmp_path("dec-a.db"), *b = tmp_path("dec-b.db"), *want;
	struct store_merge_stats stats[1];
	uint64_t n = 0, cells = 0, sup = 0;
	const char *in[1];
	struct store *st;
	int64_t run, c1, c2;

	st = input_open(a);
	put_sweep(st, "s", PER_ANY);
	c1 = add_cell(st, "s", "{\"n\":1}", "planned");
	c2 = add_cell(st, "s", "{\"n\":2}", "planned");
	run = add_run(st, "sweep run s.yaml --db a.db", "s", "host-a", 1);
	put_ok(st, run, c1, 0, 1700000500, s9, 1, 1, NULL);
	put_fail(st, run, c2, 0, 1700000501, 1, "boom");
	store_close(st);
	store_remove_files(b);
	in[0] = a;
	CHECK_INT(store_merge(b, in, 1, NULL, stats), 0, "decisions: b, a copy of a");
	check_sql(b, DECIDED, "1:ok:1:ok 2:quarantined:1:error");

	/* a decides: n=1 measured again, n=2 retried */
	st = reopen(a);
	CHECK_INT(store_begin(st) ||
		  store_force(st, "s", "json_extract(c.params, '$.n') = 1", NULL, 0, &cells, &sup) ||
		  store_retry(st, "s", RETRY_QUARANTINED, NULL, NULL, 0, &n) || store_commit(st), 0,
		  "force and retry");
	store_close(st);
	CHECK_INT((long long)(cells + sup + n), 3, "one forced, one superseded, one retried");
	check_sql(a, DECIDED, "1:planned:0:superseded 2:planned:0:error");
	CHECK_SQL_INT(a, "SELECT count(*) FROM cells WHERE decided IS NOT NULL", 2);

	/* the older copy merged back: the same results, nothing undone */
	in[0] = b;
	CHECK_INT(store_merge(a, in, 1, NULL, stats), 0, "merge the older copy into a");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 2, .results_same = 2 },
		    "decisions: b into a");
	CHECK_INT(stats[0].cells_decided, 0, "a keeps its own decisions");
	check_sql(a, DECIDED, "1:planned:0:superseded 2:planned:0:error");

	/* a merged into the copy: it takes both decisions */
	in[0] = a;
	CHECK_INT(store_merge(b, in, 1, NULL, stats), 0, "merge a into the copy");
	check_stats(&stats[0], &(struct store_merge_stats){ .cells = 2, .results_same = 2 },
		    "decisions: a into b");
	CHECK_INT(stats[0].cells_decided, 2, "the copy takes a's decisions");
	check_sql(b, DECIDED, "1:planned:0:superseded 2:planned:0:error");
	want = sql_text(a, DECISIONS);
	check_sql(b, DECISIONS, want);
	free(want);
	CHECK_SQL_INT(b, "SELECT count(*) FROM cells WHERE decided IS NOT NULL AND error IS NULL", 2);

	/* measured again in a (n=1 ok, n=2 fails again): the same decision on both sides, the results
	 * decide */
	st = reopen(a);
	run = add_run(st, "sweep run s.yaml --db a.db", "s", "host-a", 1);
	put_ok(st, run, c1, 0, 1700000600, s123, 3, 1, NULL);
	put_fail(st, run, c2, 0, 1700000601, 1, "boom again");
	store_close(st);
	CHECK_INT(store_merge(b, in, 1, NULL, stats), 0, "merge a, measured again, into the copy");
	CHECK_INT(stats[0].cells_decided, 0, "no decision newer than the copy's");
	check_sql(b, DECIDED, "1:ok:1:superseded,ok 2:quarantined:1:error,error");
	CHECK_SQL_INT(b, "SELECT count(*) FROM conflicts", 0);

	store_remove_files(a), store_remove_files(b);
	free(a), free(b);
}

/* ---- shards ---- */

static int ids_cb(const struct store_row *row, void *data)
{
	struct { int64_t v[16]; int n; } *ids = data;

	if (ids->n < 16)
		ids->v[ids->n++] = strtoll(row->text[0], NULL, 10);
	return 0;
}

/* The shard of a cell by the rule: plan_key of its sweep, params and pass without replica, mod k. */
static unsigned shard_of(const char *sweep, const char *params, unsigned k)
{
	char key[17];

	plan_key(sweep, params, 0, "", key);
	return (unsigned)(strtoull(key, NULL, 16) % k);
}

static void test_shards(void)
{
	enum { NS = 12, NH = 4, K = 3 };
	char *in_path = tmp_path("sh-in.db"), *out = tmp_path("sh-out.db");
	struct { int64_t v[16]; int n; } ids = { { 0 }, 0 };
	const char *in[] = { in_path };
	struct store_merge_stats stats[1];
	unsigned want_cells[K] = { 0 }, want_results[K] = { 0 }, want_templates[K] = { 0 }, sum_cells = 0;
	unsigned sum_results = 0;
	struct store *st;
	int64_t run;
	int added;

	st = input_open(in_path);
	put_sweep(st, "s", PER_ANY);
	put_sweep(st, "h", PER_HOST);
	run = add_run(st, "sweep run", "s", "host-a", 1);
	for (int n = 0; n < NS; n++) {
		char *p = xasprintf("{\"n\":%d}", n);

		put_ok(st, run, add_cell(st, "s", p, "planned"), 0, 1700000500 + n, s9, 1, 1, NULL);
		want_cells[shard_of("s", p, K)]++;
		want_results[shard_of("s", p, K)]++;
		free(p);
	}
	/* Per-host templates and their replicas on two hosts: a replica goes with its template. */
	for (int m = 0; m < NH; m++) {
		char *p = xasprintf("{\"m\":%d}", m);

		add_cell(st, "h", p, "template");
		want_cells[shard_of("h", p, K)] += 3;
		want_templates[shard_of("h", p, K)]++;
		want_results[shard_of("h", p, K)] += 2;
		free(p);
	}
	CHECK_INT(store_replicate(st, "h", "hostA", &added), 0, "replicate A");
	CHECK_INT(store_replicate(st, "h", "hostB", &added), 0, "replicate B");
	CHECK_INT(store_query(st, "SELECT id FROM cells WHERE replica != '' ORDER BY id", NULL, 0, 1, ids_cb,
			      &ids), 0, "replica ids");
	CHECK_INT(ids.n, 2 * NH, "replicas");
	for (int i = 0; i < ids.n; i++)
		put_ok(st, run, ids.v[i], 0, 1700000600 + i, s9, 1, 1, NULL);
	store_close(st);

	for (unsigned k = 0; k < K; k++) {
		struct store_merge_opts o = { .shard = k, .nshards = K };
		char name[64];
		int wrong = 0;

		store_remove_files(out);
		snprintf(name, sizeof(name), "merge shard %u/%u", k, (unsigned)K);
		CHECK_INT(store_merge(out, in, 1, &o, stats), 0, name);
		snprintf(name, sizeof(name), "shard %u/%u", k, (unsigned)K);
		/* The stats count the cells a run measures: the replicas, not their templates. */
		check_stats(&stats[0], &(struct store_merge_stats){
			    .cells = want_cells[k] - want_templates[k], .cells_new = want_cells[k] - want_templates[k],
			    .results_new = want_results[k], .runs_new = 1, .hosts_new = 1 }, name);
		snprintf(name, sizeof(name), "shard %u/%u: cells in the output", k, (unsigned)K);
		CHECK_INT(sql_int(out, "SELECT count(*) FROM cells"), want_cells[k], name);
		snprintf(name, sizeof(name), "shard %u/%u: results in the output", k, (unsigned)K);
		CHECK_INT(sql_int(out, "SELECT count(*) FROM results"), want_results[k], name);
		/* Each cell of the input is in the output exactly when it is of this shard. */
		for (int n = 0; n < NS + NH; n++) {
			const char *sweep = n < NS ? "s" : "h";
			char *p = n < NS ? xasprintf("{\"n\":%d}", n) : xasprintf("{\"m\":%d}", n - NS);
			char *sql = xasprintf("SELECT count(*) FROM cells WHERE sweep = '%s' AND"
					      " params = '%s'", sweep, p);
			long long got = sql_int(out, sql);
			long long want = shard_of(sweep, p, K) != k ? 0 : n < NS ? 1 : 3;

			wrong += got != want;
			free(sql);
			free(p);
		}
		snprintf(name, sizeof(name), "shard %u/%u: cells of another shard or missing ones", k,
			 (unsigned)K);
		CHECK_INT(wrong, 0, name);
		sum_cells += want_cells[k];
		sum_results += want_results[k];
		CHECK(want_cells[k] > 0, "shard %u/%u is not empty (%u cells)", k, (unsigned)K,
		      want_cells[k]);
	}
	CHECK_INT(sum_cells, NS + 3 * NH, "the shards hold every cell once");
	CHECK_INT(sum_results, NS + 2 * NH, "the shards hold every result once");

	store_remove_files(in_path), store_remove_files(out);
	free(in_path), free(out);
}

/* ---- hostile inputs ---- */

/* Merging in[0..n-1] into out fails with a message holding want, and out is as before; into a missing
 * output (when fresh), it fails and leaves no file. */
static void check_refused(const char *out, const char *const *in, int n, int fresh, const char *what,
			  const char *want, const char *before)
{
	struct store_merge_stats stats[2];
	char *msg, *after, *path = tmp_path("fresh.db");
	int rc;

	test_capture_start();
	rc = store_merge(out, in, n, NULL, stats);
	msg = test_capture_end();
	for (char *p = msg; *p; p++)
		if (*p == '\n')
			*p = p[1] ? ' ' : '\0';
	/* an input refused is the user's to change (exit 2); an output refused is FAIL_UNSAFE (exit 1), as
	 * a report's --out over the database it reads */
	CHECK_INT(rc, strstr(want, "is the database being read") ? FAIL_UNSAFE : FAIL_USAGE, what);
	CHECK(strstr(msg, want) != NULL, "%s: the message says '%s': %s", what, want, msg);
	after = dump(out);
	CHECK(!strcmp(after, before), "%s: the output is as it was (dump %zu bytes, %zu before)", what,
	      strlen(after), strlen(before));
	free(after);
	free(msg);
	if (fresh) {
		store_remove_files(path);
		test_capture_start();
		rc = store_merge(path, in, n, NULL, NULL);
		free(test_capture_end());
		CHECK(rc == FAIL_USAGE && access(path, F_OK) != 0,
		      "%s: refused (%d) into a new output, none left behind", what, rc);
	}
	free(path);
}

static void test_hostile(void)
{
	char *good = tmp_path("good.db"), *base = tmp_path("base.db"), *out = tmp_path("h-out.db");
	char *bad = tmp_path("bad.db"), *link = tmp_path("h-out-link.db"), *ok_out = tmp_path("h-ok.db");
	const char *in[] = { good, bad };
	int ver = store_schema_version();
	char *before, *after, newer[64], older[64], newer_msg[96];
	struct store *st;
	int64_t run, c1, c2;
	struct {
		const char *what, *sql, *msg;
	} edits[] = {
		{ "a newer user_version", newer, newer_msg },
		{ "an older user_version", older,
		  ver == 1 ? "is not a sweep database (no sweep schema version)" :
		  "let this sweep migrate a copy" },
		{ "a trigger on a table merge reads", "CREATE TABLE pwned(x); CREATE TRIGGER evil AFTER"
		  " UPDATE ON cells BEGIN INSERT INTO pwned VALUES(1); END", "has a trigger ('evil')" },
		{ "a trigger on a table of its own", "CREATE TABLE pwned(x); CREATE TRIGGER evil2 AFTER"
		  " INSERT ON pwned BEGIN SELECT 1; END", "has a trigger ('evil2')" },
		{ "a trigger under the name of the schema's own", "CREATE TABLE pwned(x);"
		  " DROP TRIGGER cells_count_delete; CREATE TRIGGER cells_count_delete AFTER DELETE ON cells"
		  " BEGIN INSERT INTO pwned VALUES(1); END", "has a trigger ('cells_count_delete')" },
		{ "a view shadowing a table", "ALTER TABLE samples RENAME TO samples0; CREATE VIEW samples AS"
		  " SELECT result, i, seconds * 1000 AS seconds, sm_clock FROM samples0",
		  "it has no table 'samples'" },
		{ "a missing column", "ALTER TABLE results DROP COLUMN stderr",
		  "table 'results' has no column 'stderr'" },
		{ "a generated column", "ALTER TABLE results ADD COLUMN evil AS (median * 2)",
		  "column results.evil is generated" },
		{ "an extra column", "ALTER TABLE cells ADD COLUMN note TEXT; UPDATE cells SET note = 'lost'",
		  "table 'cells' has column 'note'" },
		{ "text in a real column", "UPDATE results SET median = 'fast' WHERE status = 'ok'",
		  "results.median holds text" },
		{ "a blob in a real column", "UPDATE samples SET seconds = x'00' WHERE i = 0",
		  "samples.seconds holds a blob" },
		{ "a real in an integer column", "UPDATE cells SET pass = 0.5 WHERE params = '{\"n\":1}'",
		  "cells.pass holds a real number" },
		{ "a key that is not plan_key",
		  "UPDATE cells SET params = '{\"n\":99}' WHERE params = '{\"n\":1}'",
		  "does not have the key of its sweep, params, pass and replica" },
		{ "a negative peak RSS", "UPDATE samples SET peak_rss = -5 WHERE i = 0",
		  "peak_rss is -5, a negative count" },
		{ "a negative CPU time", "UPDATE results SET cpu_sys = -0.5 WHERE status = 'ok'",
		  "cpu_sys is -0.5, a negative time" },
		{ "a result of a cell that does not exist",
		  "UPDATE results SET cell = 999 WHERE status = 'error'",
		  "1 row of results names a row of cells that is not there" },
	};
	int fd, rootpage, pagesize;
	char page[65536];

	snprintf(newer, sizeof(newer), "PRAGMA user_version = %d", ver + 1);
	snprintf(newer_msg, sizeof(newer_msg), "has schema version %d, newer than this sweep knows", ver + 1);
	snprintf(older, sizeof(older), "PRAGMA user_version = %d", ver - 1);

	st = input_open(good);
	put_sweep(st, "s", PER_ANY);
	c1 = add_cell(st, "s", "{\"n\":1}", "planned");
	c2 = add_cell(st, "s", "{\"n\":2}", "planned");
	add_cell(st, "s", "{\"n\":3}", "planned");
	run = add_run(st, "sweep run s.yaml --db good.db", "s", "host-g", 1);
	put_ok(st, run, c1, 0, 1700000700, s123, 3, 10, "x");
	put_fail(st, run, c2, 0, 1700000701, 3, "bad input");
	store_close(st);
	st = input_open(base);
	put_sweep(st, "s", PER_ANY);
	c1 = add_cell(st, "s", "{\"n\":1}", "planned");
	add_cell(st, "s", "{\"n\":4}", "planned");
	run = add_run(st, "sweep run s.yaml --db base.db", "s", "host-p", 1);
	put_ok(st, run, c1, 0, 1700000800, s456, 3, 20, NULL);
	store_close(st);

	/* The good input alone is merged: what refuses a copy of it is the edit. */
	store_remove_files(ok_out);
	in[1] = good;
	CHECK_INT(store_merge(ok_out, in, 1, NULL, NULL), 0, "the unedited input merges");
	check_sql(ok_out, COUNTS, "1 hosts 1 runs 1 workers 3 cells 2 results 3 samples 0 controls");
	{
		static const char usage[] = "SELECT (SELECT group_concat(cpu_user || ':' || cpu_sys || ':' || peak_rss,"
			" ' ') FROM (SELECT * FROM samples ORDER BY i)) || ' | ' || (SELECT cpu_user || ':' || cpu_sys ||"
			" ':' || peak_rss FROM results WHERE status = 'ok')";
		char *want = sql_text(good, usage), *got = sql_text(ok_out, usage);

		CHECK(!strcmp(want, got) && strstr(want, ":3000000 | "), "each run's usage and the result's are "
		      "copied: '%s' from '%s'", got, want);
		free(want);
		free(got);
	}
	store_remove_files(out);
	in[0] = base;
	CHECK_INT(store_merge(out, in, 1, NULL, NULL), 0, "merge base");
	{
		/* another writer holds out: busy, its own kind (exit 1: no fault of the input), nothing written */
		struct store_lock lock;
		char *was = dump(out), *now;
		int rc;

		CHECK_INT(store_lock_path(out, "a test", &lock), 0, "hold the output's writer lock");
		test_capture_start();
		rc = store_merge(out, in, 1, NULL, NULL);
		free(test_capture_end());
		store_unlock(&lock);
		CHECK_INT(rc, FAIL_BUSY, "an output another sweep writes is busy");
		now = dump(out);
		CHECK(!strcmp(was, now), "a busy output is as it was");
		free(now);
		free(was);
	}
	in[0] = good;
	in[1] = bad;
	before = dump(out);
	CHECK(strstr(before, "host-p") && !strstr(before, "host-g"), "the output holds base only");

	for (size_t i = 0; i < ARRAY_SIZE(edits); i++) {
		char name[96];

		copy_file(good, bad);
		snprintf(name, sizeof(name), "%s: the edit applies", edits[i].what);
		CHECK_INT(sql_exec(bad, edits[i].sql), 0, name);
		check_refused(out, in, 2, 1, edits[i].what, edits[i].msg, before);
	}

	/* Not SQLite at all. */
	store_remove_files(bad);
	{
		FILE *f = fopen(bad, "w");

		for (int i = 0; i < 200; i++)
			fputs("this is not a database\n", f);
		fclose(f);
	}
	check_refused(out, in, 2, 1, "not an SQLite file", "file is not a database", before);

	/* A page of results overwritten: quick_check finds it. */
	copy_file(good, bad);
	rootpage = (int)sql_int(bad, "SELECT rootpage FROM sqlite_master WHERE name = 'results'");
	pagesize = (int)sql_int(bad, "PRAGMA page_size");
	CHECK(rootpage > 1 && pagesize > 0 && pagesize <= (int)sizeof(page), "root page %d of %d bytes",
	      rootpage, pagesize);
	memset(page, 0xff, sizeof(page));
	fd = open(bad, O_WRONLY);
	CHECK(fd >= 0 && pwrite(fd, page, (size_t)pagesize, (off_t)(rootpage - 1) * pagesize) == pagesize,
	      "overwrite page %d", rootpage);
	close(fd);
	check_refused(out, in, 2, 1, "a corrupt page", "the database is corrupt", before);

	/* The output as an input, by its name or through a link. */
	in[1] = out;
	check_refused(out, in, 2, 0, "the output named as an input", "is the database being read", before);
	unlink(link);
	CHECK_INT(symlink(out, link), 0, "symlink to the output");
	in[1] = link;
	check_refused(out, in, 2, 0, "a link to the output as an input", "is the database being read", before);

	/* And the dump sees a change: the good input alone does change the output. */
	CHECK_INT(store_merge(out, in, 1, NULL, NULL), 0, "merge the good input");
	after = dump(out);
	CHECK(strcmp(after, before) && strstr(after, "host-g"), "a merge that succeeds changes the dump");
	free(after);
	free(before);

	unlink(link);
	store_remove_files(good), store_remove_files(base), store_remove_files(out), store_remove_files(bad), store_remove_files(ok_out);
	free(good), free(base), free(out), free(bad), free(link), free(ok_out);
}

/* ---- merge's connection to an input ---- */

/*
 * Merge reads an input with SELECTs of double-quoted column names (store_merge_input_select). With
 * SQLite's legacy double-quoted string literals on, a quoted name that is not a column reads as its own
 * text, and only the column checks of store_merge_input_open kept that from mattering. The input's
 * connection has them off: a description naming a column the input lacks fails to prepare.
 */
static void test_quoted_names(void)
{
	static const struct mcol cols[] = { { "key", K_TEXT }, { "no_such_column", K_TEXT } };
	const struct mtable planted = { "cells", cols, (int)ARRAY_SIZE(cols), 0, NULL };
	char *path = tmp_path("dqs.db"), msg[160] = "", got[64] = "";
	struct store_merge_stats stats;
	struct input in;
	struct strbuf sb = STRBUF_INIT;
	sqlite3_stmt *s = NULL;
	struct store *st;
	int rc, rows = 0;

	st = input_open(path);
	put_sweep(st, "s", PER_ANY);
	add_cell(st, "s", "{\"n\":1}", "planned");
	store_close(st);
	memset(&in, 0, sizeof(in));
	memset(&stats, 0, sizeof(stats));
	in.path = path;
	in.st = &stats;
	CHECK_INT(store_merge_input_open(&in), 0, "merge opens and checks the input");

	/* The real description of cells reads its one row, well typed: the connection works. */
	store_merge_input_select(&sb, &store_merge_tables[T_CELLS], 0, "");
	rc = sqlite3_prepare_v2(in.db, sb.buf, -1, &s, NULL);
	while (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW)
		rows += !store_merge_input_check_row(&in, &store_merge_tables[T_CELLS], s);
	sqlite3_finalize(s);
	s = NULL;
	CHECK_INT(rows, 1, "the cells of the input, read through store_merge_input_select");

	/* A planted column: an error, not the text 'no_such_column' in every row. */
	store_merge_input_select(&sb, &planted, 0, "");
	rc = sqlite3_prepare_v2(in.db, sb.buf, -1, &s, NULL);
	snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(in.db));
	if (rc == SQLITE_OK && sqlite3_step(s) == SQLITE_ROW && sqlite3_column_text(s, 1))
		snprintf(got, sizeof(got), "%s", (const char *)sqlite3_column_text(s, 1));
	sqlite3_finalize(s);
	CHECK(rc != SQLITE_OK && strstr(msg, "no such column: no_such_column"),
	      "a quoted name that is not a column does not prepare (%d: %s; read '%s')", rc, msg, got);

	store_merge_input_close(&in);
	sb_release(&sb);
	store_remove_files(path);
	free(path);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_merge.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_conflicts();
	test_hosts_apart();
	test_duplicates();
	test_states();
	test_decisions();
	test_shards();
	test_hostile();
	test_quoted_names();
	rmdir(dir);
	return test_done();
}
