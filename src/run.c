/* run.c: one sweep run: the spec planned into its database, then the master (rank 0) or a worker. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "comm.h"
#include "exitcode.h"
#include "identity.h"
#include "interrupt.h"
#include "inventory.h"
#include "launcher.h"
#include "msg.h"
#include "plan_db.h"
#include "run.h"
#include "master.h"
#include "worker.h"
#include "slurm.h"
#include "store.h"

/* Open the database for writing, made when missing (*made), with its writer lock; its long statements
 * stop at an interrupt from here on (store_interruptible). 0, or store_open's or store_lock's kind. */
static int open_for(const char *path, struct store **st, int *made)
{
	int ret;

	*made = access(path, F_OK) != 0;
	if (mkdir_parent(path))
		return FAIL_IO;
	if ((ret = store_open(path, STORE_RW, st)))
		return ret;
	store_interruptible(*st, 1);
	return store_lock(*st, "sweep run");
}

/* After a lost worker the database is sound and the line said; Open MPI 4.1 cannot go on without the rank.
 * comm_end_cut ends mpirun when it can (it is an ancestor of rank 0); else MPI_Abort, after leaving the job
 * this long to Open MPI, whose keepalive (the oob_tcp_keepalive_* options docs/ranks.md gives) finds a host
 * cut off and ends everything: once mpirun has sent the abort to a daemon that cannot be reached, it waits on
 * TCP's retransmissions (about 15 minutes) instead of noticing the host gone. */
#define RUN_LOST_WAIT 60.0

/* Why a run stopped early, what became of its cells in flight and how to resume, in one line. */
static void say_stopped(const struct spec *s, const struct master_stats *st)
{
	struct strbuf sb = STRBUF_INIT;

	if (st->ended_rank)
		sb_addf(&sb, "rank %d on '%s' ended (killed, or exited) and mpirun ended the job", st->ended_rank,
			st->ended_host);
	else if (st->by_mpirun)
		sb_adds(&sb, "interrupted by SIGINT or SIGTERM to mpirun (it passes either on to the ranks as SIGTERM)");
	else if (st->interrupted)
		sb_addf(&sb, "interrupted by %s", interrupt_name(st->interrupted));
	else if (st->lost)
		sb_addf(&sb, "rank %d on '%s' sent nothing for %.0f s: lost (its host down or cut off, or the rank "
			"hung); ending the job", st->silent_rank, st->silent_host, st->silent_for);
	else
		sb_adds(&sb, "stopped by the error above");
	if (!st->lost && st->silent_for > 0)
		sb_addf(&sb, " (rank %d on '%s' had sent nothing for %.0f s)", st->silent_rank, st->silent_host,
			st->silent_for);
	if (st->handback_failed)
		sb_adds(&sb, ": the cells in flight could not be handed back, so the next run counts an attempt for "
			"each one that was running");
	else
		sb_addf(&sb, ": %" PRIu64 " cells in flight went back to planned (no attempt charged)", st->handed_back);
	fprintf(stderr, "sweep: %s: %s; run the same command again to resume%s%s\n", s->name, sb.buf,
		st->lost ? " (with that host back, or without it)" : st->interrupted || st->ended_rank ? "" :
		" once that is mended", launcher_resume());
	sb_release(&sb);
}

/* A lost worker: the whole job ends (comm_end_cut). */
static void end_lost_job(struct comm *c)
{
	comm_end_cut(c, EXIT_FAIL, RUN_LOST_WAIT);
}

struct outside {
	const struct spec *s;
	unsigned shard, nshards;
	uint64_t n;
};

static int count_outside(const struct task *t, void *data)
{
	struct outside *o = data;

	o->n += store_shard(o->s->name, t->params, t->pass, o->nshards) != o->shard;
	return 0;
}

static int add_replica(const char *replica, const struct store_counts *c, void *data)
{
	struct strbuf *names = data;

	if (c->planned)
		sb_add(names, replica, strlen(replica) + 1);
	return 0;
}

/* A shard runs the pending cells of its database, so the database must hold no other shard's. Read a
 * window at a time, replica by replica: a shard's database holds a share of a large sweep. */
static int check_shard(struct store *st, const struct spec *s, const struct run_extra *x, const char *db)
{
	struct outside o = { s, x->shard, x->nshards, 0 };
	struct strbuf names = STRBUF_INIT;
	int ret = 0;

	if (!x->nshards)
		return 0;
	if (store_each_replica(st, s->name, add_replica, &names))
		ret = -1;
	for (size_t at = 0; !ret && at < names.len; at += strlen(names.buf + at) + 1) {
		struct store_cursor cur = STORE_CURSOR_INIT;
		int got = 1;

		while (!ret && got)
			ret = interrupt_signal() ? -1 :
			      store_pending(st, s->name, names.buf + at, &cur, 65536, count_outside, &o, &got);
	}
	sb_release(&names);
	if (!ret && o.n)
		ret = error("'%s' holds %llu pending cells of other shards than %u/%u: give each shard a database "
			    "of its own (sweep submit --array does)", db, (unsigned long long)o.n, x->shard,
			    x->nshards);
	return ret;
}

static int count_row(const struct store_row *row, void *data)
{
	uint64_t *n = data;

	for (int i = 0; i < row->ncol; i++)
		n[i] = (uint64_t)row->num[i];
	return 0;
}

/* A closing line names this many hosts (or quarantined cells) at most, then says how many more. */
#define RUN_NAMED 4
#define RUN_NAMED_CELLS "3"

/* What a closing line lists: the first RUN_NAMED items, and how many cells they hold in all. */
struct named {
	struct strbuf sb;
	uint64_t items, cells;
};

static void named_add(struct named *l, const char *text, uint64_t cells)
{
	char shown[84];

	if (l->items++ < RUN_NAMED)
		sb_addf(&l->sb, "%s%s", l->items > 1 ? ", " : "", printable(shown, text, 80));
	l->cells += cells;
}

/* What find_waiting gathers from each replica's counts. */
struct waiting_scan {
	const struct spec *s;
	struct named *w;
	uint64_t templates;
	unsigned char *has_cells;      /* by the spec's hosts: a replica of that host has cells */
};

/* A replica with cells still to run after a run that went through: no worker of the run served it. */
static int scan_replica(const char *replica, const struct store_counts *c, void *data)
{
	struct waiting_scan *ws = data;
	uint64_t left = c->planned + c->running;
	size_t len;

	if (!*replica)
		ws->templates = c->template;
	if (left) {
		char *item = xasprintf("%s (%" PRIu64 ")", *replica ? replica : "gangs larger than a host here", left);

		named_add(ws->w, item, left);
		free(item);
	}
	for (int i = 0; i < ws->s->nhosts; i++) {
		len = strlen(ws->s->hosts[i]);
		if (!strncmp(replica, ws->s->hosts[i], len) && (!replica[len] || replica[len] == '/') &&
		    left + c->ok + c->quarantined + c->template + c->retired)
			ws->has_cells[i] = 1;
	}
	return 0;
}

/* The cells that wait for what this run did not have, by replica (a host, host/gpuN, or gangs), and the
 * hosts named in the spec's hosts: that never ran (no replicas yet: their cells are the templates). From
 * the counts the store keeps: no cell is read. */
static int find_waiting(struct store *st, const struct spec *s, struct named *w)
{
	struct waiting_scan ws = { s, w, 0, xcalloc((size_t)s->nhosts + 1, 1) };
	int ret = store_each_replica(st, s->name, scan_replica, &ws);

	for (int i = 0; !ret && i < s->nhosts && ws.templates; i++) {
		if (!ws.has_cells[i]) {
			char *item = xasprintf("%s (%" PRIu64 ")", s->hosts[i], ws.templates);

			named_add(w, item, ws.templates);
			free(item);
		}
	}
	free(ws.has_cells);
	return ret;
}

/* How much of a cell's error a closing line shows: its first line, whole up to this many bytes. */
#define RUN_REASON 300

/* A quarantined cell: its parameters, and its error unless the one before had the same. */
struct quarantined {
	struct strbuf sb;
	uint64_t shown;
	char why[RUN_REASON + 4];
};

static int add_quarantined(const struct store_row *row, void *data)
{
	struct quarantined *q = data;
	char why[RUN_REASON + 4];

	printable_line(why, row->text[1] ? row->text[1] : "no error", RUN_REASON);
	if (q->shown++)
		sb_adds(&q->sb, ", ");
	sb_add_printable(&q->sb, row->text[0] ? row->text[0] : "", 200);
	if (strcmp(why, q->why))
		sb_addf(&q->sb, " (%s)", why);
	memcpy(q->why, why, sizeof(why));
	return 0;
}

/* The closing lines of work left: what the waiting cells wait for, and the quarantined cells (the first
 * few by their parameters) with the command that puts them back. */
static int say_left(struct store *st, const struct spec *s, const char *db, const struct named *w,
		    uint64_t quarantined, const struct master_stats *ms)
{
	const char *bind[] = { s->name };
	struct quarantined q = { STRBUF_INIT, 0, "" };
	struct strbuf cmd = STRBUF_INIT;

	if (w->cells && ms->cannot_kind == HELLO_NO_GPU)
		fprintf(stderr, "sweep: %s: %" PRIu64 " cells wait for a GPU (%d worker%s of this run had none: %s); "
			"run again with workers on GPUs to measure them\n", s->name, w->cells, ms->cannot,
			ms->cannot == 1 ? "" : "s", ms->cannot_why);
	else if (w->cells)
		fprintf(stderr, "sweep: %s: %" PRIu64 " cells wait for hosts, GPUs or gangs that were not in this run: "
			"%s%s; run again with them to measure those\n", s->name, w->cells, w->sb.buf,
			w->items > RUN_NAMED ? " and others" : "");
	if (!quarantined)
		return 0;
	if (store_query(st, "SELECT params, error FROM cells WHERE sweep = ?1 AND state = 'quarantined'"
			" ORDER BY ord, id LIMIT " RUN_NAMED_CELLS, bind, 1, 1, add_quarantined, &q)) {
		sb_release(&q.sb);
		return -1;
	}
	sb_adds(&cmd, "sweep retry ");
	sb_add_word(&cmd, db);
	sb_adds(&cmd, " --sweep ");
	sb_add_word(&cmd, s->name);
	if (quarantined > q.shown)
		sb_addf(&q.sb, " and %" PRIu64 " more", quarantined - q.shown);
	fprintf(stderr, "sweep: %s: %" PRIu64 " cells quarantined: %s; to measure them again: %s --state "
		"quarantined, then run again\n", s->name, quarantined, q.sb.buf, cmd.buf);
	sb_release(&q.sb);
	sb_release(&cmd);
	return 0;
}

/* The labels of the inventory (when given) into the facts of the hosts the database knows. */
static void label_hosts(const struct inventory *inv, struct store *st, const char *db)
{
	struct strbuf missing = STRBUF_INIT;
	int matched, unmatched;

	if (!inv || !inv->nhosts)
		return;
	if (inventory_apply(inv, st, &matched, &unmatched, &missing))
		warning("hosts were not labelled from '%s'", inv->path);
	else if (unmatched)
		warning("%d hostname%s of '%s' %s not in the inventory '%s': no labels for %s", unmatched,
			unmatched == 1 ? "" : "s", db, unmatched == 1 ? "is" : "are", inv->path, missing.buf);
	sb_release(&missing);
}

/* sweep run --force: the chosen cells with results are measured again, their ok results superseded. */
static int force(struct store *st, const struct spec *s, const struct run_extra *x)
{
	uint64_t cells, superseded;

	if (store_begin(st))
		return -1;
	if (store_force(st, s->name, x->force_where, x->force_binds, x->nforce_binds, &cells, &superseded) ||
	    store_commit(st)) {
		store_rollback(st);
		return -1;
	}
	fprintf(stderr, "sweep: %s: --force: %" PRIu64 " cells to measure again (%" PRIu64 " ok results kept as "
		"superseded)\n", s->name, cells, superseded);
	return 0;
}

void run_release_workers(struct comm *c)
{
	for (int r = 1; r < comm_size(c); r++)
		comm_master_send(c, r, MSG_STOP, "", 0);
}

/* The start of a run stopped by an interrupt: each step left the database as it was. */
static void start_interrupted(const struct spec *s, struct run_result *res)
{
	res->interrupted = interrupt_signal();
	fprintf(stderr, "sweep: %s: interrupted by %s before the run began: nothing was changed; run the same "
		"command again to start\n", s->name, interrupt_name(res->interrupted));
}

/*
 * The steps before the master, each one transaction (rolled back when an interrupt stops one of its
 * statements) or a read: plan (the spec against the stored plan, new cells), --force, the recovery of
 * cells a dead job left in flight, the shard's check, the run's row. None reads every cell unless the
 * plan changed or a job died. FAIL_USAGE: the user must change something; -1: failed or interrupted.
 */
static int start(struct store *st, const struct spec *s, const struct run_extra *x, const char *path,
		 const char *args, struct master_opts *o)
{
	struct plan_db_opts po = { x->shard, x->nshards, x->replan, x->max_cells, NULL };
	struct strbuf inputs = STRBUF_INIT;
	struct identity id;
	uint64_t added, existing;
	int rc;

	/* The files the measurement runs and reads, hashed once each: part of what the plan stands for. */
	if (identity_collect(s, &id))
		return FAIL_USAGE;
	if (id.folder && !o->quiet)   /* where relative paths of the spec mean something: said first */
		fprintf(stderr, "sweep: %s: commands run in %s\n", s->name, id.folder);
	identity_json(&id, &inputs);
	identity_release(&id);
	po.inputs = inputs.buf;
	if ((rc = plan_db_with(s, st, &po, &added, &existing)))
		goto out;
	rc = -1;
	if (interrupt_signal() || (x->force && force(st, s, x)) || store_recover(st, s->name, s->max_attempts) ||
	    check_shard(st, s, x, path) || interrupt_signal())
		goto out;
	if (!store_run_begin(st, args, s->name, s->hash, &o->run) && !store_run_inputs(st, o->run, inputs.buf) &&
	    !store_run_launcher(st, o->run, launcher_line()) && !slurm_note_run(st, o->run))
		rc = 0;
out:
	sb_release(&inputs);
	return rc;
}

/* The closing line's counts: n[0] ok, n[1] quarantined, n[2] ok short of their precision (STORE_IMPRECISE). */
static int closing_counts(struct store *st, const struct spec *s, uint64_t n[3])
{
	const char *bind[] = { s->name };
	struct store_counts c;

	if (store_cell_counts(st, s->name, NULL, &c) ||
	    store_query(st, "SELECT count(*) FROM results r CROSS JOIN cells k ON k.id = r.cell"
			" WHERE r.status = 'ok' AND " STORE_IMPRECISE("r") " AND k.sweep = ?1", bind, 1, 1, count_row, &n[2]))
		return -1;
	n[0] = c.ok;
	n[1] = c.quarantined;
	return 0;
}

int run_spec(struct comm *c, const struct spec *s, const char *db, struct master_opts *o,
	     const struct run_extra *x, const char *args, struct run_result *res)
{
	struct store *st = NULL;
	struct master_stats stats = { 0 };
	const char *path = db ? db : s->db;
	uint64_t n[3] = { 0 };
	struct named waiting = { STRBUF_INIT, 0, 0 };
	int ret = -1, made = 0, rc, ran = 0;

	memset(res, 0, sizeof(*res));
	o->spec = s;
	/* From here Ctrl-C stops the start where it is safe to, as it stops the run later (master.c). */
	interrupt_catch();
	/* Too many cells is refused before anything is made. */
	if (plan_db_size(s, x->max_cells)) {
		ret = FAIL_USAGE;
		goto out;
	}
	if ((rc = open_for(path, &st, &made))) {
		ret = rc;
		goto out;
	}
	if ((rc = start(st, s, x, path, args, o))) {
		ret = rc;
		if (made) {
			store_close(st);
			st = NULL;
			store_remove_files(path);   /* it would say a sweep is there */
		}
		goto out;
	}
	o->store = st;
	res->run = o->run;
	ran = 1;
	if (master_run(c, o, &stats)) {
		label_hosts(x->inv, st, path);
		res->interrupted = stats.interrupted;
		if (stats.none_can && stats.cannot_kind == HELLO_NO_PROGRAM) {
			/* said by the master; every attempt would have failed the same way, so none was made */
			fprintf(stderr, "sweep: %s: nothing was attempted; mend the spec or the host, then run again\n",
				s->name);
			ret = FAIL_USAGE;
			goto out;
		}
		say_stopped(s, &stats);
		goto out;
	}
	label_hosts(x->inv, st, path);
	if (closing_counts(st, s, n) || find_waiting(st, s, &waiting))
		goto out;
	store_run_end(st, o->run, n[1] || waiting.cells ? "incomplete" : "ok");
	/* A result short of its precision is kept, but never silently: the count is on the closing line. */
	if (!o->quiet || n[1] || waiting.cells) {   /* cells left without a result are the run's error */
		fprintf(stderr, "sweep: %s: %llu cells ok, %llu quarantined, %llu not run; this run: %llu results ok, "
			"%llu failed attempts in %.2f s", s->name, (unsigned long long)n[0],
			(unsigned long long)n[1], (unsigned long long)waiting.cells, (unsigned long long)stats.ok,
			(unsigned long long)stats.failed, stats.seconds);
		if (n[2])
			fprintf(stderr, "; %llu cells ok short of their precision", (unsigned long long)n[2]);
		fputc('\n', stderr);
	}
	if (say_left(st, s, path, &waiting, n[1], &stats))
		goto out;
	res->ok = n[0];
	res->quarantined = n[1];
	res->not_run = waiting.cells;
	ret = 0;
out:
	if (!ran && ret && interrupt_signal())
		start_interrupted(s, res);
	if (ret && ret != FAIL_USAGE && res->interrupted)   /* bad input is said first, as it was found first */
		ret = FAIL_INTERRUPTED;
	/* Workers wait for the spec of a run that did not begin: they must not wait for ever. */
	if (!ran && ret)
		run_release_workers(c);
	sb_release(&waiting.sb);
	store_close(st);
	interrupt_release();
	if (ret && stats.lost)
		end_lost_job(c);
	return ret;
}

/* A rank other than 0 is a worker for the whole job. */
int run_worker(struct comm *c)
{
	char host[256] = "?";
	int rc;

	/* Ctrl-C reaches every rank, and mpirun passes SIGTERM (and Slurm's SIGUSR1) on to them: a worker
	 * waits for the master's STOP instead, so that the master can record the run first. Ignored, not
	 * caught: no system call of the worker is interrupted; its executors start with the defaults. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	rc = worker_run(c);
	if (!rc)
		return 0;
	/* The master is gone (it said so): what was committed stays, and a rerun resumes. */
	if (rc > 0)
		comm_orphan_exit(c, EXIT_FAIL);
	/* Without fault-tolerant MPI the master cannot go on without this rank: end the job now, so that it
	 * does not wait forever; what was committed stays, and a rerun resumes. */
	gethostname(host, sizeof(host) - 1);
	error("rank %d on '%s' stopped on an error; ending the job (run the same command to resume)",
	      comm_rank(c), host);
	comm_abort(c, EXIT_FAIL);
}
