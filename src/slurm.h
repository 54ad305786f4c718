/* slurm.h: Slurm batch jobs: the job script from a template, submission, and the states of known jobs. */
#ifndef SWEEP_SLURM_H
#define SWEEP_SLURM_H

#include <stdint.h>
#include "spec.h"
#include "store.h"
#include "util.h"

/* What a job script is rendered from. Paths are absolute; strings are borrowed. */
struct slurm_job {
	const char *name;          /* the sweep */
	const char *sweep;         /* this binary */
	const char *spec, *db, *workdir, *log;   /* log: sbatch --output pattern */
	int nodes, gpus_per_node, tasks_per_node;
	int shards;                /* > 0: an array of that many jobs, each with a database of its own */
	int requeue;
	int exclusive;             /* whole nodes (sbatch --exclusive); -1 until slurm_prepare decides */
	int cpus_per_task;         /* CPUs a rank's cgroup gets; 0 until slurm_prepare asks Slurm (-1: none) */
	const char *time, *partition, *account;   /* NULL: the cluster's default */
	const char *const *extra;  /* more sbatch options ("--qos=high"), n_extra of them */
	int n_extra;
	const char *run_args;      /* more arguments of sweep run, already shell words */
};

/*
 * Render template text (read from tpath, named in messages) for job into out. Placeholders are
 * {{sbatch}} (the #SBATCH lines), {{sweep}}, {{spec}}, {{db}}, {{shard_db}} (the array task's
 * database, or db), {{shard_arg}} (sweep run's --shard for an array task, else nothing), {{shards}},
 * {{tasks}}, {{workdir}}, {{name}} and {{run_args}}; each is replaced by one shell word (quoted where
 * needed), or none. Lines starting with "##" are left out. An unknown placeholder is an error: -1 after
 * error().
 */
int slurm_render(const char *tpath, const char *text, const struct slurm_job *job, struct strbuf *out);

/* An sbatch option value fit for an #SBATCH line (no spaces, quotes, '$'; not empty); -1 after error(). */
int slurm_option_ok(const char *what, const char *v);

/* A job on its way to sbatch: job's strings point into the fields below or the caller's options. */
struct slurm_submit {
	struct slurm_job job;
	char *exe, *spec, *db, *workdir, *log, *tmpl;
	struct strbuf args, script;
	struct strbuf command;     /* the command that submitted it (set by the caller): recorded with the job */
};
#define SLURM_SUBMIT_INIT { .job = { .nodes = 1, .requeue = 1, .exclusive = -1 }, .args = STRBUF_INIT, \
	.script = STRBUF_INIT, .command = STRBUF_INIT }

/*
 * Complete x->job for spec s (read from spec_path): absolute paths of this binary, the spec, the
 * database (db, or s->db when NULL), the working folder and the log; --inventory for the run when
 * inventory is not NULL; --exclusive (when not decided: for a kernel sweep, not for a command sweep);
 * --cpus-per-task (when not given: the CPUs of the partition's smallest node, `sinfo`, over the ranks a
 * node runs; none when sinfo does not answer); then render the template (tmpl, or slurm/sweep.sbatch here or beside the
 * binary) into x->script. Changes nothing anywhere: -1 after error() is bad input.
 */
int slurm_prepare(struct slurm_submit *x, const struct spec *s, const char *spec_path, const char *db,
		  const char *tmpl, const char *inventory);
/* Plan s into its database (and each shard's for an array), hand the script to sbatch, record the job
 * (script and x->command) in the database; its id into id (n bytes). A kind of failure (exitcode.h) after
 * error(): FAIL_USAGE when the user must change the spec (as plan_db_with); when sbatch refused the job,
 * the shard databases and a database this call made are removed again. */
int slurm_submit(struct slurm_submit *x, const struct spec *s, char *id, size_t n);
void slurm_submit_release(struct slurm_submit *x);

/* The database of shard i of an array over db: results/x.db -> results/x.shard-I.db. Caller frees. */
char *slurm_shard_db(const char *db, int i);

/* When this process runs inside a Slurm job (SLURM_JOB_ID), note the job, array task and restart count
 * of run in the database (table slurm_runs). 0 outside Slurm; -1 after error(). */
int slurm_note_run(struct store *st, int64_t run);

/* For `sweep status`: the jobs `sweep submit` recorded in st, with their states as Slurm reports them
 * now (squeue, else scontrol). Prints nothing when there are none. -1 after error(). */
int slurm_status(struct store *st);

/*
 * For `sweep status` when no run writes st and it has cells left: how its Slurm jobs go on, as lines
 * appended to out. A job of the database still queued or running (the newest submitted, or the one run,
 * the latest run, ran in): that it goes on by itself, and 1. Else the job run ran in (or the newest) with
 * its state and, when `sweep submit` recorded it, the command that resubmits it; for an array, what each
 * shard's database has left to do; 0. The database of an array task (a shard's): the array's resubmission,
 * read from the sweep's database beside it, and 2 (no local command resumes it). Nothing and 0 for a
 * database without Slurm jobs; -1 after error().
 */
int slurm_resume(struct store *st, int64_t run, struct strbuf *out);

#endif
