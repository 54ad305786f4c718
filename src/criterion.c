/* criterion.c: the stopping rule (criterion.h), after NVBench's relative-stdev criterion. */
#include <math.h>
#include <string.h>
#include "criterion.h"

void criterion_init(struct criterion *c, const struct spec_timing *t)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
}

double criterion_noise(const struct criterion *c)
{
	if (c->n < 2 || c->mean == 0)
		return NAN;
	return sqrt(c->m2 / (c->n - 1)) / fabs(c->mean);
}

double criterion_target(const struct criterion *c)
{
	double floor = c->mean > 0 ? c->resolution / c->mean : 0;

	return fmax(c->t->max_noise, floor);
}

void criterion_add(struct criterion *c, double seconds, double resolution)
{
	double d = seconds - c->mean, noise;

	c->n++;
	c->mean += d / c->n;
	c->m2 += d * (seconds - c->mean);
	if (resolution > c->resolution)
		c->resolution = resolution;
	noise = criterion_noise(c);
	if (isnan(noise))
		return;
	c->window[c->wnext] = noise;
	c->wnext = (c->wnext + 1) % CRITERION_WINDOW;
	if (c->wcount < CRITERION_WINDOW)
		c->wcount++;
}

/* The trailing noise values vary by under CRITERION_STABLE of the latest one. */
static int converged(const struct criterion *c)
{
	double latest, ss = 0;
	int i;

	if (c->wcount <= CRITERION_MIN_WINDOW || c->n % CRITERION_EVERY)
		return 0;
	latest = c->window[(c->wnext + CRITERION_WINDOW - 1) % CRITERION_WINDOW];
	if (!(latest > 0))
		return 1;   /* every sample equal: nothing left to learn */
	for (i = 0; i < c->wcount; i++)
		ss += (c->window[i] - latest) * (c->window[i] - latest);
	return sqrt(ss / (c->wcount - 1)) / latest < CRITERION_STABLE;
}

enum stop_rule criterion_check(const struct criterion *c, double elapsed, double left)
{
	const struct spec_timing *t = c->t;

	if (t->max_samples > 0 && c->n >= t->max_samples)
		return STOP_MAX_SAMPLES;
	if (c->n >= t->min_samples && elapsed >= t->min_time) {
		if (criterion_noise(c) <= criterion_target(c))
			return STOP_NOISE;
		if (converged(c))
			return STOP_CONVERGED;
	}
	return left <= 0 ? STOP_TIMEOUT : STOP_NONE;
}
