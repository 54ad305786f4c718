/* cli.c: the subcommand table, usage texts, and the small subcommands (status, sql, kernels). */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../kernels/kernel.h"
#include "slurm.h"
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
	{ "run", cmd_run, "sweep run SPEC [--db PATH] [--no-local-worker] [--progress[=SECONDS]] [--quiet]\n"
	  "                 [--shard I/K] [--inventory hosts/FILE.yaml]",
	  "Plan if needed, then run every cell without a successful result. Under mpirun, rank 0 is the\n"
	  "master (and runs a worker thread unless --no-local-worker) and every other rank a worker.\n"
	  "Progress goes to stderr (on a terminal, or every SECONDS with --progress).\n"
	  "Exit: 0 every cell ok, 3 some cells failed or were not run, 2 bad input, 1 other errors.\n"
	  "Running the same command again resumes where a killed run stopped.\n"
	  "--shard I/K plans and runs only the cells whose key falls in shard I of K (for array jobs; each\n"
	  "shard needs a database of its own, merged afterwards with 'sweep merge'). --inventory labels the\n"
	  "hosts of the database from an inventory (see 'sweep hosts'), for reports by label.NAME." },
	{ "status", cmd_status, "sweep status DB [--json] | sweep status --hosts INVENTORY [--sweep NAME]\n"
	  "                    [--only HOST,...] [--timeout SECONDS]",
	  "Cells by state for each sweep, progress per host and worker of the latest run, and the failures\n"
	  "with their last error. Safe to run while a run writes the database. When 'sweep submit' sent jobs\n"
	  "for the database, their states as Slurm reports them now. --json: one line of totals (what\n"
	  "--hosts reads on each host).\n"
	  "--hosts: the sweeps 'sweep launch' started on the hosts of the inventory, read over ssh, in one\n"
	  "table: state (running, finished, failed, stopped, unreachable), done/total cells, rate, ETA,\n"
	  "failed attempts and the time of the latest result. Exit 3 when a host could not be read." },
	{ "sql", cmd_sql, "sweep sql DB QUERY [--csv | --json | --md]",
	  "Run one read-only SQL query and print the rows as an aligned table. The functions median(x),\n"
	  "quantile(x, q), geomean(x), stdev(x) and ratio_ci(a, b [, ci, boot, seed]) are available." },
	{ "report", cmd_report, "sweep report DB --rows KEYS [--cols KEYS] --metric NAME [--compare KEY=A/B |\n"
	  "                  --limit EXPR | --drift | --score] [OPTIONS]",
	  "Tables of the ok results of one sweep (the only one with results unless --sweep). A key is a\n"
	  "parameter, host, gpu, pass, replica or label.NAME (an inventory label of the host). Each row (and\n"
	  "column) aggregates every result of its cells, all passes, with --stat (default median); --cols\n"
	  "pivots. Metrics are those the results stored (seconds, gflops, gbs, a command's own); tflops, tbs,\n"
	  "ms and us are derived. --where EXPR filters with names, numbers, 'text', arithmetic, comparisons,\n"
	  "AND/OR/NOT, IN, BETWEEN, LIKE and CASE (e.g. \"M >= 1024 AND dtype = 'f32'\"). Markdown by default.\n"
	  "\n"
	  "--compare KEY=A/B: per row, the items of arm A and arm B (averaged over passes) are paired by name\n"
	  "(or by a parameter with --paired-by KEY); the ratio is mean(A)/mean(B) over paired items with a\n"
	  "percentile bootstrap interval resampling items (same indices for both arms). CSV columns:\n"
	  "<rows>,n,<metric>_A,<metric>_B,ratio,ci_lo,ci_hi. Items without a partner are named on stderr.\n"
	  "--limit EXPR: a limit per result from its parameters, metrics and its host's probes (e.g.\n"
	  "\"host_read_gbs * 1e9 / bytes_per_token\"), with the share metric/limit. --summary adds the median\n"
	  "and range of every column, per value of KEY (e.g. --summary=label.class).\n"
	  "--drift: each worker's control cell over time as a ratio to its first run; a host is unstable when\n"
	  "the drift or the control's noise passes --threshold (3 %); --exclude-unstable leaves those out.\n"
	  "--score: rms and mean signed error, 100 (measured - predicted) / predicted, of the predictions\n"
	  "registered with 'sweep predict', blind and late apart, and whether the rms met --bar PCT.\n"
	  "\n"
	  "options: --sweep NAME, --stat median|mean|geomean|min|max, --where EXPR, --digits N,\n"
	  "  --format md|text|csv|latex|json, --out FILE, --summary[=KEY], --exclude-unstable,\n"
	  "  --threshold PCT (3), --paired-by item|KEY, --ci PCT (95), --boot N (10000), --seed S (1),\n"
	  "  --bar PCT. Notes (unpaired items, excluded hosts, missing probes) go to stderr." },
	{ "predict", cmd_predict, "sweep predict DB FILE.csv [--late] [--sweep NAME]",
	  "Register predictions before the run. FILE.csv has a header with metric and value, and either a\n"
	  "key column (cell keys) or parameter columns (e.g. sweep,M,N,K,dtype,metric,value: every cell with\n"
	  "those values, all passes, is predicted). The file's sha256 and the time are stored. A prediction\n"
	  "for a cell that already has a result is refused (nothing is registered) unless --late, which\n"
	  "marks those predictions as not blind. Registering the same file again adds nothing; a different\n"
	  "value for a predicted cell and metric is refused. Score them with 'sweep report DB --score'." },
	{ "plot", cmd_plot, "sweep plot DB --x KEY --y METRIC [--series KEY] [--facet KEY] [--logx] [--logy]\n"
	  "                --out FILE.png|svg|pdf [OPTIONS]",
	  "Plot a metric (aggregated over passes with --stat) against a key, one line per --series value\n"
	  "and one panel per --facet value, through gnuplot. FILE.dat and FILE.gp are written beside the\n"
	  "picture; without gnuplot they are all that is written, and the command says how to render them.\n"
	  "options: --sweep NAME, --where EXPR, --stat S, --title T, --xlabel L, --ylabel L (the defaults\n"
	  "name the key and the metric with its unit)." },
	{ "hosts", cmd_hosts, "sweep hosts hostfile|list|label|probe ...",
	  "A host inventory (hosts/*.yaml: name, hostname, address, slots, labels, notes; see\n"
	  "hosts/example.yaml) at work.\n"
	  "  sweep hosts hostfile FILE.yaml [--out PATH] [--label NAME=VALUE ...]: an Open MPI hostfile\n"
	  "    (\"ADDRESS slots=N\" per host), of the hosts with every label given, for mpirun --hostfile.\n"
	  "  sweep hosts list FILE.yaml: the hosts, checked, one a line.\n"
	  "  sweep hosts label DB FILE.yaml: write the labels of every host of DB whose hostname the\n"
	  "    inventory knows into its facts, so that reports group by label.NAME ('sweep run --inventory'\n"
	  "    does the same at the end of a run).\n"
	  "  sweep hosts probe [--db PATH] [--cpu]: measure the ceilings of every GPU (and host) of the job\n"
	  "    (under mpirun: every rank's): hbm_copy_gbs, h2d_gbs, gemm_bf16_tflops per GPU, host_read_gbs\n"
	  "    per host, into the probes table of PATH (default results/probes.db; give your sweep's\n"
	  "    database so that reports can use them in --limit). --cpu: the host probe only." },
	{ "merge", cmd_merge, "sweep merge OUT.db IN.db... [--quiet]",
	  "Combine sweep databases (one per rented host, or the shards of an array job) into OUT.db, made\n"
	  "when missing. Cells are matched by key, results and the rest by what identifies them: merging a\n"
	  "file again adds nothing. An ok result for a cell that already has another ok result is kept apart\n"
	  "in the table conflicts (and listed), never written over it. Every input is untrusted: opened\n"
	  "read-only with SQLite's defensive settings, checked (integrity, schema, types, keys) before\n"
	  "anything is written; a bad one is refused with the reason and OUT.db is left as it was." },
	{ "submit", cmd_submit, "sweep submit SPEC [--nodes N] [--gpus-per-node G] [--ntasks-per-node T]\n"
	  "                    [--time T] [--partition P] [--account A] [--array K] [--db PATH] [--template FILE]\n"
	  "                    [--inventory FILE] [--sbatch OPTION]... [--no-requeue] [--dry-run]",
	  "Run the sweep as a Slurm batch job: plan it, render the job script from slurm/sweep.sbatch (or\n"
	  "--template; edit it to load modules or launch with srun), hand it to sbatch and print the job id.\n"
	  "Each node runs G ranks (or T; 1 without GPUs) under mpirun. The job is requeueable: requeued,\n"
	  "it resumes the sweep where it stopped. --array K splits the pending cells into K shards, one\n"
	  "array task each, each with a database of its own (DB.shard-I.db), and prints the 'sweep merge'\n"
	  "to run once they are done. --dry-run prints the script and submits nothing. The job's log is\n"
	  "NAME-JOBID.log beside the database; 'sweep status DB' shows the job's state." },
	{ "launch", cmd_launch, "sweep launch INVENTORY SPEC [--sync] [--hosts NAME,...] [--min-free SIZE]\n"
	  "                    [--timeout SECONDS] [--jobs N]",
	  "Start 'sweep run SPEC' on every host of the inventory over ssh (user, port, identity, ssh_options\n"
	  "from the inventory; your own ssh config and keys), in the host's workdir, detached so that it\n"
	  "outlives the ssh session, writing results/NAME.db and results/NAME.log there (under mpirun -np\n"
	  "SLOTS on a host with more than one slot). One line per host: started, already running, or the\n"
	  "error (unreachable, no sweep binary, no spec, disk full under --min-free, 1G by default).\n"
	  "--sync first copies this sweep binary (to the host's sweep_bin), the spec and the files its\n"
	  "command names. Hosts are handled at once, each within --timeout (120 s).\n"
	  "Exit: 0 every host started or running, 3 some did not." },
	{ "pull", cmd_pull, "sweep pull INVENTORY [--into DB] [--sweep NAME] [--hosts NAME,...]\n"
	  "                  [--timeout SECONDS] [--jobs N]",
	  "Take a consistent snapshot of each launched sweep's database on every host (while the run may go\n"
	  "on writing it), copy it back (scp) into pulled/HOST/ beside the output, and merge it (checked\n"
	  "as 'sweep merge' checks an untrusted input) into --into (default results/NAME.db); the\n"
	  "inventory's labels go into the hosts' facts. Pulling again adds only what is new. A host that\n"
	  "cannot be reached is reported and the others are still pulled. Exit 3 when some host was not." },
	{ "snapshot", cmd_snapshot, "sweep snapshot DB OUT.db",
	  "Write a consistent copy of DB (which a run may be writing) to the new file OUT.db, in one read\n"
	  "transaction, checked; never copy a live database with cp. 'sweep pull' runs it on each host." },
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

	/* Hosts over ssh, and the line they answer with: launch.c. */
	for (int i = 1; i < argc; i++)
		if (!strncmp(argv[i], "--hosts", 7) || !strcmp(argv[i], "--json"))
			return cmd_status_remote(argc, argv);
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
			NULL, 0, TABLE_TEXT, 1) ||
	    slurm_status(st))
		ret = EXIT_FAIL;
	store_close(st);
	return ret;
}
