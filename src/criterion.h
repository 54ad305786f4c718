/* criterion.h: when a cell has been sampled enough: the stopping rule of measure.c, as a pure function. */
#ifndef SWEEP_CRITERION_H
#define SWEEP_CRITERION_H

#include "result.h"
#include "spec.h"

/* Noise values kept for the convergence test, and how many are needed before it is made (NVBench's). */
#define CRITERION_WINDOW 512
#define CRITERION_MIN_WINDOW 64
/* The test runs every CRITERION_EVERY samples; the trailing noise values count as converged when their
 * relative standard deviation around the latest is under CRITERION_STABLE. */
#define CRITERION_EVERY 16
#define CRITERION_STABLE 0.05

/* The rule, and why it is so: docs/timing.md, "The stopping rule" (written there once). */
struct criterion {
	const struct spec_timing *t;
	long n;
	double mean, m2;                /* Welford, over every sample */
	double window[CRITERION_WINDOW];
	int wcount, wnext;
	double resolution;              /* of one sample (seconds), the largest reported so far */
};

void criterion_init(struct criterion *c, const struct spec_timing *t);
/* One sample of `seconds`, which its timer knows to within `resolution` seconds. */
void criterion_add(struct criterion *c, double seconds, double resolution);
/* The noise so far (NaN under two samples) and the target it is held to. */
double criterion_noise(const struct criterion *c);
double criterion_target(const struct criterion *c);
/* STOP_NONE to go on, else the rule that ends the sampling. elapsed: seconds since sampling started;
 * left: seconds to the cell's deadline. */
enum stop_rule criterion_check(const struct criterion *c, double elapsed, double left);

#endif
