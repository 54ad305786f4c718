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
 * command that exited are killed too. When the command uses {item} (in argv or an env value), it runs
 * once per s->items entry. Each JSON line of stdout (metrics: json) or each regex match (metrics: map)
 * is a measurement:
 * - json: every numeric pair of a line that parses as a flat object (nested values skipped) is a value of
 *   that metric; the line's "item" (string or number) names its item, else the run's {item}, else none;
 * - map: each pattern is applied to each stdout line, every match's first capture that reads as a
 *   number is a value (of the run's {item}, if any);
 * - several values of one item and metric are averaged into one item value (r->items); a cell metric is
 *   the mean over its items, or for a metric never given an item the mean of its values;
 * - "seconds", unless the output gives it, is the median wall time of the runs.
 * Each run's wall time is a sample. stdout keeps its first COMMAND_CAPTURE_MAX bytes in r->out (all of it
 * is parsed), stderr its last in r->err. A non-zero exit ("exit N: <last stderr line>"), a signal
 * ("killed by signal N (SIGNAME)"), a program that cannot be exec'd ("cannot run 'prog': reason") or a
 * timeout is an error/timeout result, and later items are not run; metrics are set only when all ran.
 */
void command_run(const struct executor *w, const struct task *t, struct result *r);

/* Expand {placeholders} in tmpl: a parameter of params, or item, gpu, host, cell. Unknown names are kept
 * as written (spec.c has already refused them), and so is a NULL item, host or cell; a parameter wins
 * over a built-in name; gpu is -1 on a worker without one. Returns a new string the caller frees. */
char *command_expand(const char *tmpl, const struct json_obj *params, const char *item, int gpu,
		     const char *host, const char *cell);

#endif
