/* nvml.c: NVML through dlopen("libnvidia-ml.so.1"): clocks, power and its limit, energy, ECC, PCIe link,
 * driver version; and the clock locks a run asks for. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include "nvml.h"

/*
 * NVML's own declarations, restated: no NVML header exists on the build machines. Every entry point
 * returns nvmlReturn_t, where 0 is NVML_SUCCESS; handles are pointers to an opaque struct; enable states
 * (ECC) are an int enum where 1 is NVML_FEATURE_ENABLED. The _v2 names are the ones the headers map the
 * plain names to since NVML 5.319.
 */
typedef int (*nvml_init_fn)(void);
typedef int (*nvml_by_pci_fn)(const char *pci, void **dev);
typedef int (*nvml_by_uuid_fn)(const char *uuid, void **dev);
typedef int (*nvml_clock_fn)(void *dev, int type, unsigned *mhz);
typedef int (*nvml_uint_fn)(void *dev, unsigned *v);
typedef int (*nvml_ecc_fn)(void *dev, int *current, int *pending);
typedef int (*nvml_driver_fn)(char *buf, unsigned len);
typedef int (*nvml_reasons_fn)(void *dev, unsigned long long *reasons);
typedef int (*nvml_ull_fn)(void *dev, unsigned long long *v);
typedef int (*nvml_count_fn)(unsigned *n);
typedef int (*nvml_by_index_fn)(unsigned i, void **dev);
typedef int (*nvml_lock_fn)(void *dev, unsigned min_mhz, unsigned max_mhz);
typedef int (*nvml_reset_fn)(void *dev);
typedef const char *(*nvml_error_fn)(int ret);
/* nvmlReturn_t's NVML_ERROR_NO_PERMISSION. */
#define NVML_ERROR_NO_PERMISSION 4
/* nvmlFieldValue_t: the field, its scope, two timestamps, the value's type and the query's return, the
 * value (a union of 8 bytes). */
struct nvml_field {
	unsigned field, scope;
	long long timestamp, latency_us;
	int type, ret;
	union {
		double d;
		unsigned u;
		unsigned long long ull;
	} value;
};
typedef int (*nvml_fields_fn)(void *dev, int n, struct nvml_field *values);
#define NVML_FI_DEV_POWER_INSTANT 186
/* The clock event reasons that are a limit at work: SW power cap, HW slowdown, SW thermal, HW thermal,
 * HW power brake. */
#define NVML_REASONS_CAPPED 0xecULL

static struct {
	int ok;
	nvml_by_pci_fn by_pci;
	nvml_by_uuid_fn by_uuid;
	nvml_clock_fn clock, max_clock, app_clock, app_default;
	nvml_uint_fn power_limit, pcie_gen, pcie_width;
	nvml_ecc_fn ecc;
	nvml_driver_fn driver;
	nvml_reasons_fn reasons;
	nvml_ull_fn energy;
	nvml_fields_fn fields;
	nvml_count_fn count;
	nvml_by_index_fn by_index;
	nvml_lock_fn lock_sm, lock_mem;
	nvml_reset_fn reset_sm, reset_mem;
	nvml_error_fn error;
} nvml;

static pthread_once_t nvml_once = PTHREAD_ONCE_INIT;

/* The library stays loaded for the life of the process: handles and function pointers point into it. */
static void nvml_load(void)
{
	const char *path = getenv("SWEEP_NVML_LIB");
	void *lib = dlopen(path && *path ? path : "libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
	nvml_init_fn init;

	if (!lib)
		return;
	init = (nvml_init_fn)dlsym(lib, "nvmlInit_v2");
	nvml.by_pci = (nvml_by_pci_fn)dlsym(lib, "nvmlDeviceGetHandleByPciBusId_v2");
	nvml.by_uuid = (nvml_by_uuid_fn)dlsym(lib, "nvmlDeviceGetHandleByUUID");
	nvml.clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetClockInfo");
	nvml.max_clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetMaxClockInfo");
	nvml.app_clock = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetApplicationsClock");
	nvml.app_default = (nvml_clock_fn)dlsym(lib, "nvmlDeviceGetDefaultApplicationsClock");
	nvml.power_limit = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetEnforcedPowerLimit");
	nvml.pcie_gen = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetCurrPcieLinkGeneration");
	nvml.pcie_width = (nvml_uint_fn)dlsym(lib, "nvmlDeviceGetCurrPcieLinkWidth");
	nvml.ecc = (nvml_ecc_fn)dlsym(lib, "nvmlDeviceGetEccMode");
	nvml.driver = (nvml_driver_fn)dlsym(lib, "nvmlSystemGetDriverVersion");
	nvml.fields = (nvml_fields_fn)dlsym(lib, "nvmlDeviceGetFieldValues");
	nvml.energy = (nvml_ull_fn)dlsym(lib, "nvmlDeviceGetTotalEnergyConsumption");
	nvml.count = (nvml_count_fn)dlsym(lib, "nvmlDeviceGetCount_v2");
	nvml.by_index = (nvml_by_index_fn)dlsym(lib, "nvmlDeviceGetHandleByIndex_v2");
	nvml.lock_sm = (nvml_lock_fn)dlsym(lib, "nvmlDeviceSetGpuLockedClocks");
	nvml.lock_mem = (nvml_lock_fn)dlsym(lib, "nvmlDeviceSetMemoryLockedClocks");
	nvml.reset_sm = (nvml_reset_fn)dlsym(lib, "nvmlDeviceResetGpuLockedClocks");
	nvml.reset_mem = (nvml_reset_fn)dlsym(lib, "nvmlDeviceResetMemoryLockedClocks");
	nvml.error = (nvml_error_fn)dlsym(lib, "nvmlErrorString");
	nvml.reasons = (nvml_reasons_fn)dlsym(lib, "nvmlDeviceGetCurrentClocksEventReasons");
	if (!nvml.reasons)   /* its name before NVML 12.2 */
		nvml.reasons = (nvml_reasons_fn)dlsym(lib, "nvmlDeviceGetCurrentClocksThrottleReasons");
	/* Init and the handle lookups are what everything else needs; the rest may be missing one by one. */
	if (!init || (!nvml.by_pci && !nvml.by_uuid) || init() != 0) {
		dlclose(lib);
		return;
	}
	nvml.ok = 1;
}

int nvml_open(void)
{
	pthread_once(&nvml_once, nvml_load);
	return nvml.ok ? 0 : -1;
}

int nvml_device(const char *pci, const char *uuid, void **dev)
{
	void *d = NULL;

	if (nvml_open())
		return -1;
	if (pci && *pci && nvml.by_pci && nvml.by_pci(pci, &d) == 0 && d) {
		*dev = d;
		return 0;
	}
	if (uuid && *uuid && nvml.by_uuid && nvml.by_uuid(uuid, &d) == 0 && d) {
		*dev = d;
		return 0;
	}
	return -1;
}

static int clock_of(nvml_clock_fn fn, void *dev, enum nvml_clock which, unsigned *mhz)
{
	unsigned v;

	if (!nvml.ok || !dev || !fn || fn(dev, (int)which, &v) != 0)
		return -1;
	*mhz = v;
	return 0;
}

int nvml_clock(void *dev, enum nvml_clock which, int max, unsigned *mhz)
{
	return clock_of(max ? nvml.max_clock : nvml.clock, dev, which, mhz);
}

int nvml_app_clock(void *dev, enum nvml_clock which, int deflt, unsigned *mhz)
{
	return clock_of(deflt ? nvml.app_default : nvml.app_clock, dev, which, mhz);
}

int nvml_power_limit(void *dev, double *watts)
{
	unsigned mw;

	if (!nvml.ok || !dev || !nvml.power_limit || nvml.power_limit(dev, &mw) != 0)
		return -1;
	*watts = mw / 1000.0;
	return 0;
}

int nvml_power(void *dev, double *watts)
{
	struct nvml_field f = { .field = NVML_FI_DEV_POWER_INSTANT };

	if (!nvml.ok || !dev || !nvml.fields || nvml.fields(dev, 1, &f) != 0 || f.ret != 0)
		return -1;
	*watts = f.value.u / 1000.0;
	return 0;
}

int nvml_energy(void *dev, double *joules)
{
	unsigned long long mj;

	if (!nvml.ok || !dev || !nvml.energy || nvml.energy(dev, &mj) != 0)
		return -1;
	*joules = mj / 1000.0;
	return 0;
}

int nvml_capped(void *dev, int *capped)
{
	unsigned long long r;

	if (!nvml.ok || !dev || !nvml.reasons || nvml.reasons(dev, &r) != 0)
		return -1;
	*capped = (r & NVML_REASONS_CAPPED) != 0;
	return 0;
}

int nvml_ecc(void *dev, int *on)
{
	int cur, pending;

	if (!nvml.ok || !dev || !nvml.ecc || nvml.ecc(dev, &cur, &pending) != 0)
		return -1;
	*on = cur == 1;
	return 0;
}

int nvml_pcie(void *dev, unsigned *gen, unsigned *width)
{
	unsigned g, w;

	if (!nvml.ok || !dev || !nvml.pcie_gen || !nvml.pcie_width || nvml.pcie_gen(dev, &g) != 0 ||
	    nvml.pcie_width(dev, &w) != 0)
		return -1;
	*gen = g;
	*width = w;
	return 0;
}

int nvml_driver(char *buf, size_t n)
{
	char v[96];

	if (nvml_open() || !nvml.driver || nvml.driver(v, sizeof(v)) != 0 || !n)
		return -1;
	v[sizeof(v) - 1] = '\0';
	snprintf(buf, n, "%s", v);
	return 0;
}

int nvml_count(unsigned *n)
{
	unsigned v;

	if (nvml_open() || !nvml.count || nvml.count(&v) != 0)
		return -1;
	*n = v;
	return 0;
}

int nvml_device_index(unsigned i, void **dev)
{
	void *d = NULL;

	if (nvml_open() || !nvml.by_index || nvml.by_index(i, &d) != 0 || !d)
		return -1;
	*dev = d;
	return 0;
}

/* NVML's answer ret (not success) in words into why. */
static int nvml_why(int ret, char *why, size_t n)
{
	const char *s = nvml.error ? nvml.error(ret) : NULL;

	if (s)
		snprintf(why, n, "%s", s);
	else
		snprintf(why, n, "NVML error %d", ret);
	return -1;
}

int nvml_lock(void *dev, enum nvml_clock which, unsigned mhz, char *why, size_t n, int *denied)
{
	nvml_lock_fn fn = which == NVML_SM ? nvml.lock_sm : nvml.lock_mem;
	int ret;

	*denied = 0;
	if (!nvml.ok || !dev || !fn) {
		snprintf(why, n, "this driver's NVML cannot lock the %s clock", which == NVML_SM ? "SM" : "memory");
		return -1;
	}
	if ((ret = fn(dev, mhz, mhz)) == 0)
		return 0;
	*denied = ret == NVML_ERROR_NO_PERMISSION;
	return nvml_why(ret, why, n);
}

int nvml_unlock(void *dev, enum nvml_clock which, char *why, size_t n)
{
	nvml_reset_fn fn = which == NVML_SM ? nvml.reset_sm : nvml.reset_mem;
	int ret;

	if (!nvml.ok || !dev || !fn) {
		snprintf(why, n, "this driver's NVML cannot reset the %s clock", which == NVML_SM ? "SM" : "memory");
		return -1;
	}
	return (ret = fn(dev)) == 0 ? 0 : nvml_why(ret, why, n);
}
