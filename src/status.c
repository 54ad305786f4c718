/* status.c: what a database says about its sweeps, as tables or as one JSON line of totals. */
#include "status.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "query.h"
#include "slurm.h"
#include "states.h"

/* A run recorded 'running' whose writer is gone (killed before it could say so) is shown as such: the
 * next writer records it killed (store_lock); a reader only reports it. */
#define RUN_STATUS "CASE WHEN r.status = 'running' AND ?1 = '0' THEN 'gone (was running)' ELSE r.status END"

/* The latest run and what the database has left to do. */
struct latest {
	int64_t run;
	char status[32];
	char *argv, *launcher;
	uint64_t todo, jobs;
};

static int take_latest(const struct store_row *row, void *data)
{
	struct latest *l = data;

	l->todo = (uint64_t)row->num[0];
	l->jobs = (uint64_t)row->num[1];
	if (!row->text[2])
		return 0;
	l->run = (int64_t)row->num[2];
	snprintf(l->status, sizeof(l->status), "%s", row->text[3] ? row->text[3] : "?");
	l->argv = row->text[4] ? xstrdup(row->text[4]) : NULL;
	l->launcher = row->text[5] ? xstrdup(row->text[5]) : NULL;
	return 0;
}

/* The ranks of a run by host ("a:2,b:1", in rank order) and how many, for a run whose launcher was not
 * read: its command is stated from them. */
static int take_ranks(const struct store_row *row, void *data)
{
	struct strbuf *sb = data;

	if (row->num[0] > 1 && row->text[1]) {
		sb_addf(sb, "mpirun -np %.0f --host ", row->num[0]);
		sb_add_word(sb, row->text[1]);
	}
	return 0;
}

/* How run l->run was started, as the command to type: the launcher's line as read (it holds the sweep
 * command), else sweep and its arguments, behind "mpirun -np N --host ..." stated from the run's workers
 * when it had several ranks. In a Slurm job (slurm) the launcher ran inside the job's allocation: sweep
 * and its arguments alone are what runs here. */
static int resume_command(struct store *st, const struct latest *l, int slurm, struct strbuf *sb)
{
	char id[24];
	const char *bind[] = { id };
	size_t at = sb->len;

	if (l->launcher && !slurm) {
		sb_add_printable(sb, l->launcher, 1000);
		return 0;
	}
	snprintf(id, sizeof(id), "%" PRId64, l->run);
	if (!slurm && store_query(st, "SELECT sum(n), group_concat(host || ':' || n, ',') FROM"
			" (SELECT h.hostname AS host, count(*) AS n FROM workers w JOIN hosts h ON h.id = w.host WHERE w.run = CAST(?1 AS INTEGER)"
			" GROUP BY h.hostname ORDER BY min(w.rank))", bind, 1, 1, take_ranks, sb))
		return -1;
	sb_addf(sb, "%ssweep ", sb->len > at ? " " : "");
	sb_add_printable(sb, l->argv, 1000);
	return 0;
}

/* The retry command of each sweep with quarantined cells, for a database at db. */
struct retry {
	struct strbuf *sb;
	const char *db;
};

static int add_retry(const struct store_row *row, void *data)
{
	struct retry *r = data;
	char sweep[128];

	printable(sweep, row->text[0] ? row->text[0] : "", 120);
	sb_addf(r->sb, "  %" PRIu64 " quarantined cells of %s: sweep retry ", (uint64_t)row->num[1], sweep);
	sb_add_word(r->sb, r->db);
	sb_adds(r->sb, " --sweep ");
	sb_add_word(r->sb, sweep);
	sb_adds(r->sb, " --state quarantined, then run again\n");
	return 0;
}

/*
 * When no run writes the database and it has work left (the latest run stopped, was killed, or its job
 * died): how to resume, as the commands that do it: resubmit the Slurm job (slurm_resume), or run the
 * sweep again as the latest run was run; and the retry of quarantined cells.
 */
static int status_resume(struct store *st, int alive, uint64_t absent)
{
	struct latest l = { 0, "", NULL, NULL, 0, 0 };
	struct strbuf sb = STRBUF_INIT;
	struct retry r = { &sb, store_path(st) };
	int rc = 0;

	if (alive)
		return 0;   /* a run goes on (or, -1, a copy: no run is its own) */
	/* A Slurm array's database has jobs but no run of its own (its tasks ran on shards' databases). */
	if (store_query(st, "SELECT (SELECT coalesce(sum(planned + running), 0) FROM cell_counts),"
			" (SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'slurm_jobs'),"
			" id, status, argv, launcher FROM (SELECT 1)"
			" LEFT JOIN (SELECT * FROM runs ORDER BY id DESC LIMIT 1)",
			NULL, 0, 1, take_latest, &l))
		return -1;
	l.todo += absent;
	if ((l.run || l.jobs) && l.todo) {
		sb_addf(&sb, "  %" PRIu64 " cells to do\n", l.todo);
		rc = slurm_resume(st, l.run, &sb);
		if (!rc && l.argv) {
			sb_addf(&sb, "  %s it again as run %" PRId64 " was: ", strstr(sb.buf, "resubmit") ? "or run" :
				"run", l.run);
			rc = resume_command(st, &l, strstr(sb.buf, "Slurm job") != NULL, &sb);
			sb_addc(&sb, '\n');
		}
	}
	if (rc >= 0 && l.run && store_query(st, "SELECT sweep, sum(quarantined) FROM cell_counts"
					    " GROUP BY sweep HAVING sum(quarantined) > 0 ORDER BY sweep", NULL, 0, 1, add_retry, &r))
		rc = -1;
	if (rc >= 0 && sb.len && l.run)
		printf("\nto resume (no run is writing the database; the latest, run %" PRId64 ", %s):\n%s", l.run,
		       !strcmp(l.status, "running") ? "is gone (was running)" : l.status, sb.buf);
	else if (rc >= 0 && sb.len)
		printf("\nto resume (no run is writing the database; its runs were in its Slurm jobs):\n%s", sb.buf);
	free(l.argv);
	free(l.launcher);
	sb_release(&sb);
	return rc < 0 ? -1 : 0;
}

/* A sweep of the database and its ok results short of their precision. */
struct sweep_row {
	struct strbuf names;           /* NUL-separated */
	struct strbuf imprecise;       /* the counts, NUL-separated, in the same order */
};

static int add_sweep(const struct store_row *row, void *data)
{
	struct sweep_row *r = data;

	sb_add(&r->names, row->text[0] ? row->text[0] : "", strlen(row->text[0] ? row->text[0] : "") + 1);
	sb_add(&r->imprecise, row->text[1] ? row->text[1] : "0", strlen(row->text[1] ? row->text[1] : "0") + 1);
	return 0;
}

/* One sweep's row of "cells by state"; its waiting hosts into hosts, a line each. */
static int state_row(struct store *st, const char *sweep, const char *imprecise, struct table *t,
		     struct strbuf *hosts, uint64_t *absent)
{
	struct states s = STATES_INIT;
	char n[7][24], done[24];
	const char *cells[] = { sweep, n[0], n[1], n[2], n[3], n[4], done, imprecise, n[5] };
	uint64_t all;

	if (states_of(st, sweep, &s)) {
		states_release(&s);
		return -1;
	}
	if ((all = states_cells(&s))) {
		snprintf(n[0], sizeof(n[0]), "%" PRIu64, all);
		snprintf(n[1], sizeof(n[1]), "%" PRIu64, s.ok);
		snprintf(n[2], sizeof(n[2]), "%" PRIu64, s.planned);
		snprintf(n[3], sizeof(n[3]), "%" PRIu64, s.running);
		snprintf(n[4], sizeof(n[4]), "%" PRIu64, s.quarantined);
		snprintf(n[5], sizeof(n[5]), "%" PRIu64, s.absent);
		/* rounded down: 100 % only when every cell is ok */
		snprintf(done, sizeof(done), "%.1f%%", floor(1000.0 * (double)s.ok / (double)all) / 10);
		table_add(t, cells);
	}
	*absent += s.absent;
	if (s.absent) {
		sb_adds(hosts, "  ");
		sb_add_printable(hosts, sweep, 120);
		sb_adds(hosts, ": ");
		states_absent_words(&s, hosts);
		sb_adds(hosts, "; a run with them measures those\n");
	}
	states_release(&s);
	return 0;
}

/* The cells of each sweep by state, those waiting for hosts named in its hosts: that never ran included
 * (states.c), and which hosts they wait for. From cell_counts and partial indexes: ten million cells are
 * not read. */
static int print_states(struct store *st, uint64_t *absent)
{
	static const char *const head[] = { "sweep", "cells", "ok", "planned", "running", "quarantined", "done",
		"imprecise", "wait_hosts" };
	struct sweep_row r = { STRBUF_INIT, STRBUF_INIT };
	struct strbuf hosts = STRBUF_INIT;
	struct table t;
	int ret;

	table_init(&t, ARRAY_SIZE(head), head);
	ret = store_query(st, "SELECT c.sweep,"
			  /* ok cells whose result missed its precision: kept, but never silently */
			  /* CROSS JOIN: from the few such results (results_imprecise), not from the sweep's cells */
			  " (SELECT count(*) FROM results r CROSS JOIN cells k ON k.id = r.cell WHERE r.status = 'ok'"
			  "  AND " STORE_IMPRECISE("r") " AND k.state = 'ok' AND k.sweep = c.sweep) AS imprecise"
			  " FROM (SELECT DISTINCT sweep FROM cell_counts) c ORDER BY c.sweep", NULL, 0, 1, add_sweep,
			  &r);
	for (size_t a = 0, b = 0; !ret && a < r.names.len; a += strlen(r.names.buf + a) + 1,
	     b += strlen(r.imprecise.buf + b) + 1)
		ret = state_row(st, r.names.buf + a, r.imprecise.buf + b, &t, &hosts, absent);
	if (!ret) {
		printf("cells by state:\n");
		if (t.nrows)
			table_print(&t, stdout, &table_text);
		else
			printf("(no rows)\n");
		if (hosts.len)
			printf("\ncells waiting for hosts:\n%s", hosts.buf);
	}
	table_release(&t);
	sb_release(&r.names);
	sb_release(&r.imprecise);
	sb_release(&hosts);
	return ret;
}

int status_print(struct store *st)
{
	int writing = store_writer_alive(st);
	const char *alive[] = { writing ? "1" : "0" };   /* -1, cannot tell: as alive */
	uint64_t absent = 0;

	return print_states(st, &absent) ||
	       query_print(st, "\nlatest run:\n",
			"SELECT id AS run, sweep, started, coalesce(finished, '-') AS finished, " RUN_STATUS
			" AS status FROM runs r ORDER BY id DESC LIMIT 1", alive, 1, &table_text, 1) ||
	       query_print(st, "\nworkers of the latest run:\n",
			"SELECT h.hostname AS host, w.rank, coalesce(w.gpu, -1) AS gpu, count(r.id) AS results,"
			" count(r.id) FILTER (WHERE r.status = 'ok') AS ok,"
			" count(r.id) FILTER (WHERE r.status != 'ok') AS failed,"
			" printf('%.2f', CASE WHEN max(julianday(r.started)) > min(julianday(r.started))"
			"  THEN (count(r.id) - 1) / ((max(julianday(r.started)) - min(julianday(r.started))) * 86400)"
			"  END) AS cells_per_s,"
			" coalesce(max(r.started), '-') AS last_result"
			" FROM workers w JOIN hosts h ON h.id = w.host"
			" LEFT JOIN results r ON r.worker = w.id"
			" WHERE w.run = (SELECT max(id) FROM runs)"
			" GROUP BY w.id ORDER BY h.hostname, w.rank", NULL, 0, &table_text, 1) ||
	       query_print(st, "\nfailures (cells not ok with an error):\n",
			"SELECT sweep, key, params, state, attempts, error FROM cells"
			" WHERE error IS NOT NULL AND state != 'ok' ORDER BY sweep, ord LIMIT 50",
			NULL, 0, &table_text, 1) ||
	       slurm_status(st) || status_resume(st, writing, absent) ? -1 : 0;
}

/* The JSON line being made, and the cells of the sweeps' hosts that never ran (states.c): part of its
 * cells, and of its "wait_hosts". */
struct json_line {
	struct strbuf *sb;
	uint64_t absent;
};

static int json_row(const struct store_row *row, void *data)
{
	struct json_line *line = data;
	struct strbuf *sb = line->sb;
	/* Columns: name, then type: 'n' number or null, 's' string or null. */
	static const char *const names[] = { "sweeps", "cells", "ok", "planned", "running", "quarantined",
		"failed", "last", "run", "run_status", "run_started", "run_finished", "run_ok", "elapsed", "now",
		"imprecise" };
	static const char types[] = "snnnnnnsnsssnnsn";
	double rate = NAN, eta = NAN;

	sb_addc(sb, '{');
	for (int i = 0; i < row->ncol && i < (int)ARRAY_SIZE(names); i++) {
		sb_addf(sb, "%s\"%s\":", i ? "," : "", names[i]);
		if (!row->text[i])
			sb_adds(sb, "null");
		else if (i == 1)
			json_add_num(sb, row->num[i] + (double)line->absent);
		else if (types[i] == 's')
			json_add_str(sb, row->text[i]);
		else
			json_add_num(sb, row->num[i]);
	}
	/* Cells per second over the latest run, and the time the cells left need at that rate. */
	if (row->text[12] && row->text[13] && row->num[13] > 0)
		rate = row->num[12] / row->num[13];
	if (rate > 0 && row->text[9] && !strcmp(row->text[9], "running"))
		eta = (row->num[3] + row->num[4]) / rate;
	sb_addf(sb, ",\"wait_hosts\":%" PRIu64, line->absent);
	sb_adds(sb, ",\"rate\":");
	json_add_num(sb, rate);
	sb_adds(sb, ",\"eta\":");
	json_add_num(sb, eta);
	sb_addc(sb, '}');
	return 0;
}

/* The sweep ?2, or when NULL every sweep but the probes' (sweep hosts probe writes probe.NAME.TIME into
 * the database it is given): the cells a sweep measures are its own. */
#define OF_SWEEP(col) \
	"CASE WHEN ?2 IS NULL THEN coalesce(" col ", '') NOT LIKE 'probe.%' ELSE " col " = ?2 END"

static int add_absent(const struct store_row *row, void *data)
{
	struct sweep_row *r = data;

	sb_add(&r->names, row->text[0] ? row->text[0] : "", strlen(row->text[0] ? row->text[0] : "") + 1);
	return 0;
}

/* The cells of hosts that never ran, over the sweeps status_json reports (bind[1]: one, or all but probes). */
static int json_absent(struct store *st, const char *const *bind, uint64_t *absent)
{
	struct sweep_row r = { STRBUF_INIT, STRBUF_INIT };
	/* ?1 (the writer) is bound too: OF_SWEEP names ?2 */
	int ret = store_query(st, "SELECT name FROM sweeps WHERE ?1 IS NOT NULL AND " OF_SWEEP("name"), bind, 2, 1,
			      add_absent, &r);

	for (size_t a = 0; !ret && a < r.names.len; a += strlen(r.names.buf + a) + 1) {
		struct states s = STATES_INIT;

		ret = states_of(st, r.names.buf + a, &s);
		*absent += s.absent;
		states_release(&s);
	}
	sb_release(&r.names);
	return ret;
}

int status_json(struct store *st, const char *sweep, struct strbuf *out)
{
	const char *bind[] = { store_writer_alive(st) ? "1" : "0", sweep };   /* -1, cannot tell: as alive */
	struct json_line line = { out, 0 };

	return json_absent(st, bind, &line.absent) || store_query(st,
			   /* results by their cells' sweep: from the results, not the (maybe ten million) cells */
			   "WITH x AS (SELECT x.*, k.state AS state FROM results x JOIN cells k ON k.id = x.cell"
			   "  WHERE " OF_SWEEP("k.sweep") ")"
			   " SELECT (SELECT group_concat(name, ',') FROM sweeps WHERE " OF_SWEEP("name") "),"
			   " n.cells, n.ok, n.planned, n.running, n.quarantined,"
			   " (SELECT count(*) FROM x WHERE status IN ('error', 'timeout')),"
			   " (SELECT max(started) FROM x),"
			   " r.id, " RUN_STATUS ", r.started, r.finished,"
			   " (SELECT count(*) FROM x WHERE x.run = r.id AND x.status = 'ok'),"
			   " (julianday(coalesce(r.finished, 'now')) - julianday(r.started)) * 86400,"
			   " strftime('%Y-%m-%dT%H:%M:%SZ', 'now'),"
			   " (SELECT count(*) FROM x WHERE x.status = 'ok' AND " STORE_IMPRECISE("x") " AND x.state = 'ok')"
			   " FROM (SELECT coalesce(sum(planned + running + ok + quarantined), 0) AS cells,"
			   "  coalesce(sum(ok), 0) AS ok, coalesce(sum(planned), 0) AS planned,"
			   "  coalesce(sum(running), 0) AS running, coalesce(sum(quarantined), 0) AS quarantined"
			   "  FROM cell_counts WHERE " OF_SWEEP("sweep") ") n"
			   " LEFT JOIN (SELECT * FROM runs WHERE " OF_SWEEP("sweep") " ORDER BY id DESC LIMIT 1) r ON 1",
			   bind, 2, 1, json_row, &line);
}
