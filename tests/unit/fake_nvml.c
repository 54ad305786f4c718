/*
 * fake_nvml.c: a fake libnvidia-ml.so.1 for the tests (sweep loads it through SWEEP_NVML_LIB, the path it
 * loads NVML from): the few entry points sweep calls, over GPUs that do not exist. Every call that sets or
 * resets a clock, and every refusal, is appended to the file FAKE_NVML_LOG names, one line each:
 * "nvmlDeviceSetGpuLockedClocks 0 1410 1410 = 0" (the call, the GPU's index, its arguments, what it
 * returned). The clocks read back are the last lock the log holds for that GPU (any process's), else the
 * defaults. Set by the environment:
 *   FAKE_NVML_GPUS   how many GPUs (default 2)
 *   FAKE_NVML_DENY   1: locks are refused as NVML refuses a user who is not root (NO_PERMISSION);
 *                    memory: only the memory clock's
 *   FAKE_NVML_WATTS  the constant power the GPUs draw (default 300), behind the energy counter
 * Energy is that power over CLOCK_MONOTONIC's seconds, as NVML's counter in millijoules.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FAKE_MAX 8
#define SM_DEFAULT 1980
#define MEM_DEFAULT 2619
#define SM_BASE 1590
#define TDP 0xffffff01u
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NO_PERMISSION 4
#define NVML_ERROR_NOT_FOUND 6

static int devs[FAKE_MAX];

static int fake_count(void)
{
	const char *v = getenv("FAKE_NVML_GPUS");
	int n = v ? atoi(v) : 2;

	return n < 0 ? 0 : n > FAKE_MAX ? FAKE_MAX : n;
}

static int fake_index(void *dev)
{
	int i = (int *)dev - devs;

	return dev && i >= 0 && i < fake_count() ? i : -1;
}

static void fake_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fake_log(const char *fmt, ...)
{
	const char *path = getenv("FAKE_NVML_LOG");
	char line[256];
	va_list ap;
	int fd, n;

	if (!path)
		return;
	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= (int)sizeof(line) - 1)
		return;
	line[n++] = '\n';
	if ((fd = open(path, O_WRONLY | O_APPEND | O_CREAT, 0644)) < 0)
		return;
	if (write(fd, line, (size_t)n) != n)
		n = 0;
	close(fd);
}

/* The clock GPU i is locked at by the log's last lock or reset of it (set, reset: the calls' names). */
static unsigned fake_locked(int i, const char *set, const char *reset, unsigned deflt)
{
	const char *path = getenv("FAKE_NVML_LOG");
	unsigned v = deflt, lo, hi;
	char call[64], rest[128];
	int gpu, ret;
	FILE *f;

	if (!path || !(f = fopen(path, "r")))
		return deflt;
	while (fscanf(f, "%63s %d %127[^\n]", call, &gpu, rest) == 3) {
		if (gpu != i)
			continue;
		if (!strcmp(call, set) && sscanf(rest, "%u %u = %d", &lo, &hi, &ret) == 3 && !ret)
			v = lo == TDP ? SM_BASE : lo;
		else if (!strcmp(call, reset) && sscanf(rest, "= %d", &ret) == 1 && !ret)
			v = deflt;
	}
	fclose(f);
	return v;
}

int nvmlInit_v2(void)
{
	return 0;
}

int nvmlShutdown(void)
{
	return 0;
}

const char *nvmlErrorString(int ret)
{
	return ret == NVML_ERROR_NO_PERMISSION ? "Insufficient Permissions" :
	       ret == NVML_ERROR_NOT_FOUND ? "Not Found" : "Invalid Argument";
}

int nvmlSystemGetDriverVersion(char *buf, unsigned len)
{
	snprintf(buf, len, "999.0-fake");
	return 0;
}

int nvmlDeviceGetCount_v2(unsigned *n)
{
	*n = (unsigned)fake_count();
	return 0;
}

int nvmlDeviceGetHandleByIndex_v2(unsigned i, void **dev)
{
	if ((int)i >= fake_count())
		return NVML_ERROR_INVALID_ARGUMENT;
	*dev = &devs[i];
	return 0;
}

int nvmlDeviceGetHandleByUUID(const char *uuid, void **dev)
{
	int i;

	if (sscanf(uuid, "GPU-fake-%d", &i) != 1 || i < 0 || i >= fake_count())
		return NVML_ERROR_NOT_FOUND;
	*dev = &devs[i];
	return 0;
}

int nvmlDeviceGetHandleByPciBusId_v2(const char *pci, void **dev)
{
	unsigned i;

	if (sscanf(pci, "0000:%x:00.0", &i) != 1 || (int)i >= fake_count())
		return NVML_ERROR_NOT_FOUND;
	*dev = &devs[i];
	return 0;
}

/* NVML_CLOCK_SM 1, NVML_CLOCK_MEM 2. */
int nvmlDeviceGetClockInfo(void *dev, int type, unsigned *mhz)
{
	int i = fake_index(dev);

	if (i < 0 || (type != 1 && type != 2))
		return NVML_ERROR_INVALID_ARGUMENT;
	*mhz = type == 1 ? fake_locked(i, "nvmlDeviceSetGpuLockedClocks", "nvmlDeviceResetGpuLockedClocks", SM_DEFAULT) :
	       fake_locked(i, "nvmlDeviceSetMemoryLockedClocks", "nvmlDeviceResetMemoryLockedClocks", MEM_DEFAULT);
	return 0;
}

int nvmlDeviceGetMaxClockInfo(void *dev, int type, unsigned *mhz)
{
	if (fake_index(dev) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	*mhz = type == 1 ? SM_DEFAULT : MEM_DEFAULT;
	return 0;
}

int nvmlDeviceGetTotalEnergyConsumption(void *dev, unsigned long long *mj)
{
	const char *w = getenv("FAKE_NVML_WATTS");
	struct timespec t;

	if (fake_index(dev) < 0)
		return NVML_ERROR_INVALID_ARGUMENT;
	clock_gettime(CLOCK_MONOTONIC, &t);
	*mj = (unsigned long long)((w ? atof(w) : 300.0) * (t.tv_sec + t.tv_nsec * 1e-9) * 1e3);
	return 0;
}

static int fake_lock(const char *call, void *dev, unsigned lo, unsigned hi)
{
	const char *deny = getenv("FAKE_NVML_DENY");
	int i = fake_index(dev), ret;

	int denied = deny && (!strcmp(deny, "1") || (!strcmp(deny, "memory") && strstr(call, "Memory")));

	ret = i < 0 ? NVML_ERROR_INVALID_ARGUMENT : denied ? NVML_ERROR_NO_PERMISSION : 0;
	fake_log("%s %d %u %u = %d", call, i, lo, hi, ret);
	return ret;
}

static int fake_reset(const char *call, void *dev)
{
	int i = fake_index(dev), ret = i < 0 ? NVML_ERROR_INVALID_ARGUMENT : 0;

	fake_log("%s %d = %d", call, i, ret);
	return ret;
}

int nvmlDeviceSetGpuLockedClocks(void *dev, unsigned lo, unsigned hi)
{
	return fake_lock("nvmlDeviceSetGpuLockedClocks", dev, lo, hi);
}

int nvmlDeviceSetMemoryLockedClocks(void *dev, unsigned lo, unsigned hi)
{
	return fake_lock("nvmlDeviceSetMemoryLockedClocks", dev, lo, hi);
}

int nvmlDeviceResetGpuLockedClocks(void *dev)
{
	return fake_reset("nvmlDeviceResetGpuLockedClocks", dev);
}

int nvmlDeviceResetMemoryLockedClocks(void *dev)
{
	return fake_reset("nvmlDeviceResetMemoryLockedClocks", dev);
}
