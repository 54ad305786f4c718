/* counters_cupti.h: a spec's counters: read in process through CUPTI's range profiler, over one untimed
 * launch a pass of a kernel cell (libcupti by dlopen, as NVML is). */
#ifndef SWEEP_COUNTERS_CUPTI_H
#define SWEEP_COUNTERS_CUPTI_H

#include <stddef.h>
#include "result.h"

/* counters_cupti's answer when this process has no CUPTI to ask (no library, a build without CUDA): the
 * caller may read the counters another way (ncu). */
#define COUNTERS_NO_CUPTI 1

/* What a CUPTI session profiles: before (NULL: nothing) runs ahead of each pass, outside the session, so
 * that nothing it launches is counted (the L2 left clean); launch inside it, waiting for its work. Each
 * returns 0, or -1 with why (wn bytes). */
struct counters_launch {
	int (*before)(void *arg, char *why, size_t wn);
	int (*launch)(void *arg, char *why, size_t wn);
	void *arg;
};

/*
 * Read names (n counters, Nsight Compute's metric names) over what l->launch runs on GPU gpu, in CUDA
 * context cuctx (a CUcontext; NULL: the current one): a range profiler session of automatic ranges (one a
 * kernel) in user replay: sweep drives the passes, l->before then l->launch once a pass, until CUPTI says
 * every pass is submitted. Nothing is saved or restored between passes, unlike kernel replay, and before
 * runs where nothing is counted (kernel replay has no place for it): the counters are read over re-runs of
 * the launch, which must do the same work each time (its traffic is counted, not its data). Each counter a range gave
 * becomes a metric of r under its own name, folded over the kernels as counters_fold says. Returns 0; -1
 * with why (wn bytes) holding the one line CUPTI answered ("cuptiRangeProfilerEnable:
 * CUPTI_ERROR_INSUFFICIENT_PRIVILEGES (35): ...") or the callback's, no value set; or COUNTERS_NO_CUPTI
 * with why saying what is missing. The library is the one the environment's SWEEP_CUPTI_LIB names when set
 * (the tests' fake, tests/unit/fake_cupti.cc), else libcupti.so.13 or libcupti.so on the loader's path; it
 * stays loaded for the life of the process.
 */
int counters_cupti(char *const *names, int n, int gpu, void *cuctx, const struct counters_launch *l,
		   struct result *r, char *why, size_t wn);

#endif
