/* run.c: `sweep run SPEC`: plan if needed, then run every cell without a result (rank 0 is the master
 * under mpirun, every other rank a worker). */
#include <getopt.h>
#include <stdio.h>
#include <unistd.h>

#include "../run.h"
#include "builtin.h"

/* Rank 0: the spec and the inventory, then the run. Bad input stops the workers before they wait. */
static int run_master(struct comm *c, const char *path, const char *db, struct master_opts *o,
		      struct run_extra *x, const char *inv_path, int argc, char **argv)
{
	struct inventory inv = { 0 };
	struct spec s;
	struct strbuf args = STRBUF_INIT;
	struct run_result res;
	int ret;

	if (spec_load(path, &s)) {
		run_release_workers(c);
		return EXIT_USAGE;
	}
	if (inv_path && inventory_load(inv_path, &inv)) {
		run_release_workers(c);
		spec_release(&s);
		return EXIT_USAGE;
	}
	x->inv = &inv;
	for (int i = 0; i < argc; i++)
		sb_addf(&args, "%s%s", i ? " " : "", argv[i]);
	if (run_spec(c, &s, db, o, x, args.buf, &res))
		ret = EXIT_FAIL;
	else
		ret = res.quarantined || res.not_run ? EXIT_CELLS : EXIT_OK;
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
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct master_opts o = { 0 };
	struct run_extra x = { 0 };
	const char *db = NULL, *inv = NULL;
	struct comm *c;
	int opt, ret;

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
				return error("--progress takes a positive number of seconds, not '%s'", optarg),
				       EXIT_USAGE;
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
				return error("--shard takes I/K with 0 <= I < K, not '%s'", optarg), EXIT_USAGE;
			x.shard = (unsigned)i;
			x.nshards = (unsigned)k;
			break;
		}
		case 'i':
			inv = optarg;
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
	if (comm_init(&argc, &argv, &c))
		return EXIT_FAIL;
	ret = comm_rank(c) == 0 ? run_master(c, argv[optind], db, &o, &x, inv, argc, argv)
				: (run_worker(c), EXIT_OK);
	comm_finish(c);
	return ret;
}

const struct cmd cmd_run = { "run", run_fn,
	"sweep run SPEC [--db PATH] [--no-local-worker] [--progress[=SECONDS]] [--quiet]\n"
	"                 [--shard I/K] [--inventory hosts/FILE.yaml]",
	"Plan if needed, then run every cell without a successful result. Under mpirun, rank 0 is the\n"
	"master (and runs a worker thread unless --no-local-worker) and every other rank a worker.\n"
	"Progress goes to stderr: done/total, rate, ETA, failed attempts, each host's rate and the cell\n"
	"running longest; rewritten in place on a terminal, else a line every 30 s (every SECONDS with\n"
	"--progress). --quiet prints errors only (no progress, no closing lines).\n"
	"Exit: 0 every cell ok, 3 some cells failed or were not run, 2 bad input, 1 other errors.\n"
	"Running the same command again resumes where a killed run stopped.\n"
	"--shard I/K plans and runs only the cells whose key falls in shard I of K (for array jobs; each\n"
	"shard needs a database of its own, merged afterwards with 'sweep merge'). --inventory labels the\n"
	"hosts of the database from an inventory (see 'sweep hosts'), for reports by label.NAME." };
