/* result.h: a cell handed to a worker and the result it sends back; shared by executor, worker, master, msg, store. */
#ifndef SWEEP_RESULT_H
#define SWEEP_RESULT_H

#include <stdint.h>
#include "json.h"
#include "stats.h"

/* A cell on its way to a worker. Owns its strings (task_release). */
struct task {
	int64_t cell;          /* cells.id; 0 for a control cell (not a row of cells) */
	char *key;
	char *params;          /* JSON object */
	int pass;
	char *replica;
	int control;           /* 1: the spec's control cell, stored in controls, not results */
	int isolate;           /* the master's: a suspect from a dead job, to be sent only to an idle worker */
	/* A gang cell runs on gang_size workers at once; ordinary cells have gang_size 1 and no ranks. */
	int gang_size, gang_rank;
	int gang_id;           /* the master's number for this set of members: workers cache communicators by it */
	int *gang_ranks;       /* world ranks of the members (owned), NULL when gang_size is 1 */
};
void task_release(struct task *t);

/*
 * How a cell ended. RESULT_INVALID is a failure that running again cannot change (the output lacks a
 * metric, a value does not parse, a metric's path is bad): the store quarantines its cell at once, where
 * an error or a timeout (a crash, a hang) is tried again up to max_attempts. It is stored as an error.
 */
enum result_status { RESULT_OK = 0, RESULT_ERROR = 1, RESULT_TIMEOUT = 2, RESULT_INVALID = 3, NRESULT };
extern const char *const result_status_name[];   /* "ok", "error", "timeout", "error": the stored status */

/* Which rule ended a cell's sampling (criterion.h): the median known to the precision asked, the noise
 * target met, the noise converged above it, the cell's timeout, max_samples taken, or a count fixed in
 * advance (gangs, whose members must launch alike). STOP_NONE: no sampling loop (command cells, failures). */
enum stop_rule {
	STOP_NONE = 0, STOP_PRECISION, STOP_NOISE, STOP_CONVERGED, STOP_TIMEOUT, STOP_MAX_SAMPLES, STOP_COUNT, NSTOP
};
/* NULL, "precision", "noise", "converged", "timeout", "max_samples", "count" */
extern const char *const stop_rule_name[];

/* What one run of a command cost, from wait4: CPU seconds in user and system mode, and its peak resident
 * set in bytes (the kernel's maxrss, of the program and the children it waited for). */
struct run_usage {
	double user, sys, rss;
};

struct item_value {
	char *item;
	char *metric;
	double value;
};

/*
 * What a worker measured for one cell. Samples are seconds of one launch each, in the order taken;
 * clocks[i] is the SM clock in MHz during sample i (0 when unknown). Throttled samples are not in
 * samples; their count is in throttled. usage[i], for command cells only (else NULL), is what run i cost.
 * metrics holds derived per-cell numbers (gflops, gbs, any command metric: the mean over items), as
 * JSON_NUM pairs. Owns everything (result_release).
 */
struct result {
	int64_t cell;
	int worker;            /* rank of the worker */
	enum result_status status;
	char *error;           /* NULL when ok */
	double started, wall;  /* wall-clock start (epoch seconds) and seconds the cell took in all */
	double *samples, *clocks;
	struct run_usage *usage;
	int nsamples;
	size_t alloc_samples;
	int throttled;         /* samples dropped as throttled */
	struct summary sum;    /* of samples, as result_summarize computed it where they were taken */
	int noise_ok;          /* 1 when sum.noise met the noise target (result_summarize) */
	int precise;           /* 1 when the median is known to the precision asked (result_summarize) */
	int settled;           /* 1: the SM clock had settled when sampling began; 0: max_warmup came first;
				* -1: no clock was read (CPU, gangs, commands) */
	enum stop_rule stop;
	int launches;          /* launches a sample holds (0: no sampling loop) */
	double warmup;         /* seconds of warm-up run before the samples (NaN: none) */
	struct json_obj metrics;
	struct item_value *items;
	size_t nitems, alloc_items;
	char *out, *err;       /* captured stdout/stderr of a command cell (capped), else NULL */
	char *note;            /* what a reader of the value should know (command_values.h), else NULL */
};
void result_init(struct result *r);
void result_release(struct result *r);
void result_add_sample(struct result *r, double seconds, double clock_mhz);
/* Each k consecutive samples (and their clocks) become their mean, in order; a remainder short of k is
 * dropped. For samples without usage (kernel cells). */
void result_regroup(struct result *r, int k);
/* The usage of the sample just added (a command's run); earlier samples without one get zeros. */
void result_set_usage(struct result *r, const struct run_usage *u);
void result_add_item(struct result *r, const char *item, const char *metric, double value);
void result_set_metric(struct result *r, const char *name, double value);
/*
 * The one summary of r's samples (median and its STATS_CI interval, quartiles, min, max, mean, stdev, noise =
 * stdev / mean) and the two verdicts on it. noise_ok when noise <= target: target is spec_noise_target() for
 * kernels and gangs (criterion_target() where the timer's resolution raises it), INFINITY where nothing
 * sets one; NaN noise (under two samples) meets only an infinite target. precise when the interval's
 * relative half-width is at most precision (stats_ci_rel): the spec's for kernels and gangs, NaN where
 * nothing is asked (command cells: always precise); a median without an interval (under 6 samples) is
 * not precise. Called where the samples are taken (measure.c, gang.c, command.c); stored as computed.
 */
void result_summarize(struct result *r, double target, double precision);
int result_fail(struct result *r, enum result_status st, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));   /* sets status and error; returns -1 */

#endif
