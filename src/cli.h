/* cli.h: the subcommands. Each returns the process's exit code; only cli.c and main.c exit. */
#ifndef SWEEP_CLI_H
#define SWEEP_CLI_H

#include <stdint.h>

/* Exit codes scripts can trust. */
enum {
	EXIT_OK = 0,           /* everything asked for was done (every cell ok) */
	EXIT_FAIL = 1,         /* an error: the message says what */
	EXIT_USAGE = 2,        /* bad input: command line, spec, file; nothing was written */
	EXIT_CELLS = 3         /* ran, but some cells failed, were quarantined or wait for absent hosts */
};

int cli_main(int argc, char **argv);

/* Subcommands implemented outside cli.c. */
int cmd_plan(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_report(int argc, char **argv);     /* report.c */
int cmd_predict(int argc, char **argv);    /* report_predict.c */
int cmd_plot(int argc, char **argv);       /* report_plot.c */
int cmd_hosts(int argc, char **argv);      /* inventory.c */
int cmd_probe(int argc, char **argv);      /* probe.c: sweep hosts probe */
int cmd_merge(int argc, char **argv);      /* store_merge.c */
int cmd_submit(int argc, char **argv);     /* slurm.c */
int cmd_launch(int argc, char **argv);     /* launch.c */
int cmd_pull(int argc, char **argv);       /* launch.c */
int cmd_snapshot(int argc, char **argv);   /* launch.c */
/* launch.c: `sweep status --hosts INVENTORY` (over ssh) and `sweep status DB --json` (what it reads). */
int cmd_status_remote(int argc, char **argv);

/* run.c: store the spec and every cell of its grid in st (one transaction); counts of new and existing
 * cells. For `sweep submit`, which plans before it hands the run to Slurm. */

/* Print "usage: ..." for the current subcommand; returns EXIT_USAGE. */
int cli_usage(const char *cmd);

#endif
