/* command.h: command cells: a program run per cell (or per item) whose output holds the measurements. */
#ifndef SWEEP_COMMAND_H
#define SWEEP_COMMAND_H

#include "json.h"
#include "result.h"
#include "spec.h"
#include "executor.h"

/* Cap on captured stdout and stderr kept per cell (bytes, each). */
#define COMMAND_CAPTURE_MAX (64 * 1024)

/*
 * Run s->command for task t: placeholders expanded, exec'd directly (no shell) in a new process group,
 * env from s->env added, killed (the whole group, SIGTERM then SIGKILL 2 s later) after s->timeout
 * seconds (each run of the program has the whole timeout; <= 0: none). Group members left behind by a
 * command that exited are killed too. When the command (or what a run uses: env, prepare, cleanup, the
 * metrics' files) uses {item}, what follows is done for each s->items entry:
 * - s->warmup_runs runs whose output is not read (their wall time summed in r->warmup);
 * - one run kept; with s->runs N and s->runs_exact exactly N; else at least N, then timing's stopping rule
 *   (criterion.c, min_samples N) on their wall times: each kept run is a sample with its usage (wait4: user and system CPU time, peak
 *   RSS), r->stop the rule that ended them (the worst over items), noise_ok against max_noise (no target
 *   for a cell of several items, or without runs);
 * - s->prepare before and s->cleanup after every run, their stdout dropped, a failure failing the cell.
 * Each kept run's output is read for metrics (command_metrics.h); "seconds", unless the output gives it,
 * is the median wall time of the runs. stdout keeps its first COMMAND_CAPTURE_MAX bytes in r->out,
 * stderr its last in r->err. A non-zero exit ("exit N: <last stderr line>"), a signal ("killed by signal
 * N (SIGNAME)"), a program that cannot be exec'd ("cannot run 'prog': reason") or a timeout is an error or
 * timeout result, and the runs after it are not made; output that lacks a metric or gives one that does
 * not parse is RESULT_INVALID (no run can change it). Metrics are set only when every run was kept.
 */
void command_run(const struct executor *ex, const struct task *t, struct result *r);

/* The longest a command cell of s may take (INFINITY without a timeout): the worker's limit. */
double command_limit(const struct spec *s);

/* Expand {placeholders} in tmpl: a parameter of params, or item, gpu, host, cell. Unknown names are kept
 * as written (spec.c has already refused them), and so is a NULL item, host or cell; a parameter wins
 * over a built-in name; gpu is -1 on a worker without one. Returns a new string the caller frees. */
char *command_expand(const char *tmpl, const struct json_obj *params, const char *item, int gpu,
		     const char *host, const char *cell);

#endif
