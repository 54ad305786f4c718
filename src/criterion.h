/* criterion.h: when a cell has been sampled enough (the stopping rule of measure.c) and warmed up enough
 * (its clock settled): pure functions of the samples and clock readings. */
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
/* The median's interval is computed again once the samples have grown by a CRITERION_STEP-th since the last
 * time (at every sample below CRITERION_STEP samples). Each time is a selection, linear in the samples:
 * at every sample a cell's sampling would cost quadratic time; this way the checks' sizes grow
 * geometrically and cost about CRITERION_STEP + 1 visits a sample in all, for at most 1/CRITERION_STEP more
 * samples than needed. */
#define CRITERION_STEP 32

/* The rule, and why it is so: docs/timing.md, "The stopping rule" (written there once). */
struct criterion {
	const struct spec_timing *t;
	long n;
	double mean, m2;                /* Welford, over every sample */
	double window[CRITERION_WINDOW];
	int wcount, wnext;
	double resolution;              /* of one sample (seconds), the largest reported so far */
	double *x;                      /* every sample, in the order the selections left them (owned) */
	size_t alloc_x;
	long next_check;                /* n at which the interval is computed next */
	double median, lo, hi;          /* at the last check; NaN before the first */
	long checks;                    /* intervals computed so far */
	long checked;                   /* n at the last check */
};

/*
 * When a sample should average more launches: once CRITERION_GROW_AFTER samples are in and, at the check just
 * made, the median's interval projects (its width falling as 1 / sqrt(n)) that the precision needs over
 * CRITERION_GROW_SAMPLES samples, each sample becomes the mean of CRITERION_GROW times as many consecutive
 * timed samples (measure.c; the samples so far are kept, CRITERION_GROW averaged into one). For independent
 * samples the launches needed stay the same and fewer, longer samples cost no more; for samples whose times
 * repeat in a cycle it is what makes the median known at all: an H200 decode step of 12.5 us under a cold L2
 * takes four levels between 11.7 and 12.9 us in turn, one per timed sample, the median falls between two of
 * them and stays as wide as they are apart (3185 samples, 3.35 s), while a mean of four consecutive samples
 * holds each level once. Consecutive samples, not more launches behind one gate: the same step timed 16 to 576
 * launches to a gate read 12.8-13.4 us against 12.2-12.7 at 1 to 9 (docs/measured.md). Only on timers that
 * read the device's time (timer_ops.grows: a CPU thread's wall time varies by what interrupts it, which longer
 * samples catch more often); never when the spec fixes `batch` or asks for max_noise (NVBench's rule is about
 * the noise of the samples as they are). Nor once the precision is met, while a stop is held back (for the
 * power verdict, or the span of a managed clock): there is nothing left for larger samples to reach. Nor
 * once a sample lasts CRITERION_GROW_MAX_S (measure.c): a pattern of launches repeats in it many times over,
 * and what still moves such samples is the clock, which a power-limited card moves at its controller's
 * 100 ms tick; longer samples there only thin them. An H200's 8192x28672x4096 GEMM (2.8 ms) grew to 16
 * launches a sample, 51 samples, +-0.48 % after 2.3 s of samples (2.62 s the cell); in two other jobs, 208
 * samples of one launch each, +-0.03 % after 0.6 s (docs/measured.md).
 */
#define CRITERION_GROW_AFTER 64
#define CRITERION_GROW_SAMPLES 256
#define CRITERION_GROW 4
#define CRITERION_GROW_MAX_S 1e-3

/*
 * When warm-up may end: the SM clock has settled. Every clock reading of the warm-up (and of the samples, in
 * case the clock moves again) is added with its time in seconds since warm-up began. A clock that held
 * still over the second half of `warmup` (the medians of that half's two quarters agree) has settled then:
 * most cells, whose clock never moves. One that moved (a card drawn to its power limit: an H200 holds its
 * maximum for about 0.1 s, then falls for up to a second) has settled once the median clocks of the last
 * two CRITERION_SETTLE_WINDOW seconds agree, looked at every quarter window. "Agree" is within
 * CRITERION_SETTLE_TOL of the maximum clock. Medians, because a clock measured before each sample scatters
 * (an H200 under a 68 us GEMM: 1650-1990 MHz from one sample to the next about a median that holds within
 * 0.3 % for seconds). A clock still when warm-up ends can start to fall later, during sampling:
 * CRITERION_SETTLE_RUN readings in a row more than CRITERION_SETTLE_LEAVE of the maximum away from the
 * settled clock say so (measure.c then drops the samples and warms up on, within max_warmup).
 *
 * A clock still over the quarters can also be one that has not yet started to fall: an H200's power
 * controller reads the power and sets the clock every 100 ms, and a GEMM ran its first 40-200 ms at the
 * maximum clock before the controller lowered it by up to 25 %. So the timer also says whether the card is
 * held at a power or thermal limit (timer_ops.power, criterion_power_judge), judged from a reading taken at
 * least CRITERION_POWER_RAMP after warm-up began (waiting for one 60 ms in, the issue grid's median cell took
 * 0.160 s in one job, against 0.114 with 40 ms in another). An earlier reading cannot say even that a card is
 * free: readings 13-27 ms in saw from a fifth to four fifths of the load's power (an H200: 124 W 13 ms into a
 * cell that read 700 W a tick later, 157 W into the 18 us GEMM of 223-245 W), as much of what ran before as
 * of the cell. The controller reads once a tick, so a light cell waits 40-140 ms for its verdict, beyond its
 * warm-up and samples where the tick comes late (a decode step over 16K keys held 68 ms after it had its
 * precision); an H200's energy counter moved only with the ticks, so what the cell draws is known no sooner.
 * A card reads at its limit from CRITERION_POWER_NEAR of it (an H200 read 696-900 W of its 700 under the
 * GEMMs its controller then slowed, 580-640 W under a 2 GiB copy and a decode step it did not; waiting, where
 * the first reading lay between 85 and 95 %, for the next or up to 0.25 s raised the issue grid's median wall
 * per cell to 0.194 s in one job, against do_bench's 0.147). A cell does not stop sampling while the verdict
 * is pending, up to CRITERION_POWER_WAIT after warm-up began, and a card at its limit (POWER_BOUND) settles
 * by the windows only, whatever the quarters said. A card found free of its limit is watched on: one coming
 * from idle can reach the limit only later (an H200's first cell of the 67 us GEMM after an idle second read
 * free 40 ms in, then its clock fell from 1685 to 1672 MHz over its samples, 68.39 to 68.72 us, while the
 * five cells after it were at the limit from the start), and once a reading says so the cell warms up on as
 * above.
 *
 * A clock the card manages also wanders from one tick of its controller to the next, and samples taken
 * within one tick cannot show it, so neither can their median's interval: under the 67 us GEMM
 * (1024x6144x4096) an H200's gate clock sat at 1768-1790 MHz while NVML read 1980 MHz and no cap, each of six
 * cells of it back to back stopped by precision after 0.05 s of samples, and their medians followed their
 * clocks, 68.16-68.51 us (0.52 %); cells that sampled 0.2 s read 68.67-68.80 (four in one job) and
 * 68.03-68.19 us (six in another). The controller's clock also swings over several ticks (1716-1760 MHz
 * from one 0.4 s cell to the next at the limit): six such cells back to back, eight runs of each span in
 * turn on one card, spread 0.37-1.30 % (median 0.70, 2 of 8 within 0.5 %) with 0.2 s of samples, 0.42-0.93
 * (0.58, 3 of 8) with 0.4 s and 0.23-0.88 (0.47, 5 of 8) with 0.6 s; on a second card 0.19-0.52 % with
 * 0.2 s (0.33) and 0.19-0.52 with 0.6 s (0.28), 7 of 8 each; on a third 0.28-0.38 % (0.28) with 0.6 s,
 * 0.14-0.42 (0.31) with 1.0 s and 0.14-0.42 (0.28) with 1.5 s, 6 of 6 each: longer spans do not help. So
 * a cell whose clock is managed (it settled more than CRITERION_SETTLE_TOL under the maximum, or has not
 * settled, which a card at its limit does by the windows only) stops by precision, noise or convergence
 * only after CRITERION_MANAGED_SPAN seconds of samples. A cell at the maximum clock, most cells, is not
 * held, not even on a card read at its limit: a clock that stays at the maximum is one the controller does
 * not move (an H200's 2 GiB copy, read at the limit, held 1980 MHz; its median over 0.63 s of samples was
 * 1002.40-1002.66 us in four cells, over 0.03 s 1002.27 in a fifth read free, while the span made it and a
 * decode step over 64K keys 0.83 s cells, against 0.10 s in a job that read them free).
 */
#define CRITERION_SETTLE_WINDOW 0.1
#define CRITERION_SETTLE_TOL 0.01
#define CRITERION_SETTLE_LEAVE 0.03
#define CRITERION_SETTLE_RUN 4
#define CRITERION_POWER_RAMP 0.04
#define CRITERION_POWER_NEAR 0.95
#define CRITERION_POWER_WAIT 0.25
#define CRITERION_MANAGED_SPAN 0.6

/* What a timer says of the card's power (timer_ops.power): no reading to judge by (the CPU, a card
 * without it), none taken late enough yet, not at a limit, held at a power or thermal limit. */
enum power_verdict { POWER_NONE = -1, POWER_PENDING, POWER_FREE, POWER_BOUND };

struct criterion_settle {
	double max_clock;      /* MHz */
	double *t, *mhz;       /* every reading: when, and the clock (owned) */
	size_t n, alloc_t, alloc_mhz;
	int moved;             /* the clock was not still in the second half of warmup */
	double next;           /* when to compare the windows next */
	double ref;            /* the clock it settled at; NaN before */
	double ended;          /* where a clock that did not settle was (criterion_settle_end); 0 before */
	int away;              /* readings in a row away from ref */
	enum power_verdict power;   /* POWER_PENDING until the timer says */
};
/* The verdict of a card's power reading of `watts` against its `limit` (W, > 0), taken `at` seconds after
 * warm-up began, `capped` when a power or thermal limit held the clocks back then. */
enum power_verdict criterion_power_judge(double watts, double limit, int capped, double at);
/* criterion_settle_release frees the readings. max_clock > 0. */
void criterion_settle_init(struct criterion_settle *s, double max_clock);
void criterion_settle_release(struct criterion_settle *s);
void criterion_settle_add(struct criterion_settle *s, double t, double mhz);
/* At t (seconds since warm-up began, at least warmup, after a reading at t): 1 once the clock has
 * settled (s->ref is then its clock), else 0. */
int criterion_settled(struct criterion_settle *s, double t, double warmup);
/* The CRITERION_SETTLE_RUN-th reading in a row far from the settled clock: 1, and the clock is no longer
 * settled (only two windows that agree will say it is again); else 0. */
int criterion_settle_left(struct criterion_settle *s, double mhz);
/* Warm-up gave up on the clock settling (max_warmup), or it moved after: s->ended takes the upper quartile
 * of the readings of the last CRITERION_SETTLE_WINDOW, the state the samples that follow are taken in (the
 * quartile, not the median: a clock that dips in every other reading is held at the higher one). */
void criterion_settle_end(struct criterion_settle *s);
/* The timer's power verdict: a first one once it is no longer pending, then POWER_BOUND after
 * POWER_FREE (a card that reached its limit later); POWER_BOUND and POWER_NONE are kept. POWER_BOUND: the
 * clock settles by the windows only; 1 when it had settled by the quarters (it is no longer settled),
 * else 0. */
int criterion_settle_power(struct criterion_settle *s, enum power_verdict v);
/* 1 when a stop by precision, noise or convergence waits: for the power verdict while it is pending and
 * warm (seconds since warm-up began) is under CRITERION_POWER_WAIT, or for more samples while the clock is
 * managed and sampled (seconds since sampling began) is under CRITERION_MANAGED_SPAN; else 0. */
int criterion_stop_holds(const struct criterion_settle *s, enum stop_rule stop, double warm, double sampled);

/* criterion_release frees what criterion_add allocated. */
void criterion_init(struct criterion *c, const struct spec_timing *t);
void criterion_release(struct criterion *c);
/* One sample of `seconds`, which its timer knows to within `resolution` seconds. */
void criterion_add(struct criterion *c, double seconds, double resolution);
/* The noise so far (NaN under two samples) and the target it is held to (INFINITY without max_noise). */
double criterion_noise(const struct criterion *c);
double criterion_target(const struct criterion *c);
/* STOP_NONE to go on, else the rule that ends the sampling. elapsed: seconds since sampling started;
 * left: seconds to the cell's deadline. May compute the interval (reordering c's own copy of the
 * samples, never the caller's). */
enum stop_rule criterion_check(struct criterion *c, double elapsed, double left);
/* After a criterion_check that did not stop: 1 when the next samples should average CRITERION_GROW
 * times the launches (and the samples so far be dropped), else 0. */
int criterion_grow(const struct criterion *c);

#endif
