/* counters_cupti.cu: a spec's counters: read in process through CUPTI's range profiler and its host API
 * (libcupti by dlopen), over untimed launches of a kernel cell, one a pass (user replay). C++ for the host API's header alone (it
 * includes <string>); no device code. Without CUDA, counters.c answers for it. */
#include <dlfcn.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
extern "C" {
#include "counters.h"
#include "counters_cupti.h"
#include "util.h"
}

#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>

/* Kernels one launch may hold (one range each, automatic ranges): more are dropped, and a dropped range
 * makes the pass fail rather than sum part of the launch. */
#define CUPTI_MAX_RANGES 256
/* User replay takes one launch a pass; a session that asks for more launches than this is stuck. */
#define CUPTI_MAX_PASSES 64

/* The entry points used, each as p_ and its own name, of the type the toolkit's headers declare. */
#define CUPTI_FN(f) decltype(&::f) p_##f
static struct {
	int ok;
	char why[256];
	CUPTI_FN(cuptiGetResultString);
	CUPTI_FN(cuptiGetErrorMessage);   /* may be missing: the result's name alone */
	CUPTI_FN(cuptiProfilerInitialize);
	CUPTI_FN(cuptiProfilerDeInitialize);
	CUPTI_FN(cuptiDeviceGetChipName);
	CUPTI_FN(cuptiProfilerGetCounterAvailability);
	CUPTI_FN(cuptiProfilerHostInitialize);
	CUPTI_FN(cuptiProfilerHostDeinitialize);
	CUPTI_FN(cuptiProfilerHostConfigAddMetrics);
	CUPTI_FN(cuptiProfilerHostGetConfigImageSize);
	CUPTI_FN(cuptiProfilerHostGetConfigImage);
	CUPTI_FN(cuptiProfilerHostEvaluateToGpuValues);
	CUPTI_FN(cuptiRangeProfilerEnable);
	CUPTI_FN(cuptiRangeProfilerDisable);
	CUPTI_FN(cuptiRangeProfilerGetCounterDataSize);
	CUPTI_FN(cuptiRangeProfilerCounterDataImageInitialize);
	CUPTI_FN(cuptiRangeProfilerSetConfig);
	CUPTI_FN(cuptiRangeProfilerStart);
	CUPTI_FN(cuptiRangeProfilerStop);
	CUPTI_FN(cuptiRangeProfilerDecodeData);
	CUPTI_FN(cuptiRangeProfilerGetCounterDataInfo);
} cupti;

static pthread_once_t cupti_once = PTHREAD_ONCE_INIT;

#define CUPTI_SYM(lib, f) (cupti.p_##f = (decltype(&::f))dlsym(lib, #f))

static void cupti_load(void)
{
	const char *path = getenv("SWEEP_CUPTI_LIB");
	const char *tries[] = { path && *path ? path : "libcupti.so.13", path && *path ? NULL : "libcupti.so" };
	void *lib = NULL;

	for (size_t i = 0; !lib && i < 2 && tries[i]; i++)
		lib = dlopen(tries[i], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		snprintf(cupti.why, sizeof(cupti.why), "no CUPTI library: %s", dlerror());
		return;
	}
	CUPTI_SYM(lib, cuptiGetErrorMessage);
	if (!CUPTI_SYM(lib, cuptiGetResultString) || !CUPTI_SYM(lib, cuptiProfilerInitialize) ||
	    !CUPTI_SYM(lib, cuptiProfilerDeInitialize) || !CUPTI_SYM(lib, cuptiDeviceGetChipName) ||
	    !CUPTI_SYM(lib, cuptiProfilerGetCounterAvailability) || !CUPTI_SYM(lib, cuptiProfilerHostInitialize) ||
	    !CUPTI_SYM(lib, cuptiProfilerHostDeinitialize) || !CUPTI_SYM(lib, cuptiProfilerHostConfigAddMetrics) ||
	    !CUPTI_SYM(lib, cuptiProfilerHostGetConfigImageSize) || !CUPTI_SYM(lib, cuptiProfilerHostGetConfigImage) ||
	    !CUPTI_SYM(lib, cuptiProfilerHostEvaluateToGpuValues) || !CUPTI_SYM(lib, cuptiRangeProfilerEnable) ||
	    !CUPTI_SYM(lib, cuptiRangeProfilerDisable) || !CUPTI_SYM(lib, cuptiRangeProfilerGetCounterDataSize) ||
	    !CUPTI_SYM(lib, cuptiRangeProfilerCounterDataImageInitialize) ||
	    !CUPTI_SYM(lib, cuptiRangeProfilerSetConfig) || !CUPTI_SYM(lib, cuptiRangeProfilerStart) ||
	    !CUPTI_SYM(lib, cuptiRangeProfilerStop) || !CUPTI_SYM(lib, cuptiRangeProfilerDecodeData) ||
	    !CUPTI_SYM(lib, cuptiRangeProfilerGetCounterDataInfo)) {
		snprintf(cupti.why, sizeof(cupti.why), "the CUPTI library has no range profiler (CUDA 13's): %s",
			 dlerror());
		dlclose(lib);
		return;
	}
	cupti.ok = 1;
}

/* 0 when ret is CUPTI_SUCCESS; else -1, why saying which call answered what, in CUPTI's own words. */
static int cupti_check(const char *call, CUptiResult ret, char *why, size_t wn)
{
	const char *name = NULL, *msg = NULL;

	if (ret == CUPTI_SUCCESS)
		return 0;
	if (cupti.p_cuptiGetResultString(ret, &name) != CUPTI_SUCCESS || !name)
		name = "an unknown result";
	if (cupti.p_cuptiGetErrorMessage && (cupti.p_cuptiGetErrorMessage(ret, &msg) != CUPTI_SUCCESS ||
					   (msg && !strcmp(msg, name))))
		msg = NULL;
	snprintf(why, wn, "%s: %s (%d)%s%.*s", call, name, (int)ret, msg && *msg ? ": " : "",
		 msg ? (int)strcspn(msg, "\r\n") : 0, msg ? msg : "");
	return -1;
}

#define CALL(f, p) cupti_check(#f, cupti.p_##f(p), why, wn)

/* One pass's images: the configuration (which counters) and the counter data (their values a range). */
struct cupti_pass {
	CUpti_Profiler_Host_Object *host;
	CUpti_RangeProfiler_Object *rp;
	uint8_t *avail, *config, *data;
	size_t config_size, data_size;
};

/* A CUPTI parameter struct called v, zeroed, its size set (CUPTI reads the size as the struct's version). */
#define PARAMS(T, v) \
	T v = {}; \
	v.structSize = T##_STRUCT_SIZE

/* The configuration image of names for gpu's chip, with the counters its context makes available. */
static int cupti_config(struct cupti_pass *ps, const char **names, int n, int gpu, void *cuctx, char *why,
			size_t wn)
{
	PARAMS(CUpti_Device_GetChipName_Params, chip);
	PARAMS(CUpti_Profiler_GetCounterAvailability_Params, av);
	PARAMS(CUpti_Profiler_Host_Initialize_Params, hi);
	PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params, add);
	PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params, cs);
	PARAMS(CUpti_Profiler_Host_GetConfigImage_Params, ci);

	chip.deviceIndex = (size_t)(gpu < 0 ? 0 : gpu);
	av.ctx = (CUcontext)cuctx;
	if (CALL(cuptiDeviceGetChipName, &chip) || CALL(cuptiProfilerGetCounterAvailability, &av))
		return -1;
	ps->avail = (uint8_t *)xcalloc(av.counterAvailabilityImageSize + 1, 1);
	av.pCounterAvailabilityImage = ps->avail;
	if (CALL(cuptiProfilerGetCounterAvailability, &av))
		return -1;
	hi.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
	hi.pChipName = chip.pChipName;
	hi.pCounterAvailabilityImage = ps->avail;
	if (CALL(cuptiProfilerHostInitialize, &hi))
		return -1;
	ps->host = add.pHostObject = cs.pHostObject = ci.pHostObject = hi.pHostObject;
	add.ppMetricNames = names;
	add.numMetrics = (size_t)n;
	if (CALL(cuptiProfilerHostConfigAddMetrics, &add) || CALL(cuptiProfilerHostGetConfigImageSize, &cs))
		return -1;
	ps->config_size = ci.configImageSize = cs.configImageSize;
	ps->config = ci.pConfigImage = (uint8_t *)xcalloc(cs.configImageSize + 1, 1);
	return CALL(cuptiProfilerHostGetConfigImage, &ci);
}

/* Before (outside the session), start, launch, stop: once a pass, until CUPTI has every pass (user replay:
 * the launch runs again a pass, its memory not restored between them). */
static int cupti_passes(CUpti_RangeProfiler_Object *rp, const struct counters_launch *l, char *why, size_t wn)
{
	PARAMS(CUpti_RangeProfiler_Start_Params, st);
	PARAMS(CUpti_RangeProfiler_Stop_Params, sp);
	int passes = 0;

	st.pRangeProfilerObject = sp.pRangeProfilerObject = rp;
	do {
		if ((l->before && l->before(l->arg, why, wn)) || CALL(cuptiRangeProfilerStart, &st))
			return -1;
		if (l->launch(l->arg, why, wn)) {
			cupti.p_cuptiRangeProfilerStop(&sp);
			return -1;
		}
		if (CALL(cuptiRangeProfilerStop, &sp))
			return -1;
	} while (!sp.isAllPassSubmitted && ++passes < CUPTI_MAX_PASSES);
	if (!sp.isAllPassSubmitted) {
		snprintf(why, wn, "CUPTI asked for more than %d passes", CUPTI_MAX_PASSES);
		return -1;
	}
	return 0;
}

/* The range profiler on cuctx, the counter data image for names, the passes, and the data decoded. */
static int cupti_collect(struct cupti_pass *ps, const char **names, int n, void *cuctx,
			 const struct counters_launch *l, char *why, size_t wn)
{
	PARAMS(CUpti_RangeProfiler_Enable_Params, en);
	PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params, ds);
	PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params, di);
	PARAMS(CUpti_RangeProfiler_SetConfig_Params, sc);
	PARAMS(CUpti_RangeProfiler_DecodeData_Params, dd);

	en.ctx = (CUcontext)cuctx;
	if (CALL(cuptiRangeProfilerEnable, &en))
		return -1;
	ps->rp = ds.pRangeProfilerObject = di.pRangeProfilerObject = en.pRangeProfilerObject;
	sc.pRangeProfilerObject = dd.pRangeProfilerObject = en.pRangeProfilerObject;
	ds.pMetricNames = names;
	ds.numMetrics = (size_t)n;
	ds.maxNumOfRanges = CUPTI_MAX_RANGES;
	ds.maxNumRangeTreeNodes = CUPTI_MAX_RANGES;
	if (CALL(cuptiRangeProfilerGetCounterDataSize, &ds))
		return -1;
	ps->data_size = di.counterDataSize = sc.counterDataImageSize = ds.counterDataSize;
	ps->data = di.pCounterData = sc.pCounterDataImage = (uint8_t *)xcalloc(ds.counterDataSize + 1, 1);
	sc.configSize = ps->config_size;
	sc.pConfig = ps->config;
	sc.range = CUPTI_AutoRange;
	sc.replayMode = CUPTI_UserReplay;   /* not kernel replay: the header says why */
	sc.maxRangesPerPass = CUPTI_MAX_RANGES;
	sc.numNestingLevels = 1;
	sc.minNestingLevel = 1;
	sc.targetNestingLevel = 1;
	if (CALL(cuptiRangeProfilerCounterDataImageInitialize, &di) || CALL(cuptiRangeProfilerSetConfig, &sc) ||
	    cupti_passes(ps->rp, l, why, wn) || CALL(cuptiRangeProfilerDecodeData, &dd))
		return -1;
	if (dd.numOfRangeDropped) {
		snprintf(why, wn, "CUPTI dropped %zu of the launch's kernels (more than %d): none kept",
			 dd.numOfRangeDropped, CUPTI_MAX_RANGES);
		return -1;
	}
	return 0;
}

/* Each range's values, folded over the ranges into r. */
static int cupti_evaluate(struct cupti_pass *ps, char *const *names, int n, struct result *r, char *why,
			  size_t wn)
{
	PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params, info);
	PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params, ev);
	struct counter_sum *sum = (struct counter_sum *)xcalloc((size_t)n, sizeof(*sum));
	double *v = (double *)xcalloc((size_t)n, sizeof(*v));
	int ret = -1;

	info.pCounterDataImage = ev.pCounterDataImage = ps->data;
	info.counterDataImageSize = ev.counterDataImageSize = ps->data_size;
	ev.pHostObject = ps->host;
	ev.ppMetricNames = (const char **)names;
	ev.numMetrics = (size_t)n;
	ev.pMetricValues = v;
	if (CALL(cuptiRangeProfilerGetCounterDataInfo, &info))
		goto out;
	for (size_t i = 0; i < info.numTotalRanges; i++) {
		ev.rangeIndex = i;
		if (CALL(cuptiProfilerHostEvaluateToGpuValues, &ev))
			goto out;
		for (int j = 0; j < n; j++)
			if (!isnan(v[j]))   /* a counter this range has no value of */
				counters_fold(names[j], &sum[j], v[j]);
	}
	if (!info.numTotalRanges)
		snprintf(why, wn, "CUPTI profiled no kernel in the launch");
	else if (counters_set(names, n, sum, r) > 0)
		ret = 0;
	else
		snprintf(why, wn, "CUPTI gave no value of the counters asked");
out:
	free(sum);
	free(v);
	return ret;
}

/* The range profiler and the host object made for the pass, then the profiler itself. */
static void cupti_end(struct cupti_pass *ps)
{
	PARAMS(CUpti_RangeProfiler_Disable_Params, off);
	PARAMS(CUpti_Profiler_Host_Deinitialize_Params, hd);
	PARAMS(CUpti_Profiler_DeInitialize_Params, de);

	if (ps->rp) {
		off.pRangeProfilerObject = ps->rp;
		cupti.p_cuptiRangeProfilerDisable(&off);
	}
	if (ps->host) {
		hd.pHostObject = ps->host;
		cupti.p_cuptiProfilerHostDeinitialize(&hd);
	}
	/* The profiler's hooks in the driver go with it: the cells after this one are timed without them. */
	cupti.p_cuptiProfilerDeInitialize(&de);
	free(ps->avail);
	free(ps->config);
	free(ps->data);
}

extern "C" int counters_cupti(char *const *names, int n, int gpu, void *cuctx, const struct counters_launch *l,
			      struct result *r, char *why, size_t wn)
{
	PARAMS(CUpti_Profiler_Initialize_Params, in);
	struct cupti_pass ps;
	int ret = -1;

	pthread_once(&cupti_once, cupti_load);
	if (!cupti.ok) {
		snprintf(why, wn, "%s", cupti.why);
		return COUNTERS_NO_CUPTI;
	}
	memset(&ps, 0, sizeof(ps));
	if (CALL(cuptiProfilerInitialize, &in))
		return -1;
	if (!cupti_config(&ps, (const char **)names, n, gpu, cuctx, why, wn) &&
	    !cupti_collect(&ps, (const char **)names, n, cuctx, l, why, wn))
		ret = cupti_evaluate(&ps, names, n, r, why, wn);
	cupti_end(&ps);
	return ret;
}
