/* launch.c: `sweep launch INVENTORY SPEC`: start the sweep on every host of the inventory over ssh. */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>

#include "../clocks.h"
#include "../launch.h"
#include "builtin.h"

static int launch_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sync", no_argument, NULL, 's' }, { "hosts", required_argument, NULL, 'H' },
		{ "timeout", required_argument, NULL, 't' }, { "min-free", required_argument, NULL, 'm' },
		{ "jobs", required_argument, NULL, 'j' }, { "build", no_argument, NULL, 'b' },
		{ "make", required_argument, NULL, 'M' }, { "lock-clocks", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	struct launch_opts o = { .timeout = LAUNCH_TIMEOUT, .jobs = LAUNCH_JOBS };
	struct inventory inv = { 0 };
	struct strbuf make = STRBUF_INIT;
	struct spec s;
	const char *names = NULL, *min_free = LAUNCH_MIN_FREE;
	char *spec_rel = NULL;
	int *hosts = NULL, nhosts = 0, opt, ret = FAIL_USAGE, loaded = 0;
	double bytes;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			o.sync = 1;
			break;
		case 'b':
			o.build = 1;
			break;
		case 'L':
			o.lock_clocks = 1;
			break;
		case 'M':
			if (launch_make_arg_ok(optarg)) {
				sb_release(&make);
				return exitcode_of(FAIL_USAGE);
			}
			sb_addf(&make, "%s%s", make.len ? " " : "", optarg);
			break;
		case 'H':
			names = optarg;
			break;
		case 't':
			if (launch_parse_timeout(optarg, &o.timeout))
				return exitcode_of(FAIL_USAGE);
			break;
		case 'm':
			min_free = optarg;
			break;
		case 'j':
			if (launch_parse_jobs(optarg, &o.jobs))
				return exitcode_of(FAIL_USAGE);
			break;
		default:
			return cmd_usage(&cmd_launch);
		}
	}
	o.make_args = make.buf;
	if (optind != argc - 2) {
		sb_release(&make);
		return cmd_usage(&cmd_launch);
	}
	if (parse_bytes(min_free, &bytes) || bytes < 0 || bytes > 1e18) {
		sb_release(&make);
		return exitcode_of(fail_usage("--min-free takes a size (e.g. 10G), not '%s'", min_free));
	}
	o.min_free_kib = (long)ceil(bytes / 1024);
	if (inventory_load(argv[optind], &inv)) {
		sb_release(&make);
		return exitcode_of(FAIL_USAGE);
	}
	if (launch_pick_hosts(&inv, names, &hosts, &nhosts))
		goto out;
	if (spec_load(argv[optind + 1], &s))
		goto out;
	loaded = 1;
	if ((ret = clocks_consent(&s, argv[optind + 1], o.lock_clocks)))
		goto out;
	ret = FAIL_USAGE;
	if (!launch_name_ok(s.name)) {
		error("sweep name '%s': its files on the hosts would be hidden or taken for options", s.name);
		goto out;
	}
	if (!(spec_rel = launch_spec_place(argv[optind + 1]))) {
		error("'%s': no place for it on the hosts (use a name of letters, digits and ._+@,=-)",
		      argv[optind + 1]);
		goto out;
	}
	ret = launch_run(&inv, hosts, nhosts, &s, argv[optind + 1], spec_rel, &o);
out:
	free(spec_rel);
	free(hosts);
	if (loaded)
		spec_release(&s);
	inventory_release(&inv);
	sb_release(&make);
	return exitcode_of(ret);
}

const struct cmd cmd_launch = { "launch", launch_fn,
	"sweep launch INVENTORY SPEC [--sync | --build] [--make NAME=VALUE]... [--hosts NAME,...]\n"
	"                    [--min-free SIZE] [--timeout SECONDS] [--jobs N] [--lock-clocks]",
	"Start 'sweep run SPEC' on every host of the inventory over ssh (user, port, identity, ssh_options\n"
	"from the inventory; your own ssh config and keys), in the host's workdir, detached so that it\n"
	"outlives the ssh session, writing results/NAME.db and results/NAME.log there (under mpirun -np\n"
	"SLOTS on a host with more than one slot). One line per host: started, already running, or the\n"
	"error (unreachable, no sweep binary, no spec, disk full under --min-free, 1G by default).\n"
	"--sync first copies this sweep binary (to the host's sweep_bin), the spec and the files its\n"
	"command names; where the copy cannot run (a library missing there, as its loader says), sweep is\n"
	"built there instead, as --build does. --build copies the spec and its files and the source of\n"
	"this binary's commit (git archive of its checkout), and builds it on the host (make deps-run:\n"
	"only the packages building and running need; then make build/sweep), once a commit and set of\n"
	"--make variables (the line says built or reused), within 1800 s; its output goes to\n"
	"results/build-COMMIT[-HASH].log there; --make passes NAME=VALUE to make (CUDA=0, CUDA_ARCH=...).\n"
	"The launch learns each host's hostname over ssh (recorded in results/NAME.host; pull labels the\n"
	"host by it) and refuses a host whose hostname is not the one the inventory gives. Hosts are\n"
	"handled at once, each within --timeout (120 s). 'sweep stop' interrupts what launch started.\n"
	"--lock-clocks consents to the spec's clocks: (sweep run --lock-clocks on each host); a spec with\n"
	"clocks: is refused without it.\n"
	"Exit: 0 every host started or running, 6 some host was unreachable or did not start (its line\n"
	"says which; the others were started)." };
