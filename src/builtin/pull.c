/* pull.c: `sweep pull INVENTORY`: every launched sweep's database copied back and merged. */
#include <getopt.h>
#include <stdlib.h>

#include "../launch.h"
#include "builtin.h"

static int pull_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "into", required_argument, NULL, 'i' }, { "sweep", required_argument, NULL, 'S' },
		{ "hosts", required_argument, NULL, 'H' }, { "timeout", required_argument, NULL, 't' },
		{ "jobs", required_argument, NULL, 'j' }, { NULL, 0, NULL, 0 },
	};
	struct inventory inv;
	const char *into = NULL, *names = NULL, *only = NULL;
	double timeout = PULL_TIMEOUT;
	int *hosts = NULL, nhosts, opt, jobs = LAUNCH_JOBS, ret = FAIL_USAGE;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'i':
			into = optarg;
			break;
		case 'S':
			if (!launch_name_ok(optarg))
				return exitcode_of(fail_usage("--sweep takes a sweep name, not '%s'", optarg));
			only = optarg;
			break;
		case 'H':
			names = optarg;
			break;
		case 't':
			if (launch_parse_timeout(optarg, &timeout))
				return exitcode_of(FAIL_USAGE);
			break;
		case 'j':
			if (launch_parse_jobs(optarg, &jobs))
				return exitcode_of(FAIL_USAGE);
			break;
		default:
			return cmd_usage(&cmd_pull);
		}
	}
	if (optind != argc - 1)
		return cmd_usage(&cmd_pull);
	if (inventory_load(argv[optind], &inv))
		return exitcode_of(FAIL_USAGE);
	if (!launch_pick_hosts(&inv, names, &hosts, &nhosts))
		ret = launch_pull(&inv, hosts, nhosts, only, into, timeout, jobs);
	free(hosts);
	inventory_release(&inv);
	return exitcode_of(ret);
}

const struct cmd cmd_pull = { "pull", pull_fn,
	"sweep pull INVENTORY [--into DB] [--sweep NAME] [--hosts NAME,...]\n"
	"                  [--timeout SECONDS] [--jobs N]",
	"Take a consistent snapshot of each launched sweep's database on every host (while the run may go\n"
	"on writing it), copy it back (scp) into pulled/HOST/ beside the output, and merge it (checked\n"
	"as 'sweep merge' checks an untrusted input) into --into (default results/NAME.db, one database\n"
	"per sweep: --into takes one sweep, so where the hosts hold several it needs --sweep NAME); the\n"
	"inventory's labels go into the hosts' facts. Pulling again adds only what is new. A snapshot\n"
	"left on a host by a pull cut short is removed there once the pull's --timeout is over. A host\n"
	"that cannot be reached is reported and the others are still pulled. Exit 6 when some host was\n"
	"unreachable or not pulled, 2 when --into would take several sweeps." };
