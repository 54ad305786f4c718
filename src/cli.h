/* cli.h: the entry point under main(): finds the subcommand (src/builtin/) and returns its exit code. */
#ifndef SWEEP_CLI_H
#define SWEEP_CLI_H

int cli_main(int argc, char **argv);

#endif
