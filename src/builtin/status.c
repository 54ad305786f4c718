/* status.c: `sweep status DB [--json]` and `sweep status --hosts INVENTORY`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../launch.h"
#include "../status.h"
#include "builtin.h"

static int status_db(const char *db, int json, const char *sweep)
{
	struct strbuf sb = STRBUF_INIT;
	struct store *st;
	int rc;

	if ((rc = store_open(db, STORE_RO, &st)))   /* no such file, not a sweep database, damaged */
		return rc;
	rc = json ? status_json(st, sweep, &sb) : status_print(st);
	if (!rc && json)
		printf("%s\n", sb.buf ? sb.buf : "{}");
	sb_release(&sb);
	store_close(st);
	return rc;
}

static int status_hosts(const char *path, const char *names, const char *only, double timeout)
{
	struct inventory inv;
	int *hosts = NULL, nhosts, ret = FAIL_USAGE;

	if (inventory_load(path, &inv))
		return FAIL_USAGE;
	if (!launch_pick_hosts(&inv, names, &hosts, &nhosts))
		ret = launch_status_hosts(&inv, hosts, nhosts, only, timeout, LAUNCH_JOBS);
	free(hosts);
	inventory_release(&inv);
	return ret;
}

static int status_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "hosts", required_argument, NULL, 'H' }, { "json", no_argument, NULL, 'J' },
		{ "sweep", required_argument, NULL, 'S' }, { "timeout", required_argument, NULL, 't' },
		{ "only", required_argument, NULL, 'o' }, { NULL, 0, NULL, 0 },
	};
	const char *inv = NULL, *only = NULL, *names = NULL;
	double timeout = LAUNCH_TIMEOUT;
	int opt, json = 0, hostopts = 0;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'H':
			inv = optarg;
			break;
		case 'J':
			json = 1;
			break;
		case 'S':
			if (!launch_name_ok(optarg))
				return exitcode_of(fail_usage("--sweep takes a sweep name, not '%s'", optarg));
			only = optarg;
			break;
		case 'o':
			names = optarg;
			hostopts = 1;
			break;
		case 't':
			if (launch_parse_timeout(optarg, &timeout))
				return exitcode_of(FAIL_USAGE);
			hostopts = 1;
			break;
		default:
			return cmd_usage(&cmd_status);
		}
	}
	/* --sweep with a database: the totals of that sweep (what --hosts asks each host for). */
	if (!inv && !hostopts && (json || !only) && optind == argc - 1)
		return exitcode_of(status_db(argv[optind], json, only));
	if (inv && !json && optind == argc)
		return exitcode_of(status_hosts(inv, names, only, timeout));
	return cmd_usage(&cmd_status);
}

const struct cmd cmd_status = { "status", status_fn,
	"sweep status DB [--json [--sweep NAME]] | sweep status --hosts INVENTORY [--sweep NAME]\n"
	"                    [--only HOST,...] [--timeout SECONDS]",
	"Cells by state for each sweep, progress per host and worker of the latest run, and the failures\n"
	"with their last error. Safe to run while a run writes the database. When 'sweep submit' sent jobs\n"
	"for the database, their states as Slurm reports them now. --json: one line of totals of the\n"
	"sweep NAME (or of every sweep but probe runs), what --hosts reads on each host.\n"
	"--hosts: the sweeps 'sweep launch' started on the hosts of the inventory, read over ssh, in one\n"
	"table: state (running, finished, failed, stopped, unreachable), done/total cells, rate, ETA,\n"
	"failed attempts and the time of the latest result. Exit 6 when a host was unreachable or could not\n"
	"be read. A DB that is missing or no sweep database exits 2, as in every command that reads one." };
