/* hostinfo.c: facts about this host (and, in CUDA builds, its GPUs) that every worker reports at start. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include "hostinfo.h"

/* The value of the first line of path that starts with key (after "key" and the separator sep), trimmed,
 * into buf; 0, or -1 when the file or the key is missing. */
static int hostinfo_field(const char *path, const char *key, char sep, char *buf, size_t n)
{
	char line[1024], *v, *end;
	size_t len = strlen(key);
	FILE *f = fopen(path, "r");
	int ret = -1;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, len))
			continue;
		v = line + len;
		while (*v == ' ' || *v == '\t')
			v++;
		if (*v != sep)
			continue;
		v++;
		while (isspace((unsigned char)*v))
			v++;
		end = v + strlen(v);
		while (end > v && isspace((unsigned char)end[-1]))
			end--;
		if (end - v >= 2 && *v == '"' && end[-1] == '"') {
			v++;
			end--;
		}
		snprintf(buf, n, "%.*s", (int)(end - v), v);
		ret = 0;
		break;
	}
	fclose(f);
	return ret;
}

void hostinfo_collect(struct json_obj *facts)
{
	char buf[1024], num[64];
	struct utsname u;
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	double kb;

	if (!gethostname(buf, sizeof(buf))) {
		buf[sizeof(buf) - 1] = '\0';
		json_obj_add(facts, "hostname", buf, JSON_STR);
	}
	/* x86 says "model name"; arm64 kernels may give no model at all: fall back to the part number. */
	if (!hostinfo_field("/proc/cpuinfo", "model name", ':', buf, sizeof(buf)) ||
	    !hostinfo_field("/proc/cpuinfo", "Model", ':', buf, sizeof(buf)) ||
	    !hostinfo_field("/proc/cpuinfo", "CPU part", ':', buf, sizeof(buf)))
		json_obj_add(facts, "cpu", buf, JSON_STR);
	if (cores > 0) {
		snprintf(num, sizeof(num), "%ld", cores);
		json_obj_add(facts, "cores", num, JSON_NUM);
	}
	if (!hostinfo_field("/proc/meminfo", "MemTotal", ':', buf, sizeof(buf)) &&
	    sscanf(buf, "%lf", &kb) == 1) {
		snprintf(num, sizeof(num), "%.1f", kb / (1024.0 * 1024.0));
		json_obj_add(facts, "memory_gb", num, JSON_NUM);
	}
	if (!hostinfo_field("/etc/os-release", "PRETTY_NAME", '=', buf, sizeof(buf)))
		json_obj_add(facts, "os", buf, JSON_STR);
	if (!uname(&u)) {
		snprintf(buf, sizeof(buf), "%s %s %s", u.sysname, u.release, u.machine);
		json_obj_add(facts, "kernel", buf, JSON_STR);
	}
}

/* The first line of path, trimmed, into buf; 0, or -1 when it cannot be read. */
static int hostinfo_line(const char *path, char *buf, size_t n)
{
	FILE *f = fopen(path, "r");
	size_t len;

	if (!f)
		return -1;
	if (!fgets(buf, (int)n, f))
		buf[0] = '\0';
	fclose(f);
	len = strlen(buf);
	while (len && isspace((unsigned char)buf[len - 1]))
		buf[--len] = '\0';
	return 0;
}

void hostinfo_conditions(const struct json_obj *facts, struct json_obj *cond)
{
	static const char *const gpu_keys[] = {
		"driver", "cuda_driver", "cuda_runtime", "sm_clock_mhz", "mem_clock_mhz", "sm_app_clock_mhz",
		"mem_app_clock_mhz", "app_clocks_set", "power_limit_w",
	};
	char buf[512];
	double load;
	int v;

	for (size_t i = 0; i < ARRAY_SIZE(gpu_keys); i++) {
		const struct json_pair *p = json_obj_find(facts, gpu_keys[i]);

		if (p)
			json_obj_add(cond, p->key, p->val, p->type);
	}
	if (!hostinfo_line("/sys/devices/system/cpu/cpufreq/policy0/scaling_governor", buf, sizeof(buf)) ||
	    !hostinfo_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", buf, sizeof(buf)))
		json_obj_add(cond, "cpu_governor", buf, JSON_STR);
	/* acpi-cpufreq says whether boost is on; intel_pstate says whether turbo is off. */
	if (!hostinfo_line("/sys/devices/system/cpu/cpufreq/boost", buf, sizeof(buf)) && sscanf(buf, "%d", &v) == 1)
		json_obj_add(cond, "cpu_boost", v ? "true" : "false", JSON_BOOL);
	else if (!hostinfo_line("/sys/devices/system/cpu/intel_pstate/no_turbo", buf, sizeof(buf)) &&
		 sscanf(buf, "%d", &v) == 1)
		json_obj_add(cond, "cpu_boost", v ? "false" : "true", JSON_BOOL);
	if (!hostinfo_line("/proc/sys/kernel/randomize_va_space", buf, sizeof(buf)) && sscanf(buf, "%d", &v) == 1) {
		snprintf(buf, sizeof(buf), "%d", v);
		json_obj_add(cond, "aslr", buf, JSON_NUM);
	}
	if (!hostinfo_line("/sys/devices/system/cpu/isolated", buf, sizeof(buf)))
		json_obj_add(cond, "isolated_cpus", buf, JSON_STR);
	if (!hostinfo_line("/proc/loadavg", buf, sizeof(buf)) && sscanf(buf, "%lf", &load) == 1) {
		snprintf(buf, sizeof(buf), "%.2f", load);
		json_obj_add(cond, "loadavg", buf, JSON_NUM);
	}
}

#ifdef SWEEP_CUDA
int hostinfo_gpu(struct json_obj *facts, int gpu)
{
	return gpuinfo_collect(facts, gpu);
}

int hostinfo_gpu_count(void)
{
	return gpuinfo_count();
}

int hostinfo_gpu_pci(int gpu, char *buf, size_t n)
{
	return gpuinfo_pci(gpu, buf, n);
}

int hostinfo_gpu_broken(char *why, size_t n)
{
	return gpuinfo_broken(why, n);
}
#else
int hostinfo_gpu(struct json_obj *facts, int gpu)
{
	return -1;
}

int hostinfo_gpu_count(void)
{
	return 0;
}

int hostinfo_gpu_pci(int gpu, char *buf, size_t n)
{
	return -1;
}

int hostinfo_gpu_broken(char *why, size_t n)
{
	return 0;
}
#endif
