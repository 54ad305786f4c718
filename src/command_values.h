/* command_values.h: the values a command cell's runs gave, by item and metric (several values of one item
 * and metric are averaged), and the cell's metrics made of them. */
#ifndef SWEEP_COMMAND_VALUES_H
#define SWEEP_COMMAND_VALUES_H

#include "result.h"

struct command_values;

/* An empty set of values; command_values_free frees it (NULL is fine). */
struct command_values *command_values_new(void);
/* One value of metric for item (NULL: the cell's own, no item). */
void command_values_add(struct command_values *v, const char *item, const char *metric, double value);
/* Per-item values (their means) into r->items, in first-seen order; each metric's cell value into
 * r->metrics: the mean over its items, or of its values when none has an item; "seconds", unless a metric
 * is named so, the median of r's samples, and each item's "seconds" the median of its walls. */
void command_values_finish(const struct command_values *v, struct result *r);
/* The wall time of a kept run of item (its runs come together). */
void command_values_wall(struct command_values *v, const char *item, double seconds);
void command_values_free(struct command_values *v);

#endif
