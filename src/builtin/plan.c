/* plan.c: `sweep plan SPEC`: the grid's cells into the database, nothing run. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../plan_db.h"
#include "builtin.h"

static int plan_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' }, { "replan", no_argument, NULL, 'R' },
		{ "max-cells", required_argument, NULL, 'M' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct plan_db_opts o = { 0, 0, 0, 0, NULL };
	const char *db = NULL, *path;
	struct spec s;
	struct store *st = NULL;
	uint64_t added, existing;
	int opt, ret, made, locked;
	double v;

	while ((opt = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		if (opt == 'd')
			db = optarg;
		else if (opt == 'R')
			o.replan = 1;
		else if (opt == 'M' && !parse_double(optarg, &v) && v >= 1 && v <= 1e18 && v == (double)(uint64_t)v)
			o.max_cells = (uint64_t)v;
		else if (opt == 'M')
			return exitcode_of(fail_usage("--max-cells takes a positive whole number, not '%s'", optarg));
		else
			return opt == 'h' ? (cmd_usage(&cmd_plan), EXIT_OK) : cmd_usage(&cmd_plan);
	}
	if (optind != argc - 1)
		return cmd_usage(&cmd_plan);
	if (spec_load(argv[optind], &s))
		return exitcode_of(FAIL_USAGE);
	path = db ? db : s.db;
	if (plan_db_size(&s, o.max_cells)) {   /* too many cells: the user's to change */
		spec_release(&s);
		return exitcode_of(FAIL_USAGE);
	}
	made = access(path, F_OK) != 0;
	/* Only the holder of the lock removes a database it made: another plan may be making it too. */
	ret = mkdir_parent(path) ? FAIL_IO : store_open(path, STORE_RW, &st);
	if (!ret)
		ret = store_lock(st, "sweep plan");   /* FAIL_BUSY while a run writes it */
	locked = !ret;
	if (locked)
		ret = plan_db_with(&s, st, &o, &added, &existing);
	if (!ret)
		printf("%s: %llu cells planned in %s: %llu new, %llu already there%s\n", s.name,
		       (unsigned long long)(added + existing), path, (unsigned long long)added,
		       (unsigned long long)existing,
		       s.per == PER_ANY ? "" : s.per == PER_HOST ? " (each run once per host)"
							 : " (each run once per GPU)");
	store_close(st);
	if (ret && made && locked)
		store_remove_files(path);
	spec_release(&s);
	return exitcode_of(ret);
}

const struct cmd cmd_plan = { "plan", plan_fn, "sweep plan SPEC [--db PATH] [--replan] [--max-cells N]",
	"Expand the spec's grid into cells and store them (results/NAME.db by default). Planning the same\n"
	"spec again changes nothing; prints how many cells are new and how many were already there.\n"
	"A sweep already planned from a spec with another kernel, command, timing or grid is refused\n"
	"(exit 2, saying what changed) unless --replan (see 'sweep run --help'). --max-cells N: refuse a\n"
	"grid of more than N cells (default 10000000). A database being written by a run is refused (exit 1)." };
