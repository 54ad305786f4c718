/* plan.c: `sweep plan SPEC`: the grid's cells into the database, nothing run. */
#include <getopt.h>
#include <stdio.h>

#include "../plan_db.h"
#include "builtin.h"

static int plan_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "db", required_argument, NULL, 'd' }, { "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *db = NULL;
	struct spec s;
	struct store *st = NULL;
	uint64_t added, existing;
	int opt, ret = EXIT_FAIL;

	while ((opt = getopt_long(argc, argv, "d:h", opts, NULL)) != -1) {
		if (opt == 'd')
			db = optarg;
		else
			return opt == 'h' ? (cmd_usage(&cmd_plan), EXIT_OK) : cmd_usage(&cmd_plan);
	}
	if (optind != argc - 1)
		return cmd_usage(&cmd_plan);
	if (spec_load(argv[optind], &s))
		return EXIT_USAGE;
	if (!mkdir_parent(db ? db : s.db) && !store_open(db ? db : s.db, STORE_RW, &st) &&
	    !plan_db(&s, st, 0, 0, &added, &existing)) {
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

const struct cmd cmd_plan = { "plan", plan_fn, "sweep plan SPEC [--db PATH]",
	"Expand the spec's grid into cells and store them (results/NAME.db by default). Planning the same\n"
	"spec again changes nothing; prints how many cells are new and how many were already there." };
