/* run.c: one sweep run: the spec planned into its database, then the master (rank 0) or a worker. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "comm.h"
#include "exitcode.h"
#include "inventory.h"
#include "msg.h"
#include "plan_db.h"
#include "run.h"
#include "master.h"
#include "worker.h"
#include "slurm.h"
#include "store.h"

/* Open the database for writing, made when missing (*made), with its writer lock. */
static int open_for(const char *path, struct store **st, int *made)
{
	*made = access(path, F_OK) != 0;
	if (mkdir_parent(path) || store_open(path, STORE_RW, st))
		return -1;
	return store_lock(*st, "sweep run");
}

static const char *signal_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "a signal";
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

/* A shard runs the pending cells of its database, so the database must hold no other shard's. */
static int check_shard(struct store *st, const struct spec *s, const struct run_extra *x, const char *db)
{
	struct outside o = { s, x->shard, x->nshards, 0 };

	if (!x->nshards)
		return 0;
	if (store_each_pending(st, s->name, count_outside, &o))
		return -1;
	if (o.n)
		return error("'%s' holds %llu pending cells of other shards than %u/%u: give each shard a database "
			     "of its own (sweep submit --array does)", db, (unsigned long long)o.n, x->shard,
			     x->nshards);
	return 0;
}

static int count_row(const struct store_row *row, void *data)
{
	uint64_t *n = data;

	for (int i = 0; i < row->ncol; i++)
		n[i] = (uint64_t)row->num[i];
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

int run_spec(struct comm *c, const struct spec *s, const char *db, struct master_opts *o,
	     const struct run_extra *x, const char *args, struct run_result *res)
{
	struct store *st = NULL;
	struct master_stats stats;
	struct plan_db_opts po = { x->shard, x->nshards, x->replan, x->max_cells };
	const char *path = db ? db : s->db;
	uint64_t added, existing, n[4] = { 0 };
	int ret = -1, made = 0, rc;

	memset(res, 0, sizeof(*res));
	o->spec = s;
	/* Too many cells is refused before anything is made. */
	if (plan_db_size(s, x->max_cells))
		return -2;
	if (open_for(path, &st, &made))
		goto out;
	if ((rc = plan_db_with(s, st, &po, &added, &existing))) {
		ret = rc;
		if (made) {
			store_close(st);
			st = NULL;
			store_remove_files(path);   /* it would say a sweep is there */
		}
		goto out;
	}
	if (x->force && force(st, s, x))
		goto out;
	if (store_recover(st, s->name, s->max_attempts) || check_shard(st, s, x, path) ||
	    store_run_begin(st, args, s->name, s->hash, &o->run) || slurm_note_run(st, o->run))
		goto out;
	o->store = st;
	res->run = o->run;
	if (master_run(c, o, &stats)) {
		label_hosts(x->inv, st, path);
		if ((res->interrupted = stats.interrupted)) {
			fprintf(stderr, "sweep: %s: interrupted by %s: %" PRIu64 " cells in flight went back to planned "
				"(no attempt charged); run the same command again to resume\n", s->name,
				signal_name(stats.interrupted), stats.handed_back);
			goto out;
		}
		store_run_end(st, o->run, "failed");
		error("the run stopped early; run the same command again to resume where it stopped");
		goto out;
	}
	label_hosts(x->inv, st, path);
	{
		const char *bind[] = { s->name };

		if (store_query(st, "SELECT count(*) FILTER (WHERE state = 'ok'),"
				" count(*) FILTER (WHERE state = 'quarantined'),"
				" count(*) FILTER (WHERE state IN ('planned', 'running')),"
				" (SELECT count(*) FROM results r JOIN cells k ON k.id = r.cell WHERE k.sweep = ?1"
				"  AND r.status = 'ok' AND " STORE_IMPRECISE("r") ")"
				" FROM cells WHERE sweep = ?1 AND state != 'template'", bind, 1, 1, count_row, n))
			goto out;
	}
	n[2] += stats.absent;   /* the waiting cells that are planned rows are counted already */
	store_run_end(st, o->run, n[1] || n[2] ? "incomplete" : "ok");
	/* A result short of its precision is kept, but never silently: the count is on the closing line. */
	if (!o->quiet || n[1] || n[2]) {   /* cells left without a result are the run's error */
		fprintf(stderr, "sweep: %s: %llu cells ok, %llu quarantined, %llu not run; this run: %llu results ok, "
			"%llu failed attempts in %.2f s", s->name, (unsigned long long)n[0],
			(unsigned long long)n[1], (unsigned long long)n[2], (unsigned long long)stats.ok,
			(unsigned long long)stats.failed, stats.seconds);
		if (n[3])
			fprintf(stderr, "; %llu cells ok short of their precision", (unsigned long long)n[3]);
		fputc('\n', stderr);
	}
	if (stats.waiting + stats.absent && !o->quiet)
		fprintf(stderr, "sweep: %llu cells wait for hosts, GPUs or gangs that were not in this run\n",
			(unsigned long long)(stats.waiting + stats.absent));
	res->ok = n[0];
	res->quarantined = n[1];
	res->not_run = n[2];
	ret = 0;
out:
	store_close(st);
	return ret;
}

/* A rank other than 0 is a worker for the whole job. */
int run_worker(struct comm *c)
{
	char host[256] = "?";

	/* Ctrl-C reaches every rank, and mpirun passes SIGTERM (and Slurm's SIGUSR1) on to them: a worker
	 * waits for the master's STOP instead, so that the master can record the run first. Ignored, not
	 * caught: no system call of the worker is interrupted; its executors start with the defaults. */
	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGUSR1, SIG_IGN);
	if (!worker_run(c))
		return 0;
	/* Without fault-tolerant MPI the master cannot go on without this rank: end the job now, so that it
	 * does not wait forever; what was committed stays, and a rerun resumes. */
	gethostname(host, sizeof(host) - 1);
	error("rank %d on '%s' stopped on an error; ending the job (run the same command to resume)",
	      comm_rank(c), host);
	comm_abort(c, EXIT_FAIL);
}
