/* cli.h: the subcommands. Each returns the process's exit code; only cli.c and main.c exit. */
#ifndef SWEEP_CLI_H
#define SWEEP_CLI_H

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

/* Print "usage: ..." for the current subcommand; returns EXIT_USAGE. */
int cli_usage(const char *cmd);

#endif
