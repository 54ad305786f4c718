/* submit.c: `sweep submit SPEC`: the sweep as a Slurm batch job. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "../clocks.h"
#include "../slurm.h"
#include "builtin.h"

static int positive(const char *opt, const char *v, int min, int *out)
{
	long n;

	if (parse_long(v, &n) || n < min || n > 100000)
		return error("--%s takes a whole number from %d, not '%s'", opt, min, v);
	*out = (int)n;
	return 0;
}

static int submit_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "nodes", required_argument, NULL, 'N' }, { "gpus-per-node", required_argument, NULL, 'G' },
		{ "ntasks-per-node", required_argument, NULL, 'T' }, { "time", required_argument, NULL, 't' },
		{ "partition", required_argument, NULL, 'p' }, { "account", required_argument, NULL, 'A' },
		{ "array", required_argument, NULL, 'a' }, { "db", required_argument, NULL, 'd' },
		{ "template", required_argument, NULL, 'f' }, { "inventory", required_argument, NULL, 'i' },
		{ "sbatch", required_argument, NULL, 's' }, { "no-requeue", no_argument, NULL, 'R' },
		{ "dry-run", no_argument, NULL, 'n' }, { "exclusive", no_argument, NULL, 'x' },
		{ "no-exclusive", no_argument, NULL, 'X' }, { "cpus-per-task", required_argument, NULL, 'c' },
		{ "lock-clocks", no_argument, NULL, 'L' }, { NULL, 0, NULL, 0 },
	};
	struct slurm_submit x = SLURM_SUBMIT_INIT;
	struct slurm_job *j = &x.job;
	const char *db = NULL, *tmpl = NULL, *inv = NULL, **extra = NULL;
	char id[64];
	struct spec s;
	int opt, dry = 0, have_spec = 0, lock = 0, ret = FAIL_USAGE;

	while ((opt = getopt_long(argc, argv, "N:G:T:t:p:A:a:d:f:i:s:RnxXc:", opts, NULL)) != -1) {
		switch (opt) {
		case 'N': if (positive("nodes", optarg, 1, &j->nodes)) goto out; break;
		case 'G': if (positive("gpus-per-node", optarg, 0, &j->gpus_per_node)) goto out; break;
		case 'T': if (positive("ntasks-per-node", optarg, 1, &j->tasks_per_node)) goto out; break;
		case 'a': if (positive("array", optarg, 1, &j->shards)) goto out; break;
		case 't': if (slurm_option_ok("--time", optarg)) goto out; j->time = optarg; break;
		case 'p': if (slurm_option_ok("--partition", optarg)) goto out; j->partition = optarg; break;
		case 'A': if (slurm_option_ok("--account", optarg)) goto out; j->account = optarg; break;
		case 's':
			if (slurm_option_ok("--sbatch", optarg))
				goto out;
			extra = xrealloc(extra, (size_t)(j->n_extra + 1) * sizeof(*extra));
			extra[j->n_extra++] = optarg;
			break;
		case 'd': db = optarg; break;
		case 'f': tmpl = optarg; break;
		case 'i': inv = optarg; break;
		case 'R': j->requeue = 0; break;
		case 'n': dry = 1; break;
		case 'x': j->exclusive = 1; break;
		case 'X': j->exclusive = 0; break;
		case 'c': if (positive("cpus-per-task", optarg, 1, &j->cpus_per_task)) goto out; break;
		case 'L': lock = 1; break;
		default: ret = SHOW_USAGE; goto out;
		}
	}
	j->extra = extra;
	if (optind != argc - 1) {
		ret = SHOW_USAGE;
		goto out;
	}
	if (spec_load(argv[optind], &s))
		goto out;
	have_spec = 1;
	if ((ret = clocks_consent(&s, argv[optind], lock)))
		goto out;
	ret = FAIL_USAGE;
	if (lock)
		sb_adds(&x.args, "--lock-clocks ");
	if (slurm_prepare(&x, &s, argv[optind], db, tmpl, inv))
		goto out;
	/* What resubmits it, for 'sweep status' once the job is over and the sweep is not. */
	sb_adds(&x.command, "cd ");
	sb_add_word(&x.command, x.workdir);
	sb_adds(&x.command, " && sweep");
	for (int i = 0; i < argc; i++) {
		sb_addc(&x.command, ' ');
		sb_add_word(&x.command, argv[i]);
	}
	if (dry) {
		fputs(x.script.buf, stdout);
		ret = FAIL_OK;
		goto out;
	}
	if ((ret = slurm_submit(&x, &s, id, sizeof(id))))
		goto out;
	printf("%s\n", id);
	fprintf(stderr, "sweep: submitted %s as job %s%s; 'sweep status %s' shows it\n", s.name, id,
		j->shards ? " (an array)" : "", db ? db : s.db);
	if (j->shards) {
		fprintf(stderr, "sweep: when its %d tasks have finished, merge them:\n  sweep merge %s", j->shards,
			db ? db : s.db);
		for (int i = 0; i < j->shards; i++) {
			char *p = slurm_shard_db(db ? db : s.db, i);

			fprintf(stderr, " %s", p);
			free(p);
		}
		fputc('\n', stderr);
	}
	ret = FAIL_OK;
out:
	if (have_spec)
		spec_release(&s);
	free(extra);
	slurm_submit_release(&x);
	return ret == SHOW_USAGE ? cmd_usage(&cmd_submit) : exitcode_of(ret);
}

const struct cmd cmd_submit = { "submit", submit_fn,
	"sweep submit SPEC [--nodes N] [--gpus-per-node G] [--ntasks-per-node T]\n"
	"                    [--time T] [--partition P] [--account A] [--array K] [--db PATH] [--template FILE]\n"
	"                    [--inventory FILE] [--sbatch OPTION]... [--no-requeue] [--dry-run]\n"
	"                    [--exclusive | --no-exclusive] [--cpus-per-task C] [--lock-clocks]",
	"Run the sweep as a Slurm batch job: plan it, render the job script from slurm/sweep.sbatch (or\n"
	"--template; edit it to load modules or launch with srun), hand it to sbatch and print the job id.\n"
	"Each node runs G ranks (or T; 1 without GPUs) under mpirun. The job is requeueable: requeued,\n"
	"it resumes the sweep where it stopped. --array K splits the pending cells into K shards, one\n"
	"array task each, each with a database of its own (DB.shard-I.db), and prints the 'sweep merge'\n"
	"to run once they are done. --dry-run prints the script and submits nothing. The job's log is\n"
	"NAME-JOBID.log beside the database; 'sweep status DB' shows the job's state.\n"
	"A sweep of kernels has its nodes to itself (--exclusive; --no-exclusive shares them); a sweep of\n"
	"commands shares them unless --exclusive. Each rank gets the CPUs of a node over its ranks\n"
	"(--cpus-per-task, from sinfo; give C where sinfo cannot tell). When sbatch refuses the job, the\n"
	"databases the submit made are removed. --lock-clocks consents to the spec's clocks: (the job runs\n"
	"sweep run --lock-clocks); a spec with clocks: is refused without it." };
