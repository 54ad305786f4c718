/* command_metrics.h: a command's metrics read from what its runs print or write: JSON lines, JSON documents
 * whose records and values are selected by path, or regexes; from stdout, stderr or files; values with
 * their units converted; several matches of a regex taken as the spec says. */
#ifndef SWEEP_COMMAND_METRICS_H
#define SWEEP_COMMAND_METRICS_H

#include "result.h"
#include "spec.h"

/* The most bytes of one source (a stream kept whole for JSON, a file) read for metrics. */
#define COMMAND_METRICS_TEXT_MAX ((size_t)64 << 20)

/*
 * The metrics of one cell as its runs give them. Values of one item and metric are averaged over the
 * runs and over the records or lines that give them; command_metrics_finish makes the cell's metrics.
 */
struct command_metrics;

/* The metrics of s for one cell (its regexes compiled), or NULL with r failed as RESULT_INVALID.
 * command_metrics_free frees it. */
struct command_metrics *command_metrics_new(const struct spec *s, struct result *r);
/*
 * A run starts. item: the run's {item} (NULL: none), which values get unless their output names another;
 * keep 0: a warm-up run, whose output is not read. expand(tmpl, data) gives a template with the cell's
 * placeholders filled in (a string the caller frees): the paths of files and of JSON values. A file the
 * metrics are read from is removed now, so that one left by an earlier run is never taken for this run's.
 */
void command_metrics_begin(struct command_metrics *m, const char *item, int keep,
			   char *(*expand)(const char *tmpl, void *data), void *data);
/* What the run wrote to stdout and stderr, as it comes. */
void command_metrics_stdout(struct command_metrics *m, const char *buf, size_t n);
void command_metrics_stderr(struct command_metrics *m, const char *buf, size_t n);
/* The run exited 0: its files read, each metric's rule checked. 0, or -1 with r failed as RESULT_INVALID,
 * saying which metric and the line at fault. */
int command_metrics_end(struct command_metrics *m, struct result *r);
/* After the last run: per-item values into r->items, each metric's cell value (the mean over its items,
 * or of its values when none has an item) into r->metrics; "seconds", unless a metric is named so, the
 * median of r's samples, and each item's "seconds" the median of its runs' wall times (r's samples taken
 * when command_metrics_end was called for a run of that item). */
void command_metrics_finish(struct command_metrics *m, struct result *r);
void command_metrics_free(struct command_metrics *m);

#endif
