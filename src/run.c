/* run.c: `sweep plan` and `sweep run`: a spec into the database, then the master or a worker. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "comm.h"
#include "inventory.h"
#include "msg.h"
#include "plan.h"
#include "run.h"
#include "sched.h"
#include "slurm.h"
#include "store.h"

struct plan_counts {
	struct store *st;
	const struct spec *s;
	uint64_t added, existing;
	unsigned shard, nshards;   /* nshards > 0: plan only the cells of that shard (store_shard) */
};

static int add_cell(const struct plan_cell *c, void *data)
{
	struct plan_counts *pc = data;
	int added;

	if (pc->nshards && store_shard(pc->s->name, c->params, c->pass, pc->nshards) != pc->shard)
		return 0;
	if (store_add_cell(pc->st, pc->s->name, c->key, c->params, c->pass, c->replica, c->ord,
			   pc->s->per == PER_ANY ? "planned" : "template", &added))
		return -1;
	if (added)
		pc->added++;
	else
		pc->existing++;
	return 0;
}

/* Store the spec and every cell of its grid (one transaction); counts of new and existing cells. */
static int plan_store(const struct spec *s, struct store *st, unsigned shard, unsigned nshards,
		      uint64_t *added, uint64_t *existing)
{
	struct plan_counts pc = { st, s, 0, 0, shard, nshards };

	if (store_begin(st))
		return -1;
	if (store_put_sweep(st, s) || plan_each(s, add_cell, &pc)) {
		store_rollback(st);
		return -1;
	}
	if (store_commit(st))
		return -1;
	*added = pc.added;
	*existing = pc.existing;
	return 0;
}

int run_plan(const struct spec *s, struct store *st, uint64_t *added, uint64_t *existing)
{
	return plan_store(s, st, 0, 0, added, existing);
}

/* Make the folder that will hold path (results/ by default). */
static int make_parent(const char *path)
{
	char *dir = xstrdup(path), *slash = strrchr(dir, '/');
	int ret = 0;

	if (slash && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0777) && errno != EEXIST)
			ret = error("cannot create '%s': %s", dir, strerror(errno));
	}
	free(dir);
	return ret;
}

static int open_for(const struct spec *s, const char *db, struct store **st)
{
	const char *path = db ? db : s->db;

	if (make_parent(path))
		return -1;
	return store_open(path, STORE_RW, st);
}

static const struct option plan_opts[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

int cmd_plan(int argc, char **argv)
{
	const char *db = NULL;
	struct spec s;
	struct store *st = NULL;
	uint64_t added, existing;
	int opt, ret = EXIT_FAIL;

	while ((opt = getopt_long(argc, argv, "d:h", plan_opts, NULL)) != -1) {
		if (opt == 'd')
			db = optarg;
		else
			return opt == 'h' ? (cli_usage("plan"), EXIT_OK) : cli_usage("plan");
	}
	if (optind != argc - 1)
		return cli_usage("plan");
	if (spec_load(argv[optind], &s))
		return EXIT_USAGE;
	if (!open_for(&s, db, &st) && !plan_store(&s, st, 0, 0, &added, &existing)) {
		printf("%s: %llu cells planned in %s: %llu new, %llu already there%s\n", s.name,
		       (unsigned long long)(added + existing), db ? db : s.db, (unsigned long long)added,
		       (unsigned long long)existing,
		       s.per == PER_ANY ? "" : s.per == PER_HOST ? " (each run once per host)"
							 : " (each run once per GPU)");
		ret = EXIT_OK;
	}
	store_close(st);
	spec_release(&s);
	return ret;
}

static const struct option run_opts[] = {
	{ "db", required_argument, NULL, 'd' },
	{ "no-local-worker", no_argument, NULL, 'n' },
	{ "progress", optional_argument, NULL, 'p' },
	{ "quiet", no_argument, NULL, 'q' },
	{ "shard", required_argument, NULL, 's' },
	{ "inventory", required_argument, NULL, 'i' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* What `sweep run` takes beyond the scheduler's options. */
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
	int matched, unmatched;

	if (!inv->nhosts)
		return;
	if (inventory_apply(inv, st, &matched, &unmatched))
		warning("hosts were not labelled from '%s'", inv->path);
	else if (unmatched)
		warning("%d hostname%s of '%s' not in the inventory '%s': no labels", unmatched,
			unmatched == 1 ? " is" : "s are", db, inv->path);
}

static void release_workers(struct comm *c)
{
	for (int r = 1; r < comm_size(c); r++)
		comm_master_send(c, r, MSG_STOP, "", 0);
}

int run_spec(struct comm *c, const struct spec *s, const char *db, struct sched_opts *o,
	     const struct run_extra *x, const char *args, struct run_result *res)
{
	struct inventory inv = { 0 };
	struct store *st = NULL;
	struct sched_stats stats;
	uint64_t added, existing, n[4] = { 0 };
	int ret = EXIT_FAIL;

	memset(res, 0, sizeof(*res));
	if (x->inventory && inventory_load(x->inventory, &inv))
		return EXIT_USAGE;
	o->spec = s;
	if (open_for(s, db, &st) || plan_store(s, st, x->shard, x->nshards, &added, &existing) ||
	    store_recover(st, s->name, s->max_attempts) || check_shard(st, s, x, db ? db : s->db) ||
	    store_run_begin(st, args, s->name, s->hash, &o->run) || slurm_note_run(st, o->run))
		goto out;
	o->store = st;
	res->run = o->run;
	if (sched_master(c, o, &stats)) {
		store_run_end(st, o->run, "failed");
		label_hosts(&inv, st, db ? db : s->db);
		error("the run stopped early; run the same command again to resume where it stopped");
		goto out;
	}
	label_hosts(&inv, st, db ? db : s->db);
	{
		const char *bind[] = { s->name };

		if (store_query(st, "SELECT count(*) FILTER (WHERE state = 'ok'),"
				" count(*) FILTER (WHERE state = 'quarantined'),"
				" count(*) FILTER (WHERE state IN ('planned', 'running')), 0"
				" FROM cells WHERE sweep = ?1 AND state != 'template'", bind, 1, 1, count_row, n))
			goto out;
	}
	n[2] += stats.waiting;
	store_run_end(st, o->run, n[1] || n[2] ? "incomplete" : "ok");
	fprintf(stderr, "sweep: %s: %llu cells ok, %llu quarantined, %llu not run; this run: %llu results ok, "
		"%llu failed attempts in %.2f s\n", s->name, (unsigned long long)n[0], (unsigned long long)n[1],
		(unsigned long long)n[2], (unsigned long long)stats.ok, (unsigned long long)stats.failed,
		stats.seconds);
	if (n[2])
		fprintf(stderr, "sweep: %llu cells wait for hosts or GPUs that were not in this run\n",
			(unsigned long long)n[2]);
	res->ok = n[0];
	ret = n[1] || n[2] ? EXIT_CELLS : EXIT_OK;
out:
	store_close(st);
	inventory_release(&inv);
	return ret;
}

/* The master's side of `sweep run`: the spec from its file, then run_spec. */
static int run_master(struct comm *c, const char *path, const char *db, struct sched_opts *o,
		      const struct run_extra *x, int argc, char **argv)
{
	struct spec s;
	struct strbuf args = STRBUF_INIT;
	struct run_result res;
	int ret;

	if (spec_load(path, &s)) {
		release_workers(c);
		return EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++)
		sb_addf(&args, "%s%s", i ? " " : "", argv[i]);
	ret = run_spec(c, &s, db, o, x, args.buf, &res);
	if (ret == EXIT_USAGE)
		release_workers(c);
	sb_release(&args);
	spec_release(&s);
	return ret;
}

/* A rank other than 0 is a worker for the whole job. */
int run_worker(struct comm *c)
{
	char host[256] = "?";

	if (!sched_worker(c))
		return EXIT_OK;
	/* Without fault-tolerant MPI the master cannot go on without this rank: end the job now, so that it
	 * does not wait forever; what was committed stays, and a rerun resumes. */
	gethostname(host, sizeof(host) - 1);
	error("rank %d on '%s' stopped on an error; ending the job (run the same command to resume)",
	      comm_rank(c), host);
	comm_abort(c, EXIT_FAIL);
}

int cmd_run(int argc, char **argv)
{
	struct sched_opts o = { 0 };
	struct run_extra x = { 0 };
	const char *db = NULL;
	struct comm *c;
	int opt, ret;

	o.local_worker = 1;
	o.progress = isatty(2) ? 1 : 0;
	o.progress_every = 1.0;
	o.hello_timeout = 120;
	while ((opt = getopt_long(argc, argv, "d:h", run_opts, NULL)) != -1) {
		switch (opt) {
		case 'd':
			db = optarg;
			break;
		case 'n':
			o.local_worker = 0;
			break;
		case 'p':
			o.progress = 2;
			if (optarg && (parse_double(optarg, &o.progress_every) || o.progress_every <= 0))
				return error("--progress takes a positive number of seconds, not '%s'", optarg),
				       EXIT_USAGE;
			break;
		case 'q':
			o.progress = 0;
			break;
		case 's': {
			long i, k;
			int end = 0;

			if (sscanf(optarg, "%ld/%ld%n", &i, &k, &end) != 2 || optarg[end] || k < 1 || k > 100000 ||
			    i < 0 || i >= k)
				return error("--shard takes I/K with 0 <= I < K, not '%s'", optarg), EXIT_USAGE;
			x.shard = (unsigned)i;
			x.nshards = (unsigned)k;
			break;
		}
		case 'i':
			x.inventory = optarg;
			break;
		case 'h':
			cli_usage("run");
			return EXIT_OK;
		default:
			return cli_usage("run");
		}
	}
	if (optind != argc - 1)
		return cli_usage("run");
	if (comm_init(&argc, &argv, &c))
		return EXIT_FAIL;
	ret = comm_rank(c) == 0 ? run_master(c, argv[optind], db, &o, &x, argc, argv) : run_worker(c);
	comm_finish(c);
	return ret;
}
