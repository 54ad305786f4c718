/* criterion.c: the stopping rule (criterion.h): the median's precision first, NVBench's relative-stdev
 * criterion when asked; and when a warm-up's clock has settled. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "criterion.h"
#include "stats.h"
#include "util.h"

void criterion_init(struct criterion *c, const struct spec_timing *t)
{
	memset(c, 0, sizeof(*c));
	c->t = t;
	c->median = c->lo = c->hi = NAN;
}

void criterion_release(struct criterion *c)
{
	free(c->x);
	c->x = NULL;
	c->alloc_x = 0;
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

	return c->t->max_noise > 0 ? fmax(c->t->max_noise, floor) : INFINITY;
}

void criterion_add(struct criterion *c, double seconds, double resolution)
{
	double d = seconds - c->mean, noise;

	ALLOC_GROW(c->x, (size_t)c->n + 1, c->alloc_x);
	c->x[c->n] = seconds;
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

/* The median known to the precision asked, computed when due (CRITERION_STEP); false between checks. */
static int precise(struct criterion *c)
{
	if (c->n < c->next_check)
		return 0;
	c->next_check = c->n + (c->n / CRITERION_STEP > 1 ? c->n / CRITERION_STEP : 1);
	c->checks++;
	c->checked = c->n;
	stats_median_ci(c->x, (size_t)c->n, STATS_CI, &c->median, &c->lo, &c->hi);
	return stats_ci_rel(c->lo, c->hi, c->median) <= c->t->precision;
}

enum stop_rule criterion_check(struct criterion *c, double elapsed, double left)
{
	const struct spec_timing *t = c->t;

	if (t->max_samples > 0 && c->n >= t->max_samples)
		return STOP_MAX_SAMPLES;
	if (c->n >= t->min_samples && elapsed >= t->min_time) {
		if (precise(c))
			return STOP_PRECISION;
		if (t->max_noise > 0 && criterion_noise(c) <= criterion_target(c))
			return STOP_NOISE;
		if (t->max_noise > 0 && converged(c))
			return STOP_CONVERGED;
	}
	return left <= 0 ? STOP_TIMEOUT : STOP_NONE;
}

int criterion_grow(const struct criterion *c)
{
	const struct spec_timing *t = c->t;
	double ratio;

	if (t->batch > 0 || t->max_noise > 0 || c->n < CRITERION_GROW_AFTER || c->checked != c->n)
		return 0;
	ratio = stats_ci_rel(c->lo, c->hi, c->median) / t->precision;
	return ratio > 1 && c->n * ratio * ratio > CRITERION_GROW_SAMPLES;
}

void criterion_settle_init(struct criterion_settle *s, double max_clock)
{
	memset(s, 0, sizeof(*s));
	s->max_clock = max_clock;
	s->ref = NAN;
	s->power = POWER_PENDING;
}

void criterion_settle_release(struct criterion_settle *s)
{
	free(s->t);
	free(s->mhz);
	s->t = s->mhz = NULL;
	s->n = s->alloc_t = s->alloc_mhz = 0;
}

void criterion_settle_add(struct criterion_settle *s, double t, double mhz)
{
	ALLOC_GROW(s->t, s->n + 1, s->alloc_t);
	ALLOC_GROW(s->mhz, s->n + 1, s->alloc_mhz);
	s->t[s->n] = t;
	s->mhz[s->n++] = mhz;
}

/* The q-quantile of the clock readings in (from, to]; NaN when there are none. */
static double settle_quantile(const struct criterion_settle *s, double from, double to, double q)
{
	double *w = xmalloc((s->n + 1) * sizeof(*w)), m;
	size_t k = 0;

	for (size_t i = 0; i < s->n; i++)
		if (s->t[i] > from && s->t[i] <= to)
			w[k++] = s->mhz[i];
	m = k ? stats_quantile(w, k, q) : NAN;
	free(w);
	return m;
}

static double settle_median(const struct criterion_settle *s, double from, double to)
{
	return settle_quantile(s, from, to, 0.5);
}

int criterion_settled(struct criterion_settle *s, double t, double warmup)
{
	double tol = CRITERION_SETTLE_TOL * s->max_clock, a, b;

	if (!s->moved && s->power != POWER_BOUND) {
		double half = warmup / 2 - 1e-9, mid = (warmup / 2 + t) / 2;

		a = settle_median(s, half, mid);
		b = settle_median(s, mid, t);
		if (isnan(a) || isnan(b) || fabs(a - b) <= tol) {
			s->ref = settle_median(s, half, t);
			return 1;
		}
		s->moved = 1;
	}
	if (t < s->next || t < 2 * CRITERION_SETTLE_WINDOW)
		return 0;
	s->next = t + CRITERION_SETTLE_WINDOW / 4;
	a = settle_median(s, t - 2 * CRITERION_SETTLE_WINDOW, t - CRITERION_SETTLE_WINDOW);
	b = settle_median(s, t - CRITERION_SETTLE_WINDOW, t);
	if ((isnan(a) || isnan(b)) && s->n >= 2) {
		/* launches longer than a window: the last two readings */
		a = s->mhz[s->n - 2];
		b = s->mhz[s->n - 1];
	}
	if (!(fabs(a - b) <= tol))
		return 0;
	s->ref = b;
	return 1;
}

void criterion_settle_end(struct criterion_settle *s)
{
	double last;

	if (!s->n)
		return;
	last = s->t[s->n - 1];
	s->ended = settle_quantile(s, last - CRITERION_SETTLE_WINDOW, last, 0.75);
}

int criterion_settle_left(struct criterion_settle *s, double mhz)
{
	if (!(fabs(mhz - s->ref) > CRITERION_SETTLE_LEAVE * s->max_clock)) {
		s->away = 0;
		return 0;
	}
	if (++s->away < CRITERION_SETTLE_RUN)
		return 0;
	s->moved = 1;
	s->away = 0;
	s->ref = NAN;
	return 1;
}

int criterion_settle_power(struct criterion_settle *s, enum power_verdict v)
{
	int takes = s->power == POWER_PENDING ? v != POWER_PENDING : s->power == POWER_FREE && v == POWER_BOUND;

	if (!takes)
		return 0;
	s->power = v;
	if (v != POWER_BOUND || s->moved || isnan(s->ref))
		return 0;
	s->ref = NAN;   /* settled by the quarters: no longer */
	s->away = 0;
	return 1;
}

/* Before CRITERION_POWER_RAMP nothing: a reading that early may show the cell before (criterion.h). */
enum power_verdict criterion_power_judge(double watts, double limit, int capped, double at)
{
	if (at < CRITERION_POWER_RAMP)
		return POWER_PENDING;
	return capped || watts >= CRITERION_POWER_NEAR * limit ? POWER_BOUND : POWER_FREE;
}

/* The card manages the clock: not settled, or settled under the maximum (a card at its power limit settles
 * by the windows only, so it is managed until they agree, and after that if they agree under the maximum). */
static int managed(const struct criterion_settle *s)
{
	if (!(s->max_clock > 0) || !s->n)
		return 0;   /* no clock read */
	return !(s->ref >= (1 - CRITERION_SETTLE_TOL) * s->max_clock);
}

int criterion_stop_holds(const struct criterion_settle *s, enum stop_rule stop, double warm, double sampled)
{
	if (stop != STOP_PRECISION && stop != STOP_NOISE && stop != STOP_CONVERGED)
		return 0;
	if (s->power == POWER_PENDING && warm < CRITERION_POWER_WAIT)
		return 1;
	return sampled < CRITERION_MANAGED_SPAN && managed(s);
}
