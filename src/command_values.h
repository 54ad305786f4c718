/* command_values.h: the values a command cell's runs gave, by item and metric (several records of one item
 * and metric in one run combined as the spec's combine: says, each run's values averaged), and the cell's
 * metrics made of them. */
#ifndef SWEEP_COMMAND_VALUES_H
#define SWEEP_COMMAND_VALUES_H

#include "result.h"
#include "spec.h"

struct command_values;

/* An empty set of values whose records of one run combine as combine says (said: the spec gave it, so
 * that the default's averaging needs no note); command_values_free frees it (NULL is fine). */
struct command_values *command_values_new(enum spec_combine combine, int said);
/* One value of metric for item (NULL: the cell's own, no item) in the run in progress. 0, or -1 when it is
 * the run's second of that item and metric and combine is COMBINE_ERROR (nothing kept). */
int command_values_add(struct command_values *v, const char *item, const char *metric, double value);
/* The run in progress is over: each item and metric's records of it, combined, become one value of the
 * run. 0, or -1 with *why (the caller frees it) when a sum went past the largest double. */
int command_values_run_end(struct command_values *v, char **why);
/* Per-item values (the mean of their runs' values) into r->items, in first-seen order; each metric's cell
 * value into r->metrics: the mean over its items, or of its values when none has an item; "seconds",
 * unless a metric is named so, the median of r's samples, and each item's "seconds" the median of its
 * walls. r->note says when the default combine averaged several records of an item in one run ("2
 * records of item r averaged"), else NULL. */
void command_values_finish(const struct command_values *v, struct result *r);
/* The wall time of a kept run of item (its runs come together). */
void command_values_wall(struct command_values *v, const char *item, double seconds);
void command_values_free(struct command_values *v);

#endif
