/* counters_cupti.h: a spec's counters: read in process through CUPTI's range profiler, over one untimed
 * launch of a kernel cell (libcupti by dlopen, as NVML is). */
#ifndef SWEEP_COUNTERS_CUPTI_H
#define SWEEP_COUNTERS_CUPTI_H

#include <stddef.h>
#include "result.h"

/* counters_cupti's answer when this process has no CUPTI to ask (no library, a build without CUDA): the
 * caller may read the counters another way (ncu). */
#define COUNTERS_NO_CUPTI 1

/*
 * Read names (n counters, Nsight Compute's metric names) over what launch(arg) runs on GPU gpu, in CUDA
 * context cuctx (a CUcontext; NULL: the current one): a range profiler session of automatic ranges (one a
 * kernel) in kernel replay (CUPTI runs each kernel once per pass, restoring its memory), around one call
 * of launch, which returns 0 or -1 and waits for its work. Each counter a range gave becomes a metric of r
 * under its own name, folded over the kernels as counters_fold says. Returns 0; -1 with why (wn bytes)
 * holding the one line CUPTI answered ("cuptiRangeProfilerEnable: CUPTI_ERROR_INSUFFICIENT_PRIVILEGES
 * ..."), no value set; or COUNTERS_NO_CUPTI with why saying what is missing. The library is the one the
 * environment's SWEEP_CUPTI_LIB names when set (the tests' fake, tests/unit/fake_cupti.c), else
 * libcupti.so.13 or libcupti.so on the loader's path; it stays loaded for the life of the process.
 */
int counters_cupti(char *const *names, int n, int gpu, void *cuctx, int (*launch)(void *arg), void *arg,
		   struct result *r, char *why, size_t wn);

#endif
