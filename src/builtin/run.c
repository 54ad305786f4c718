/* run.c: `sweep run SPEC`: plan if needed, then run every cell without a result (rank 0 is the master
 * under mpirun, every other rank a worker). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../clocks.h"
#include "../report.h"
#include "../run.h"
#include "builtin.h"

/* --force --where EXPR: the expression as SQL over the sweep's cells and their latest results, through
 * the reports' translation (the same names as report --where). */
static int force_where(const struct spec *s, const char *db, const char *expr, struct report_ctx *c,
		       struct report_query *where, struct run_extra *x)
{
	int ret = report_ctx_open(c, db ? db : s->db, s->name);

	if (ret || report_expr_sql(c, where, "--where", expr, 0))
		return ret ? ret : FAIL_USAGE;   /* the database's kind, or the expression's */
	x->force_where = where->sql.buf;
	x->force_binds = (const char *const *)where->binds;
	x->nforce_binds = (int)where->nbind;
	return 0;
}

/* --log: this process's stderr appended to path. mpirun stops passing the ranks' output on once it is
 * signalled (as Slurm signals a job's every process), and a job's last word must reach its log. */
static int log_to(const char *path)
{
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);

	if (fd < 0)
		return error("cannot open the log '%s': %s", path, strerror(errno));
	if (dup2(fd, 2) < 0) {
		close(fd);
		return error("cannot write the log '%s': %s", path, strerror(errno));
	}
	close(fd);
	return 0;
}

/* Rank 0: the spec and the inventory, then the run. Bad input stops the workers before they wait. Returns
 * a kind of failure (exitcode.h). */
static int run_master(struct comm *c, const char *path, const char *db, struct master_opts *o,
		      struct run_extra *x, const char *inv_path, int lock_clocks, int argc, char **argv)
{
	struct inventory inv = { 0 };
	struct spec s;
	struct strbuf args = STRBUF_INIT;
	struct report_ctx ctx = { 0 };
	struct report_query where = REPORT_QUERY_INIT;
	struct run_result res;
	int ret;

	if (spec_load(path, &s)) {
		run_release_workers(c);
		return FAIL_USAGE;
	}
	if ((ret = clocks_consent(&s, path, lock_clocks))) {
		run_release_workers(c);
		spec_release(&s);
		return ret;
	}
	if (inv_path && inventory_load(inv_path, &inv)) {
		run_release_workers(c);
		spec_release(&s);
		return FAIL_USAGE;
	}
	x->inv = &inv;
	if (x->force_where && (ret = force_where(&s, db, x->force_where, &ctx, &where, x))) {
		run_release_workers(c);
		goto out;
	}
	for (int i = 0; i < argc; i++)
		sb_addf(&args, "%s%s", i ? " " : "", argv[i]);
	ret = run_spec(c, &s, db, o, x, args.buf, &res);
	if (!ret && (res.quarantined || res.not_run))
		ret = FAIL_CELLS;
out:
	report_ctx_release(&ctx);
	report_query_release(&where);
	sb_release(&args);
	spec_release(&s);
	inventory_release(&inv);
	return ret;
}

static int run_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' }, { "no-local-worker", no_argument, NULL, 'n' },
		{ "progress", optional_argument, NULL, 'p' }, { "quiet", no_argument, NULL, 'q' },
		{ "shard", required_argument, NULL, 's' }, { "inventory", required_argument, NULL, 'i' },
		{ "replan", no_argument, NULL, 'R' }, { "max-cells", required_argument, NULL, 'M' },
		{ "force", no_argument, NULL, 'F' }, { "where", required_argument, NULL, 'w' },
		{ "log", required_argument, NULL, 'l' }, { "lock-clocks", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct master_opts o = { 0 };
	struct run_extra x = { 0 };
	const char *db = NULL, *inv = NULL, *log = NULL;
	struct comm *c;
	int opt, ret, lock_clocks = 0;

	o.local_worker = 1;
	/* Progress by default: in place on a terminal, else (a log, mpirun's forwarding) every 30 s. */
	o.progress = isatty(2) ? 1 : 2;
	o.progress_every = isatty(2) ? 1.0 : 30.0;
	o.hello_timeout = 120;
	while ((opt = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
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
				return exitcode_of(fail_usage("--progress takes a positive number of seconds, not '%s'", optarg));
			break;
		case 'q':
			o.progress = 0;
			o.quiet = 1;
			break;
		case 's': {
			long i, k;
			int end = 0;

			if (sscanf(optarg, "%ld/%ld%n", &i, &k, &end) != 2 || optarg[end] || k < 1 || k > 100000 ||
			    i < 0 || i >= k)
				return exitcode_of(fail_usage("--shard takes I/K with 0 <= I < K, not '%s'", optarg));
			x.shard = (unsigned)i;
			x.nshards = (unsigned)k;
			break;
		}
		case 'i':
			inv = optarg;
			break;
		case 'R':
			x.replan = 1;
			break;
		case 'M': {
			double v;

			if (parse_double(optarg, &v) || v < 1 || v > 1e18 || v != (double)(uint64_t)v)
				return exitcode_of(fail_usage("--max-cells takes a positive whole number, not '%s'", optarg));
			x.max_cells = (uint64_t)v;
			break;
		}
		case 'F':
			x.force = 1;
			break;
		case 'w':
			x.force_where = optarg;
			break;
		case 'l':
			log = optarg;
			break;
		case 'L':
			if (clocks_forbidden())
				return exitcode_of(fail_usage("--lock-clocks is refused: %s", clocks_forbidden()));
			lock_clocks = 1;
			break;
		case 'h':
			cmd_usage(&cmd_run);
			return EXIT_OK;
		default:
			return cmd_usage(&cmd_run);
		}
	}
	if (optind != argc - 1)
		return cmd_usage(&cmd_run);
	if (x.force_where && !x.force)
		return exitcode_of(fail_usage("--where goes with --force (which cells to measure again)"));
	if (log && log_to(log))
		return exitcode_of(FAIL_USAGE);
	if (comm_init(&argc, &argv, &c))
		return exitcode_of(FAIL_IO);
	ret = comm_rank(c) == 0 ? run_master(c, argv[optind], db, &o, &x, inv, lock_clocks, argc, argv)
				: (run_worker(c), FAIL_OK);
	comm_finish(c);
	return exitcode_of(ret);
}

const struct cmd cmd_run = { "run", run_fn,
	"sweep run SPEC [--db PATH] [--no-local-worker] [--progress[=SECONDS]] [--quiet]\n"
	"                 [--shard I/K] [--inventory hosts/FILE.yaml] [--replan] [--max-cells N]\n"
	"                 [--force [--where EXPR]] [--log FILE] [--lock-clocks]",
	"Plan if needed, then run every cell without a successful result. Under mpirun, rank 0 is the\n"
	"master (and runs a worker thread unless --no-local-worker) and every other rank a worker.\n"
	"Progress goes to stderr: done/total, rate, ETA, failed attempts, each host's rate and the cell\n"
	"running longest; rewritten in place on a terminal, else a line every 30 s (every SECONDS with\n"
	"--progress). --quiet prints errors only (no progress, no closing lines).\n"
	"Exit: 0 every cell ok, 3 some cells failed or were not run, 2 bad input, 5 interrupted, 1 other\n"
	"errors.\n"
	"Running the same command again resumes where a killed run stopped.\n"
	"--shard I/K plans and runs only the cells whose key falls in shard I of K (for array jobs; each\n"
	"shard needs a database of its own, merged afterwards with 'sweep merge'). --inventory labels the\n"
	"hosts of the database from an inventory (see 'sweep hosts'), for reports by label.NAME.\n"
	"A sweep is its spec: when the kernel, command, timing or grid of a sweep already in the database\n"
	"changed, or a file its command runs or reads (the program found on PATH, an argument naming a file,\n"
	"inputs:; by sha256, over 64 MiB by size and mtime), the run stops (exit 2) saying what changed, a\n"
	"file with its old and new hash. Give the spec a new sweep name, or --replan:\n"
	"cells no longer in the spec are retired (kept, left out of reports) and, when the measurement\n"
	"changed, the old results are kept as superseded and every cell is measured again.\n"
	"--max-cells N: refuse a grid of more than N cells (default 10000000), before anything is made.\n"
	"--force measures again the cells that have results (those where EXPR holds, in the names of\n"
	"report --where), keeping the old results as superseded; reports use the newest.\n"
	"One run writes a database at a time: a second is refused (exit 1) naming the first.\n"
	"SIGINT, SIGTERM or SIGUSR1 stop the run without charging an attempt: cells in flight go back to\n"
	"planned and the run is recorded as interrupted (before the run began, nothing was changed); exit\n"
	"5; run the same command again to resume. So does a fault of the run's own (a full disk), and a\n"
	"worker that sends nothing for 20 s (lost: the job ends, mpirun too when it runs on rank 0's\n"
	"machine). Under mpirun, the exit status is mpirun's (1 once mpirun is signalled). A worker that\n"
	"hears nothing from the master for 30 s ends its cells' programs and exits by itself.\n"
	"--log FILE appends what each process says (stderr) to FILE: mpirun stops passing it on once it\n"
	"is signalled, so a Slurm job script gives its log there.\n"
	"--lock-clocks consents to the spec's clocks: each worker locks its GPU's clocks through NVML before\n"
	"its first cell (root or the driver's permission needed, else it stops saying so) and puts the\n"
	"driver's defaults back when it ends; a spec with clocks: is refused without it (exit 2). A worker\n"
	"killed outright leaves them locked: 'sweep hosts unlock'." };
