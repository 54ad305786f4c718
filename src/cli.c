/* cli.c: the table of subcommands (src/builtin/), --help and --version, and the dispatch. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "builtin/builtin.h"
#include "store.h"
#include "util.h"
#include "version.h"

static int version_fn(int argc, char **argv);
static int help_fn(int argc, char **argv);

static const struct cmd cmd_version = { "version", version_fn, "sweep version", "Print the version." };
static const struct cmd cmd_help = { "help", help_fn, "sweep help [COMMAND]",
				     "Show the commands, or one command's help." };

static const struct cmd *const commands[] = {
	&cmd_plan, &cmd_run, &cmd_retry, &cmd_status, &cmd_sql, &cmd_report, &cmd_compare, &cmd_predict, &cmd_plot,
	&cmd_hosts, &cmd_merge, &cmd_submit, &cmd_launch, &cmd_stop, &cmd_pull, &cmd_snapshot, &cmd_kernels,
	&cmd_version, &cmd_help, &cmd_executor, &cmd_counters_pass,
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i]->name, name))
			return commands[i];
	return NULL;
}

static void print_help(FILE *f, const struct cmd *c)
{
	fprintf(f, "usage: %s\n\n%s\n", c->usage, c->help);
}

static void overview(FILE *f)
{
	fprintf(f, "usage: sweep COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (commands[i]->name[0] != '_')   /* __executor, __counters: the program's own, not a user's */
			fprintf(f, "  %-10s %s\n", commands[i]->name, commands[i]->usage);
	fprintf(f, "\n'sweep COMMAND --help' shows one command's help.\n");
}

int cli_main(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		overview(stderr);
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h")) {
		overview(stdout);
		return EXIT_OK;
	}
	if (!strcmp(argv[1], "--version"))
		return version_fn(argc - 1, argv + 1);
	c = find_cmd(argv[1]);
	if (!c) {
		const char *names[ARRAY_SIZE(commands) + 1];
		const char *near;

		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			names[i] = commands[i]->name[0] != '_' ? commands[i]->name : "";
		names[ARRAY_SIZE(commands)] = NULL;
		near = closest_name(argv[1], names);
		if (near)
			error("unknown command '%s' (did you mean '%s'?)", argv[1], near);
		else
			error("unknown command '%s'", argv[1]);
		overview(stderr);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			print_help(stdout, c);
			return EXIT_OK;
		}
	}
	optind = 1;
	return c->fn(argc - 1, argv + 1);
}

static int version_fn(int argc, char **argv)
{
	const char *commit = version_commit();

	printf("sweep %s%s%s (schema %d)\n", version_string(), commit ? " commit " : "", commit ? commit : "",
	       store_schema_version());
	return EXIT_OK;
}

static int help_fn(int argc, char **argv)
{
	const struct cmd *c;

	if (argc < 2) {
		overview(stdout);
		return EXIT_OK;
	}
	c = find_cmd(argv[1]);
	if (!c)
		return error("unknown command '%s'", argv[1]), EXIT_USAGE;
	print_help(stdout, c);
	return EXIT_OK;
}
