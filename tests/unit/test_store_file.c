/* test_store_file.c: the database as a file (one writer whatever name reaches it, outputs never over a
 * database or its side files) and the guard on SQL a person types (sweep sql). */
#include <fcntl.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <unistd.h>
#include "exitcode.h"
#include "test.h"
#include "store.h"
#include "util.h"

static char dir[256];

static char *tmp_path(const char *name)
{
	return xasprintf("%s/%s", dir, name);
}

static void write_file(const char *path, const void *data, size_t n)
{
	FILE *f = fopen(path, "wb");

	fwrite(data, 1, n, f);
	fclose(f);
}

/* The file's bytes as a string (the caller frees it); "" when it cannot be read. */
static char *read_all(const char *path)
{
	struct strbuf sb = STRBUF_INIT;

	if (sb_read_file(&sb, path))
		sb_adds(&sb, "");
	return sb_detach(&sb);
}

/* A new sweep database at path with one cell, closed (no -wal left). */
static void make_db(const char *path)
{
	struct store *st;
	int added;

	CHECK_INT(store_open(path, STORE_RW, &st), 0, path);
	CHECK_INT(store_add_cell(st, "s", "k", "{\"ms\":1}", 0, "", 0, "planned", &added), 0, "a cell");
	store_close(st);
}

/* What was said since test_capture_start(), without its last newline (the caller frees it). */
static char *said(void)
{
	char *m = test_capture_end();
	size_t n = strlen(m);

	if (n && m[n - 1] == '\n')
		m[n - 1] = '\0';
	return m;
}

/* The call returns ret and says want. */
#define CHECK_SAYS(call, ret, want, name) do { char *m_; int r_; test_capture_start(); r_ = (call); \
	m_ = said(); CHECK(r_ == (ret) && strstr(m_, want), "%s: returns %d, says: %s", name, r_, m_); \
	free(m_); } while (0)

/* One writer per file: a second one through a symbolic link (to the file or its folder) finds the same
 * lock; a file with two names is not written at all; links where SQLite or the lock keep their files. */
static void test_one_writer(void)
{
	char *db = tmp_path("w.db"), *sym = tmp_path("sym.db"), *folder = tmp_path("folder");
	char *via_folder = tmp_path("folder/w.db"), *hard = tmp_path("hard.db"), *dang = tmp_path("dang.db");
	char *nowhere = tmp_path("nowhere.db"), *lock = xasprintf("%s-writer", sym), *want, *text;
	struct store *a, *b, *r;
	struct store_lock fd;

	make_db(db);
	CHECK_INT(store_open(db, STORE_RW, &a), 0, "open the first writer");
	CHECK_INT(store_lock(a, "test a"), 0, "it takes the lock");
	CHECK(!symlink("w.db", sym) && !symlink(".", folder), "links made");

	CHECK_INT(store_open(sym, STORE_RW, &b), 0, "a link to a file of one name opens for writing");
	want = xasprintf("'%s' is being written by another sweep (host ", sym);
	CHECK_SAYS(store_lock(b, "test b"), FAIL_BUSY, want, "a second writer through a symbolic link is refused");
	CHECK_SAYS(store_lock(b, "test b"), FAIL_BUSY, ": test a)", "naming the first");
	store_close(b);
	free(want);
	CHECK_SAYS(store_lock_path(via_folder, "test c", &fd), FAIL_BUSY, "is being written by another sweep",
		   "through a link to its folder too");
	CHECK(access(lock, F_OK) != 0, "no lock file beside the link");
	CHECK_INT(store_open(sym, STORE_RO, &r), 0, "a reader through the link");
	CHECK_INT(store_writer_alive(r), 1, "sees the writer alive");
	store_close(r);

	CHECK(!link(db, hard), "a hard link made");
	want = xasprintf("'%s' has 2 names (hard links): SQLite keeps one write-ahead log per name", hard);
	CHECK_SAYS(store_open(hard, STORE_RW, &b), -1, want, "a file with two names is not opened for writing");
	free(want);
	want = xasprintf("'%s' has 2 names", db);
	CHECK_SAYS(store_open(db, STORE_RW, &b), -1, want, "whichever name");
	free(want);
	CHECK_SAYS(store_lock_path(hard, "test d", &fd), -1, "has 2 names", "nor locked (merge's output)");
	text = xasprintf("%s-writer", hard);
	CHECK(access(text, F_OK) != 0, "and no lock file made for it");
	free(text);
	CHECK_SAYS(store_open(hard, STORE_RO, &r), 0, "warning: '", "a reader is warned, not refused");
	store_close(r);
	store_remove_files(hard);   /* and the -wal its reader left */
	store_close(a);

	CHECK(!symlink("nowhere.db", dang), "a link to a missing file");
	CHECK_SAYS(store_open(dang, STORE_RW, &b), FAIL_MISSING, "is a symbolic link to a missing file",
		   "is not opened for writing");
	CHECK(access(nowhere, F_OK) != 0, "and makes no file");

	/* The database's log as a link: two databases would share it. */
	text = xasprintf("%s-wal", db);
	CHECK(!symlink("elsewhere", text), "a -wal that is a link");
	CHECK_SAYS(store_open(db, STORE_RW, &b), -1, "-wal' beside '", "is refused");
	unlink(text);
	free(text);

	/* The lock file as a link: we empty and write it, so never through a link. */
	text = xasprintf("%s-writer", db);
	unlink(text);
	write_file(nowhere, "precious", 8);
	CHECK(!symlink("nowhere.db", text), "a lock file that is a link");
	CHECK_SAYS(store_lock_path(db, "test e", &fd), -1, "a symbolic link", "is refused");
	free(text);
	text = read_all(nowhere);
	CHECK_STR(text, "precious", "and what it points to is untouched");
	free(text);
	store_remove_files(db);
	unlink(sym);
	unlink(folder);
	unlink(dang);
	unlink(nowhere);
	free(db);
	free(sym);
	free(folder);
	free(via_folder);
	free(hard);
	free(dang);
	free(nowhere);
	free(lock);
}

/* The lock is the file's own: a new name after a rename, or a removed note, lets no second writer in; a
 * writer whose file was renamed stops at its next commit, its rows in the file by its new name. */
static void test_lock_inode(void)
{
	char *db = tmp_path("i.db"), *moved = tmp_path("moved.db"), *note = xasprintf("%s-writer", db);
	char *want, *real;
	struct store *a, *b, *r;
	struct store_counts c;
	int added;

	make_db(db);
	CHECK_INT(store_open(db, STORE_RW, &a), 0, "open the writer");
	CHECK_INT(store_lock(a, "test a"), 0, "it takes the lock");
	CHECK(!unlink(note), "its note removed");
	CHECK_INT(store_open(db, STORE_RW, &b), 0, "a second writer opens");
	CHECK_SAYS(store_lock(b, "test b"), FAIL_BUSY, "is being written by another sweep", "but is refused");
	store_close(b);
	CHECK_INT(store_begin(a), 0, "the writer goes on");
	CHECK_INT(store_add_cell(a, "s", "k2", "{\"ms\":2}", 0, "", 1, "planned", &added), 0, "a cell");
	CHECK_INT(store_commit(a), 0, "committed");
	CHECK(!rename(db, moved), "the file renamed");
	CHECK_INT(store_open(moved, STORE_RW, &b), 0, "a writer of the new name opens");
	CHECK_SAYS(store_lock(b, "test b"), FAIL_BUSY, "is being written by another sweep", "but is refused");
	store_close(b);
	CHECK_INT(store_open(moved, STORE_RO, &r), 0, "a reader of the new name");
	CHECK_INT(store_writer_alive(r), 1, "sees the writer alive");
	store_close(r);
	usleep(250000);   /* store_watch looks every 0.2 s */
	CHECK_INT(store_begin(a), 0, "the writer does not know yet");
	CHECK_INT(store_add_cell(a, "s", "k3", "{\"ms\":3}", 0, "", 2, "planned", &added), 0, "a cell");
	CHECK((real = realpath(moved, NULL)) != NULL, "the new name");
	want = xasprintf("was moved or renamed to '%s' while this sweep wrote it: stopped writing", real);
	CHECK_SAYS(store_commit(a), -1, want, "its commit says where the file went");
	free(want);
	free(real);
	store_close(a);
	CHECK(access(db, F_OK) && access(note, F_OK), "nothing left by the old name");
	write_file(db, "another", 7);
	store_remove_files(db);   /* as a command that made the file and failed does */
	CHECK(!access(db, F_OK), "a file that took the old name is not removed as the writer's own");
	unlink(db);
	CHECK_INT(store_open(moved, STORE_RO, &r), 0, "the moved file opens");
	CHECK_INT(store_cell_counts(r, "s", NULL, &c), 0, "its cells counted");
	CHECK(c.planned == 3, "with every commit in it: %ju cells", (uintmax_t)c.planned);
	store_close(r);
	store_remove_files(moved);
	free(db);
	free(moved);
	free(note);
}

/* The file at path holds want. */
static void check_file(const char *path, const char *want, const char *name)
{
	char *got = read_all(path);

	CHECK(!strcmp(got, want), "%s", name);
	free(got);
}

/* store_out_open with a list of databases that is gone before the close (as report_out_open's). */
static int out_open_db(struct store_out *w, const char *path, const char *db, int flags)
{
	const char *dbs[] = { db, NULL };

	return store_out_open(w, "--out", path, dbs, flags);
}

/* store_out_open and store_out_close: a file replaced whole or not at all, never through a link. */
static void test_out_whole(void)
{
	char *db = tmp_path("od.db"), *out = tmp_path("o.txt"), *text;
	const char *dbs[] = { db, NULL };
	struct store_out w;

	make_db(db);
	text = read_all(db);
	write_file(out, "old\n", 4);
	CHECK_INT(store_out_open(&w, "--out", out, dbs, 0), 0, "an output opens");
	fputs("new\n", w.f);
	store_out_abort(&w);
	check_file(out, "old\n", "dropped: the old file as it was");
	CHECK_INT(store_out_open(&w, "--out", out, dbs, STORE_OUT_APPEND), 0, "opened to add to it");
	fputs("more\n", w.f);
	CHECK_INT(store_out_close(&w), 0, "in place");
	check_file(out, "old\nmore\n", "what it held, then what was added");
	CHECK_INT(out_open_db(&w, out, db, 0), 0, "opened again");
	unlink(out);
	CHECK(!symlink("od.db", out), "a link to the database swapped in meanwhile");
	fputs("over\n", w.f);
	CHECK_SAYS(store_out_close(&w), -1, "is the database being read: not overwriting it", "is refused");
	check_file(db, text, "the database untouched");
	unlink(out);
	CHECK_SAYS(store_out_open(&w, "the snapshot", db, dbs, STORE_OUT_NEW | STORE_OUT_DB), -1, "exists",
		   "a new file is never an existing one");
	store_remove_files(db);
	unlink(out);
	free(text);
	free(db);
	free(out);
}

/* store_output_check on path: ret and, when refused, a message holding want. */
static void check_out(const char *path, const char *reading, int flags, int ret, const char *want)
{
	char *msg;
	int got;

	test_capture_start();
	got = store_output_check("--out", path, reading, flags);
	msg = said();
	CHECK(got == ret && (!want || strstr(msg, want)), "%s: returns %d (want %d), says: %s", path, got, ret,
	      msg);
	free(msg);
}

/* No output over a database, its side files (by name, by link, by their first bytes) or the database
 * being read (by identity); everything else may be written. */
static void test_outputs(void)
{
	static const char *const tails[] = { "-wal", "-shm", "-journal", "-writer" };
	static const unsigned char journal[] = { 0xd9, 0xd5, 0x05, 0xf9, 0x20, 0xa1, 0x63, 0xd7, 0, 0, 0, 0 };
	static const unsigned char wal[] = { 0x37, 0x7f, 0x06, 0x82, 0, 0x2d, 0xe2, 0x18 };
	char *db = tmp_path("o.db"), *p, *q, *want, *text;
	uint32_t shm[16] = { 3007000 };
	struct store *st;
	int added;

	make_db(db);
	for (size_t i = 0; i < ARRAY_SIZE(tails); i++) {
		p = xasprintf("%s%s", db, tails[i]);
		want = xasprintf("--out '%s' is the %s file of the database '%s': not overwriting it", p,
				 tails[i] + 1, db);
		check_out(p, NULL, 0, -1, want);
		check_out(p, NULL, STORE_OUT_DB, -1, want);
		free(want);
		free(p);
	}
	/* A live database: its log holds what is committed and not yet in the file. */
	CHECK_INT(store_open(db, STORE_RW, &st), 0, "a writer");
	CHECK_INT(store_add_cell(st, "s", "k2", "{\"ms\":2}", 0, "", 1, "planned", &added), 0, "writes");
	p = xasprintf("%s-wal", db);
	check_out(p, db, 0, -1, "is an SQLite write-ahead log: not overwriting it");
	q = tmp_path("copy-of-wal");
	text = read_all(p);
	write_file(q, text, 64);
	check_out(q, NULL, 0, -1, "is an SQLite write-ahead log");
	check_out(q, NULL, STORE_OUT_DB, -1, "is an SQLite write-ahead log");
	free(text);
	unlink(q);
	free(q);
	q = tmp_path("link-to-wal");
	CHECK(!symlink(p, q), "a link to the log");
	check_out(q, NULL, 0, -1, "is an SQLite write-ahead log");
	unlink(q);
	free(q);
	free(p);
	store_close(st);

	/* By their first bytes, whatever their names. */
	p = tmp_path("j.bin");
	write_file(p, journal, sizeof(journal));
	check_out(p, NULL, 0, -1, "is an SQLite rollback journal");
	write_file(p, wal, sizeof(wal));
	check_out(p, NULL, 0, -1, "is an SQLite write-ahead log");
	shm[12] = 3007000;
	write_file(p, shm, sizeof(shm));
	check_out(p, NULL, 0, -1, "is an SQLite shared-memory index");
	unlink(p);
	free(p);
	p = tmp_path("other.db");
	make_db(p);
	check_out(p, NULL, 0, -1, "is an SQLite database: not overwriting it");
	check_out(p, NULL, STORE_OUT_DB, 0, NULL);
	store_remove_files(p);
	free(p);

	/* The database being read, by identity: a symbolic or a hard link to it. */
	check_out(db, db, STORE_OUT_DB, -1, "is the database being read: not overwriting it");
	p = tmp_path("hard-o");
	q = tmp_path("sym-o");
	CHECK(!link(db, p) && !symlink("o.db", q), "links to the database");
	check_out(p, db, STORE_OUT_DB, -1, "is the database being read");
	check_out(q, db, STORE_OUT_DB, -1, "is the database being read");
	check_out(db, q, 0, -1, "is the database being read");
	unlink(p);
	unlink(q);
	CHECK(!symlink("missing", q), "a link to a missing file");
	check_out(q, NULL, 0, -1, "is a symbolic link to a missing file");
	unlink(q);
	free(p);
	free(q);

	/* What may be written: a new file, a text file, a side name of no database, a device, a missing
	 * folder (the write says so), and an empty database's side names are refused. */
	p = tmp_path("report.txt");
	check_out(p, db, 0, 0, NULL);
	write_file(p, "text", 4);
	check_out(p, db, 0, 0, NULL);
	q = tmp_path("report.txt-wal");
	check_out(q, db, 0, 0, NULL);
	free(q);
	unlink(p);
	free(p);
	check_out("/dev/null", db, 0, 0, NULL);
	p = tmp_path("nosuch/x.txt");
	check_out(p, db, 0, 0, NULL);
	free(p);
	p = tmp_path("empty.db");
	write_file(p, "", 0);
	q = xasprintf("%s-journal", p);
	check_out(q, NULL, 0, -1, "is the journal file of the database");
	unlink(p);
	free(p);
	free(q);
	store_remove_files(db);
	free(db);
}

/* The text of the first column of the first row; "error: <message>" when the query fails. */
static int first_cb(const struct store_row *row, void *data)
{
	*(char **)data = xstrdup(row->text[0] ? row->text[0] : "NULL");
	return 1;
}

static char *q1(struct store *st, const char *sql)
{
	char *out = NULL, *msg;
	int rc;

	test_capture_start();
	rc = store_query(st, sql, NULL, 0, 1, first_cb, &out);
	msg = said();
	if (rc < 0) {
		free(out);
		out = xasprintf("error: %s", msg);
	}
	free(msg);
	return out ? out : xstrdup("none");
}

static void check_q(struct store *st, const char *sql, const char *want)
{
	char *got = q1(st, sql);

	CHECK(!strncmp(got, want, strlen(want)), "%s: got '%s', want '%s...'", sql, got, want);
	free(got);
}

struct fn {
	char name[64];
	int narg;
};
struct fns {
	struct fn *v;
	size_t n, alloc;
};

static int fn_cb(const struct store_row *row, void *data)
{
	struct fns *f = data;

	ALLOC_GROW(f->v, f->n + 1, f->alloc);
	snprintf(f->v[f->n].name, sizeof(f->v[f->n].name), "%s", row->text[0]);
	f->v[f->n++].narg = row->text[1] ? atoi(row->text[1]) : 0;
	return 0;
}

/* The guard of typed SQL: what this SQLite build offers that touches memory by address or files is
 * refused by name, with our message; reading, SQLite's plain functions and sweep's own are not. */
static void test_guard(void)
{
	/* Functions of SQLite builds and extensions that take pointers, load code, read or write files, or
	 * read pages raw; each one this build has must be refused. */
	static const char *const unsafe[] = {
		"fts3_tokenizer", "load_extension", "fts5", "fts5_source_id", "rtreenode", "rtreedepth",
		"rtreecheck", "offsets", "snippet", "matchinfo", "optimize", "highlight", "bm25", "match",
		"sqlite_log", "readfile", "writefile", "edit", "fsdir", "sqlite_dbdata", "sqlite_offset",
	};
	/* Queries and the start of what they give: no PRAGMA that sets anything; what a reader needs. */
	static const char *const queries[][2] = {
		{ "PRAGMA writable_schema = 1", "error: sweep: sql error: PRAGMA writable_schema with a value" },
		{ "PRAGMA user_version = 7", "error: sweep: sql error: PRAGMA user_version with a value" },
		{ "SELECT * FROM pragma_cache_size", "error: sweep: sql error: PRAGMA cache_size is not allowed" },
		{ "PRAGMA temp_store_directory", "error: sweep: sql error: PRAGMA temp_store_directory" },
		{ "VACUUM INTO '/dev/null'", "error: sweep: sql error: the statement would write" },
		{ "PRAGMA table_info(cells)", "0" },
		{ "SELECT count(*) FROM pragma_table_info('cells') WHERE name = 'key'", "1" },
		{ "SELECT count(*) > 0 FROM pragma_compile_options", "1" },
		{ "SELECT json_extract(params, '$.ms') || printf('%d', count(*)) FROM cells", "11" },
		{ "SELECT group_concat(value) FROM json_each('[1,2]')", "1,2" },
		{ "SELECT count(*) FROM v_results", "0" },
		{ "SELECT round(sqrt(16)) || abs(-1) || coalesce(NULL, 'x') || upper('y')", "4.01xY" },
		{ "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 3) SELECT sum(x) FROM c",
		  "6" },
		{ "SELECT median(x) = 2 AND quantile(x, 0.5) = 2 AND geomean(x) = 2 AND stdev(x) = 0 AND cv(x) = 0"
		  " AND CV(x) = 0 FROM (SELECT 2 AS x UNION ALL SELECT 2)", "1" },
		{ "SELECT ratio_ci(1, 1) IS NOT NULL, sweep_key('s', '{\"a\":1}', 0, '') IS NOT NULL", "1" },
		{ "SELECT sweep_param_defaults('sleep', '{}')", "{\"ms\":1,\"jitter\":0}" },
		{ "SELECT count(*) FROM cells", "1" },
	};
	char *db = tmp_path("g.db"), *sql;
	struct store *ro, *st;
	struct fns f = { 0 };
	int present = 0;

	make_db(db);
	CHECK_INT(store_open(db, STORE_RO, &ro), 0, "a plain reader");
	/* Every reader is opened defensively (store_defensive): the pointer this build's fts3_tokenizer gives
	 * away is not there to see even without the guard. */
	check_q(ro, "SELECT length(fts3_tokenizer('simple'))", "NULL");
	CHECK_INT(store_query(ro, "SELECT name, narg FROM pragma_function_list", NULL, 0, 1, fn_cb, &f), 0,
		  "this build's functions");
	store_close(ro);

	CHECK_INT(store_open(db, STORE_SQL, &st), 0, "a guarded reader");
	check_q(st, "SELECT fts3_tokenizer('simple')", "error: sweep: sql error: the function fts3_tokenizer() is "
		"not allowed: sweep sql reads with SQLite's plain functions and sweep's own, none that reads or writes "
		"memory by address or files");
	check_q(st, "SELECT hex(FTS3_Tokenizer('simple'))", "error: sweep: sql error: the function fts3_tokenizer()");
	check_q(st, "SELECT 1 FROM cells WHERE load_extension('/x.so') IS NULL",
		"error: sweep: sql error: the function load_extension() is not allowed");
	for (size_t i = 0; i < f.n; i++) {
		struct strbuf call = STRBUF_INIT;
		int listed = 0;

		for (size_t k = 0; k < ARRAY_SIZE(unsafe); k++)
			listed |= !strcmp(f.v[i].name, unsafe[k]);
		if (!listed)
			continue;
		present++;
		sb_addf(&call, "SELECT %s(", f.v[i].name);
		for (int a = 0; a < (f.v[i].narg < 0 ? 1 : f.v[i].narg); a++)
			sb_adds(&call, a ? ", NULL" : "NULL");
		sb_adds(&call, ")");
		sql = xasprintf("error: sweep: sql error: the function %s() is not allowed", f.v[i].name);
		check_q(st, call.buf, sql);
		free(sql);
		sb_release(&call);
	}
	CHECK(present >= 2, "this build has %d of the unsafe functions, fts3_tokenizer and load_extension among them",
	      present);
	for (size_t i = 0; i < ARRAY_SIZE(queries); i++)
		check_q(st, queries[i][0], queries[i][1]);
	sql = xasprintf("ATTACH '%s' AS other", db);
	check_q(st, sql, "error: sweep: sql error: ATTACH is not allowed");
	free(sql);
	sql = xasprintf("%d", store_schema_version());
	check_q(st, "PRAGMA user_version", sql);
	free(sql);
	store_close(st);
	store_remove_files(db);
	free(f.v);
	free(db);
}

int main(void)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, sizeof(dir), "%s/test_store_file.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_one_writer();
	test_lock_inode();
	test_out_whole();
	test_outputs();
	test_guard();
	rmdir(dir);
	return test_done();
}
