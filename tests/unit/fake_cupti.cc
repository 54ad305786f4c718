/*
 * fake_cupti.cc: a fake libcupti for the tests (sweep loads it through SWEEP_CUPTI_LIB, the path it loads
 * CUPTI from): the range profiler's and the host API's entry points sweep calls (src/counters_cupti.cu),
 * over a GPU that does not exist. C++ for the toolkit's header of the host API, as sweep's own side. Each
 * call is appended to the file FAKE_CUPTI_LOG names, one line each ("cuptiRangeProfilerStart = 0"; the
 * metrics asked and the modes set are logged with their calls). Set by the environment:
 *   FAKE_CUPTI_DENY    the entry point that refuses, as a driver that restricts counters to admin users
 *                      answers (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
 *   FAKE_CUPTI_PASSES  the passes a session of user replay takes (default 1), each a Start and a Stop of its
 *                      own; a session of kernel replay takes its passes inside one launch, so its first
 *                      Stop has them all, as the real one's does
 *   FAKE_CUPTI_RANGES  the kernels (ranges) the launch held (default 2)
 * Range i's value of a counter: for a .sum 2147483648 in range 0 and 1000 in the others, for a .pct
 * 10.5 + 10 i, for any other name 7 + i; a name starting "none." has no value (NaN).
 */
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FAKE_IMAGE 64
#define FAKE_MAX_METRICS 32

static struct {
	int metrics, pass;
	int started;                  /* between a Start and its Stop */
	CUpti_ProfilerReplayMode replay;
	char names[FAKE_MAX_METRICS][128];
} fake;

static int env_int(const char *name, int def)
{
	const char *v = getenv(name);

	return v && *v ? atoi(v) : def;
}

static void say(const char *fmt, ...)
{
	const char *path = getenv("FAKE_CUPTI_LOG");
	va_list ap;
	FILE *f;

	if (!path || !(f = fopen(path, "a")))
		return;
	va_start(ap, fmt);
	vfprintf(f, fmt, ap);
	va_end(ap);
	fputc('\n', f);
	fclose(f);
}

/* What fn answers: refused when FAKE_CUPTI_DENY names it, logged either way. */
static CUptiResult answer(const char *fn)
{
	const char *deny = getenv("FAKE_CUPTI_DENY");
	CUptiResult r = deny && !strcmp(deny, fn) ? CUPTI_ERROR_INSUFFICIENT_PRIVILEGES : CUPTI_SUCCESS;

	say("%s = %d", fn, (int)r);
	return r;
}

static double fake_value(const char *name, size_t range)
{
	size_t n = strlen(name);

	if (!strncmp(name, "none.", 5))
		return NAN;
	if (n > 4 && !strcmp(name + n - 4, ".sum"))
		return range ? 1000 : 2147483648.0;
	if (n > 4 && !strcmp(name + n - 4, ".pct"))
		return 10.5 + 10.0 * (double)range;
	return 7 + (double)range;
}

extern "C" {

CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	*str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ?
	       "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES" : result == CUPTI_ERROR_INVALID_OPERATION ?
	       "CUPTI_ERROR_INVALID_OPERATION" : "CUPTI_ERROR_UNKNOWN";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiGetErrorMessage(CUptiResult result, const char **str)
{
	*str = result == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES ?
	       "the fake's refusal: profiling is restricted to admin users\n(a second line)" : "";
	return CUPTI_SUCCESS;
}

CUptiResult cuptiProfilerInitialize(CUpti_Profiler_Initialize_Params *p)
{
	return answer("cuptiProfilerInitialize");
}

CUptiResult cuptiProfilerDeInitialize(CUpti_Profiler_DeInitialize_Params *p)
{
	return answer("cuptiProfilerDeInitialize");
}

CUptiResult cuptiDeviceGetChipName(CUpti_Device_GetChipName_Params *p)
{
	p->pChipName = "GH100";
	return answer("cuptiDeviceGetChipName");
}

CUptiResult cuptiProfilerGetCounterAvailability(CUpti_Profiler_GetCounterAvailability_Params *p)
{
	if (!p->pCounterAvailabilityImage)
		p->counterAvailabilityImageSize = FAKE_IMAGE;
	else
		memset(p->pCounterAvailabilityImage, 1, p->counterAvailabilityImageSize);
	return answer("cuptiProfilerGetCounterAvailability");
}

CUptiResult cuptiProfilerHostInitialize(CUpti_Profiler_Host_Initialize_Params *p)
{
	static int object;

	p->pHostObject = (CUpti_Profiler_Host_Object *)&object;
	say("host: chip %s, range profiler %d", p->pChipName, p->profilerType == CUPTI_PROFILER_TYPE_RANGE_PROFILER);
	return answer("cuptiProfilerHostInitialize");
}

CUptiResult cuptiProfilerHostDeinitialize(CUpti_Profiler_Host_Deinitialize_Params *p)
{
	return answer("cuptiProfilerHostDeinitialize");
}

CUptiResult cuptiProfilerHostConfigAddMetrics(CUpti_Profiler_Host_ConfigAddMetrics_Params *p)
{
	fake.metrics = (int)p->numMetrics < FAKE_MAX_METRICS ? (int)p->numMetrics : FAKE_MAX_METRICS;
	for (int i = 0; i < fake.metrics; i++) {
		snprintf(fake.names[i], sizeof(fake.names[i]), "%s", p->ppMetricNames[i]);
		say("metric %s", fake.names[i]);
	}
	return answer("cuptiProfilerHostConfigAddMetrics");
}

CUptiResult cuptiProfilerHostGetConfigImageSize(CUpti_Profiler_Host_GetConfigImageSize_Params *p)
{
	p->configImageSize = FAKE_IMAGE;
	return answer("cuptiProfilerHostGetConfigImageSize");
}

CUptiResult cuptiProfilerHostGetConfigImage(CUpti_Profiler_Host_GetConfigImage_Params *p)
{
	memset(p->pConfigImage, 2, p->configImageSize);
	return answer("cuptiProfilerHostGetConfigImage");
}

CUptiResult cuptiRangeProfilerEnable(CUpti_RangeProfiler_Enable_Params *p)
{
	static int object;

	p->pRangeProfilerObject = (CUpti_RangeProfiler_Object *)&object;
	fake.pass = fake.started = 0;
	return answer("cuptiRangeProfilerEnable");
}

CUptiResult cuptiRangeProfilerDisable(CUpti_RangeProfiler_Disable_Params *p)
{
	return answer("cuptiRangeProfilerDisable");
}

CUptiResult cuptiRangeProfilerGetCounterDataSize(CUpti_RangeProfiler_GetCounterDataSize_Params *p)
{
	p->counterDataSize = FAKE_IMAGE;
	return answer("cuptiRangeProfilerGetCounterDataSize");
}

CUptiResult cuptiRangeProfilerCounterDataImageInitialize(CUpti_RangeProfiler_CounterDataImage_Initialize_Params *p)
{
	return answer("cuptiRangeProfilerCounterDataImageInitialize");
}

CUptiResult cuptiRangeProfilerSetConfig(CUpti_RangeProfiler_SetConfig_Params *p)
{
	fake.replay = p->replayMode;
	say("config: auto range %d, %s replay, config image %zu bytes", p->range == CUPTI_AutoRange,
	    p->replayMode == CUPTI_KernelReplay ? "kernel" : p->replayMode == CUPTI_UserReplay ? "user" :
	    p->replayMode == CUPTI_ApplicationReplay ? "application" : "unknown", p->configSize);
	return answer("cuptiRangeProfilerSetConfig");
}

/* A Start inside a pass, or a Stop outside one, is refused as the real one refuses it. */
CUptiResult cuptiRangeProfilerStart(CUpti_RangeProfiler_Start_Params *p)
{
	if (fake.started) {
		say("cuptiRangeProfilerStart = %d", (int)CUPTI_ERROR_INVALID_OPERATION);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	fake.started = 1;
	return answer("cuptiRangeProfilerStart");
}

CUptiResult cuptiRangeProfilerStop(CUpti_RangeProfiler_Stop_Params *p)
{
	int passes = fake.replay == CUPTI_UserReplay ? env_int("FAKE_CUPTI_PASSES", 1) : 1;

	if (!fake.started) {
		say("cuptiRangeProfilerStop = %d", (int)CUPTI_ERROR_INVALID_OPERATION);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	fake.started = 0;
	p->passIndex = (size_t)fake.pass;
	p->isAllPassSubmitted = ++fake.pass >= passes;
	return answer("cuptiRangeProfilerStop");
}

/* Refused inside a pass, and before the session has had every pass it asked for. */
CUptiResult cuptiRangeProfilerDecodeData(CUpti_RangeProfiler_DecodeData_Params *p)
{
	int passes = fake.replay == CUPTI_UserReplay ? env_int("FAKE_CUPTI_PASSES", 1) : 1;

	if (fake.started || fake.pass < passes) {
		say("cuptiRangeProfilerDecodeData = %d", (int)CUPTI_ERROR_INVALID_OPERATION);
		return CUPTI_ERROR_INVALID_OPERATION;
	}
	p->numOfRangeDropped = 0;
	return answer("cuptiRangeProfilerDecodeData");
}

CUptiResult cuptiRangeProfilerGetCounterDataInfo(CUpti_RangeProfiler_GetCounterDataInfo_Params *p)
{
	p->numTotalRanges = (size_t)env_int("FAKE_CUPTI_RANGES", 2);
	return answer("cuptiRangeProfilerGetCounterDataInfo");
}

CUptiResult cuptiProfilerHostEvaluateToGpuValues(CUpti_Profiler_Host_EvaluateToGpuValues_Params *p)
{
	for (size_t i = 0; i < p->numMetrics; i++)
		p->pMetricValues[i] = fake_value(p->ppMetricNames[i], p->rangeIndex);
	return answer("cuptiProfilerHostEvaluateToGpuValues");
}

}
