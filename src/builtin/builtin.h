/* builtin.h: the subcommands, one file each in src/builtin/: option parsing, usage and the call into the
 * domain. Only src/cli.c and these files include it; the domain below never reaches up to it. */
#ifndef SWEEP_BUILTIN_H
#define SWEEP_BUILTIN_H

#include "../exitcode.h"

/* A subcommand. fn gets argv[0] = its name and returns the exit code; --help is answered before it runs. */
struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;     /* one or more lines after "usage: " */
	const char *help;      /* what it does, options, exit codes */
};

/* Print "usage: ..." and a pointer to --help on stderr; returns EXIT_USAGE. */
int cmd_usage(const struct cmd *c);
/* What an option parser may return besides an enum fail: the command line is malformed, print the usage.
 * Never a kind of failure the domain returns. */
enum { SHOW_USAGE = 1 };

extern const struct cmd cmd_plan, cmd_run, cmd_status, cmd_sql, cmd_report, cmd_predict, cmd_plot, cmd_hosts,
	cmd_merge, cmd_submit, cmd_launch, cmd_stop, cmd_pull, cmd_snapshot, cmd_kernels, cmd_executor,
	cmd_counters_pass, cmd_retry,
	cmd_compare;

#endif
