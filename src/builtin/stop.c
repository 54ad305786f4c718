/* stop.c: `sweep stop INVENTORY [HOST...]`: launched runs interrupted, resumable. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "../launch.h"
#include "builtin.h"

#define STOP_WAIT 60            /* seconds a host's runs get to end after SIGTERM */

static int stop_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sweep", required_argument, NULL, 'S' }, { "timeout", required_argument, NULL, 't' },
		{ "jobs", required_argument, NULL, 'j' }, { NULL, 0, NULL, 0 },
	};
	struct inventory inv;
	struct strbuf names = STRBUF_INIT;
	const char *only = NULL;
	double wait = STOP_WAIT;
	int *hosts = NULL, nhosts, opt, jobs = LAUNCH_JOBS, ret = FAIL_USAGE;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			if (!launch_name_ok(optarg))
				return exitcode_of(fail_usage("--sweep takes a sweep name, not '%s'", optarg));
			only = optarg;
			break;
		case 't':
			if (launch_parse_timeout(optarg, &wait))
				return exitcode_of(FAIL_USAGE);
			break;
		case 'j':
			if (launch_parse_jobs(optarg, &jobs))
				return exitcode_of(FAIL_USAGE);
			break;
		default:
			return cmd_usage(&cmd_stop);
		}
	}
	if (optind >= argc)
		return cmd_usage(&cmd_stop);
	/* The hosts named after the inventory, as launch_pick_hosts takes them ("a,b"). */
	for (int i = optind + 1; i < argc; i++) {
		if (!*argv[i] || strchr(argv[i], ','))
			return exitcode_of(fail_usage("'%s' is not a host name", argv[i]));
		sb_addf(&names, "%s%s", i > optind + 1 ? "," : "", argv[i]);
	}
	if (inventory_load(argv[optind], &inv)) {
		sb_release(&names);
		return exitcode_of(FAIL_USAGE);
	}
	if (!launch_pick_hosts(&inv, names.buf, &hosts, &nhosts))
		ret = launch_stop(&inv, hosts, nhosts, only, wait, jobs);
	free(hosts);
	sb_release(&names);
	inventory_release(&inv);
	return exitcode_of(ret);
}

const struct cmd cmd_stop = { "stop", stop_fn,
	"sweep stop INVENTORY [HOST...] [--sweep NAME] [--timeout SECONDS] [--jobs N]",
	"Interrupt the sweeps 'sweep launch' started on the hosts (all of the inventory's, or those named):\n"
	"SIGTERM to each running sweep's process group there, then wait up to --timeout (60 s) for them\n"
	"to end. The run records itself interrupted and charges no attempt: 'sweep launch' again resumes\n"
	"it; 'sweep pull' takes what it measured. One line per host and sweep: stopped (with its exit\n"
	"status), not running, still running, or the error.\n"
	"Exit: 0 every signalled sweep ended, 6 a host was unreachable or a sweep still runs." };
