/* counters.h: hardware counters beside a result (a spec's counters:): a command cell's program run once,
 * untimed, under Nsight Compute's CLI (ncu --csv), its CSV read into the result's metrics. */
#ifndef SWEEP_COUNTERS_H
#define SWEEP_COUNTERS_H

#include <stddef.h>
#include "result.h"
#include "spec.h"

/* A counter's running value over the kernels read (ncu's rows, CUPTI's ranges); zeroed: none yet. */
struct counter_sum {
	double v;
	int n;
};
/* Fold value into name's running value: the largest for a .max, the smallest for a .min, else the sum
 * (a mean's sum, for a name that is neither a .sum nor a .max nor a .min: counters_set divides). */
void counters_fold(const char *name, struct counter_sum *c, double value);
/* Each of names (n) that has a value in sum[i] becomes a metric of r: the sum for a .sum, the largest or
 * smallest for a .max or .min, else (ratios, .pct, .avg) the mean over the kernels. Returns how many. */
int counters_set(char *const *names, int n, const struct counter_sum *sum, struct result *r);
/*
 * ncu's CSV (text, as `ncu --csv --print-units base` prints it, its own ==PROF== lines among it): each of
 * names (n) becomes a metric of r, its value over the kernels profiled: summed for a .sum, the largest
 * for a .max, the smallest for a .min, else (ratios, .pct, .avg) the mean. Returns how many were set; when
 * none, why holds one line saying why (ncu's last ==ERROR== line, such as ERR_NVGPUCTRPERM, else "no rows").
 */
int counters_parse_ncu(const char *text, char *const *names, int n, struct result *r, char *why, size_t wn);
/*
 * Run argv (env; NULL: ours) once under ncu with s's counters, after the timed runs (nothing of it is
 * timed), and read its CSV into r. from_start 0: only what the program brackets with cudaProfilerStart and
 * Stop is profiled (ncu --profile-from-start off: a kernel cell's one launch, not its setup). 0, or -1 with
 * the one line why: no ncu on PATH, ncu refused, nothing read. Nothing is made up: a counter ncu did not
 * give is absent.
 */
int counters_command(const struct spec *s, char *const *argv, char *const *env, int from_start,
		     struct result *r, char *why, size_t n);
/* The one line a result carries when its counters could not be read ("counters: WHY"), appended to r->err
 * (a command's captured stderr, else alone) so that it is stored with the result. */
void counters_note(struct result *r, const char *why);

#endif
