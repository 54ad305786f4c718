/* cli.c: the subcommand table, usage texts, and the small subcommands (status, sql, kernels). */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/kernel.h"
#include "store.h"
#include "table.h"
#include "util.h"

#define SWEEP_VERSION "0.1.0"

static int cmd_status(int argc, char **argv);
static int cmd_sql(int argc, char **argv);
static int cmd_kernels(int argc, char **argv);
static int cmd_version(int argc, char **argv);
static int cmd_help(int argc, char **argv);

struct cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *usage;
	const char *help;
};

static const struct cmd commands[] = {
	{ "plan", cmd_plan, "sweep plan SPEC [--db PATH]",
	  "Expand the spec's grid into cells and store them (results/NAME.db by default). Planning the same\n"
	  "spec again changes nothing; prints how many cells are new and how many were already there." },
	{ "run", cmd_run, "sweep run SPEC [--db PATH] [--no-local-worker] [--progress[=SECONDS]] [--quiet]",
	  "Plan if needed, then run every cell without a successful result. Under mpirun, rank 0 is the\n"
	  "master (and runs a worker thread unless --no-local-worker) and every other rank a worker.\n"
	  "Progress goes to stderr (on a terminal, or every SECONDS with --progress).\n"
	  "Exit: 0 every cell ok, 3 some cells failed or were not run, 2 bad input, 1 other errors.\n"
	  "Running the same command again resumes where a killed run stopped." },
	{ "status", cmd_status, "sweep status DB",
	  "Cells by state for each sweep, progress per host and worker of the latest run, and the failures\n"
	  "with their last error. Safe to run while a run writes the database." },
	{ "sql", cmd_sql, "sweep sql DB QUERY [--csv | --json | --md]",
	  "Run one read-only SQL query and print the rows as an aligned table. The functions median(x),\n"
	  "quantile(x, q), geomean(x), stdev(x) and ratio_ci(a, b [, ci, boot, seed]) are available." },
	{ "kernels", cmd_kernels, "sweep kernels",
	  "List every kernel built into this binary with its parameters, types, defaults and documentation." },
	{ "version", cmd_version, "sweep version", "Print the version." },
	{ "help", cmd_help, "sweep help [COMMAND]", "Show the commands, or one command's help." },
};

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

static void print_help(FILE *f, const struct cmd *c)
{
	fprintf(f, "usage: %s\n\n%s\n", c->usage, c->help);
}

int cli_usage(const char *name)
{
	const struct cmd *c = find_cmd(name);

	if (!c)
		BUG("no command '%s'", name);
	fprintf(stderr, "usage: %s\n(see 'sweep %s --help')\n", c->usage, name);
	return EXIT_USAGE;
}

static void overview(FILE *f)
{
	fprintf(f, "usage: sweep COMMAND [ARGS]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].usage);
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
		return cmd_version(argc - 1, argv + 1);
	c = find_cmd(argv[1]);
	if (!c) {
		const char *names[ARRAY_SIZE(commands) + 1];
		const char *near;

		for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
			names[i] = commands[i].name;
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

static int cmd_version(int argc, char **argv)
{
	printf("sweep %s (schema %d)\n", SWEEP_VERSION, store_schema_version());
	return EXIT_OK;
}

static int cmd_help(int argc, char **argv)
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

static int cmd_kernels(int argc, char **argv)
{
	static const char *const types[] = { "int", "float", "str", "bytes" };

	if (argc != 1)
		return cli_usage("kernels");
	for (int i = 0; kernel_registry[i]; i++) {
		const struct kernel_ops *k = kernel_registry[i];

		printf("%s%s: %s\n", i ? "\n" : "", k->name, k->doc);
		if (k->gpus > 1)
			printf("  (uses %d GPUs per cell)\n", k->gpus);
		for (const struct param_def *p = k->params; p && p->name; p++) {
			char type[96];

			snprintf(type, sizeof(type), "%s%s%s", types[p->type], p->choices ? " " : "",
				 p->choices ? p->choices : "");
			printf("  %-10s %-16s %-12s %s\n", p->name, type, p->def ? p->def : "(required)", p->doc);
		}
	}
	return EXIT_OK;
}

/* Collects query rows into a table. */
struct collect {
	struct table t;
	int started;
};

static int collect_row(const struct store_row *row, void *data)
{
	struct collect *c = data;

	if (!c->started) {
		table_init(&c->t, row->ncol, row->names);
		c->started = 1;
	}
	table_add(&c->t, row->text);
	return 0;
}

/* Run sql and print its rows in fmt under an optional title; prints nothing for no rows when quiet_empty. */
static int print_query(struct store *st, const char *title, const char *sql, const char *const *binds,
		       int nbind, enum table_format fmt, int quiet_empty)
{
	struct collect c = { .started = 0 };

	if (store_query(st, sql, binds, nbind, 1, collect_row, &c))
		return -1;
	if (!c.started) {
		if (!quiet_empty)
			printf("%s(no rows)\n", title ? title : "");
		return 0;
	}
	if (title)
		printf("%s", title);
	table_print(&c.t, stdout, fmt);
	table_release(&c.t);
	return 0;
}

static int cmd_sql(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "csv", no_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
		{ "md", no_argument, NULL, 'm' }, { NULL, 0, NULL, 0 },
	};
	enum table_format fmt = TABLE_TEXT;
	struct store *st;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'c')
			fmt = TABLE_CSV;
		else if (opt == 'j')
			fmt = TABLE_JSON;
		else if (opt == 'm')
			fmt = TABLE_MD;
		else
			return cli_usage("sql");
	}
	if (optind != argc - 2)
		return cli_usage("sql");
	if (store_open(argv[optind], STORE_RO, &st))
		return EXIT_USAGE;
	ret = print_query(st, NULL, argv[optind + 1], NULL, 0, fmt, 0) ? EXIT_USAGE : EXIT_OK;
	store_close(st);
	return ret;
}

static int cmd_status(int argc, char **argv)
{
	struct store *st;
	int ret = EXIT_OK;

	if (argc != 2)
		return cli_usage("status");
	if (store_open(argv[1], STORE_RO, &st))
		return EXIT_USAGE;
	if (print_query(st, "cells by state:\n",
			"SELECT sweep, count(*) AS cells,"
			" count(*) FILTER (WHERE state = 'ok') AS ok,"
			" count(*) FILTER (WHERE state = 'planned') AS planned,"
			" count(*) FILTER (WHERE state = 'running') AS running,"
			" count(*) FILTER (WHERE state = 'quarantined') AS quarantined,"
			" printf('%.1f%%', 100.0 * count(*) FILTER (WHERE state = 'ok') / count(*)) AS done"
			" FROM cells WHERE state != 'template' GROUP BY sweep ORDER BY sweep", NULL, 0, TABLE_TEXT, 0) ||
	    print_query(st, "\nlatest run:\n",
			"SELECT id AS run, sweep, started, coalesce(finished, '-') AS finished, status"
			" FROM runs ORDER BY id DESC LIMIT 1", NULL, 0, TABLE_TEXT, 1) ||
	    print_query(st, "\nworkers of the latest run:\n",
			"SELECT h.hostname AS host, w.rank, coalesce(w.gpu, -1) AS gpu, count(r.id) AS results,"
			" count(r.id) FILTER (WHERE r.status = 'ok') AS ok,"
			" count(r.id) FILTER (WHERE r.status != 'ok') AS failed,"
			" printf('%.2f', CASE WHEN max(julianday(r.started)) > min(julianday(r.started))"
			"  THEN (count(r.id) - 1) / ((max(julianday(r.started)) - min(julianday(r.started))) * 86400)"
			"  END) AS cells_per_s,"
			" coalesce(max(r.started), '-') AS last_result"
			" FROM workers w JOIN hosts h ON h.id = w.host"
			" LEFT JOIN results r ON r.worker = w.id"
			" WHERE w.run = (SELECT max(id) FROM runs)"
			" GROUP BY w.id ORDER BY h.hostname, w.rank", NULL, 0, TABLE_TEXT, 1) ||
	    print_query(st, "\nfailures (cells not ok with an error):\n",
			"SELECT sweep, key, params, state, attempts, error FROM cells"
			" WHERE error IS NOT NULL AND state != 'ok' ORDER BY sweep, ord LIMIT 50",
			NULL, 0, TABLE_TEXT, 1))
		ret = EXIT_FAIL;
	store_close(st);
	return ret;
}
