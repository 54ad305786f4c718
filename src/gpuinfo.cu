/* gpuinfo.cu: facts about one GPU from the CUDA runtime and NVML, for hostinfo_gpu in CUDA builds. */
#include <math.h>
#include <stdio.h>
#include "../kernels/cuda_common.h"
#include "nvml.h"

extern "C" {
#include "hostinfo.h"
}

static void gpuinfo_num(struct json_obj *facts, const char *key, double v)
{
	struct strbuf sb = STRBUF_INIT;

	json_add_num(&sb, v);
	json_obj_add(facts, key, sb.buf, JSON_NUM);
	sb_release(&sb);
}

/* CUDA versions are 1000 * major + 10 * minor: 13000 is "13.0". */
static void gpuinfo_version(struct json_obj *facts, const char *key, int v)
{
	char buf[32];

	snprintf(buf, sizeof(buf), "%d.%d", v / 1000, (v % 1000) / 10);
	json_obj_add(facts, key, buf, JSON_STR);
}

/* What NVML knows and the runtime does not: clocks, power limit, ECC, PCIe link. Only reads. */
static void gpuinfo_nvml(struct json_obj *facts, const char *pci, const char *uuid)
{
	unsigned v, dv, mv, mdv, gen, width;
	void *dev;
	double w;
	int on;

	if (nvml_device(pci, uuid, &dev))
		return;
	if (!nvml_clock(dev, NVML_SM, 1, &v))
		gpuinfo_num(facts, "sm_clock_max_mhz", v);
	if (!nvml_clock(dev, NVML_SM, 0, &v))
		gpuinfo_num(facts, "sm_clock_mhz", v);
	if (!nvml_clock(dev, NVML_MEM, 1, &v))
		gpuinfo_num(facts, "mem_clock_max_mhz", v);
	if (!nvml_clock(dev, NVML_MEM, 0, &v))
		gpuinfo_num(facts, "mem_clock_mhz", v);
	/* Application clocks set by hand (nvidia-smi -ac) differ from their defaults; locked clocks (-lgc) NVML
	 * does not say, so they are not recorded. */
	if (!nvml_app_clock(dev, NVML_SM, 0, &v) && !nvml_app_clock(dev, NVML_SM, 1, &dv) &&
	    !nvml_app_clock(dev, NVML_MEM, 0, &mv) && !nvml_app_clock(dev, NVML_MEM, 1, &mdv)) {
		gpuinfo_num(facts, "sm_app_clock_mhz", v);
		gpuinfo_num(facts, "mem_app_clock_mhz", mv);
		json_obj_add(facts, "app_clocks_set", v != dv || mv != mdv ? "true" : "false", JSON_BOOL);
	}
	if (!nvml_power_limit(dev, &w))
		gpuinfo_num(facts, "power_limit_w", w);
	if (!nvml_ecc(dev, &on))
		json_obj_add(facts, "ecc", on ? "on" : "off", JSON_STR);
	if (!nvml_pcie(dev, &gen, &width)) {
		gpuinfo_num(facts, "pcie_gen", gen);
		gpuinfo_num(facts, "pcie_width", width);
	}
}

extern "C" int gpuinfo_count(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();
		return 0;
	}
	return n;
}

extern "C" int gpuinfo_pci(int gpu, char *buf, size_t n)
{
	if (gpu < 0 || cudaDeviceGetPCIBusId(buf, (int)n, gpu) != cudaSuccess) {
		cudaGetLastError();
		return -1;
	}
	return 0;
}

extern "C" int gpuinfo_collect(struct json_obj *facts, int gpu)
{
	char pci[32] = "", uuid[48], buf[128];
	cudaDeviceProp p;
	int v;

	if (gpu < 0 || gpu >= gpuinfo_count() || cudaGetDeviceProperties(&p, gpu) != cudaSuccess) {
		cudaGetLastError();
		return -1;
	}
	cuda_uuid_string(&p.uuid, uuid, sizeof(uuid));
	json_obj_add(facts, "gpu_name", p.name, JSON_STR);
	json_obj_add(facts, "gpu_uuid", uuid, JSON_STR);
	if (!gpuinfo_pci(gpu, pci, sizeof(pci)))
		json_obj_add(facts, "gpu_pci", pci, JSON_STR);
	else
		pci[0] = '\0';
	gpuinfo_num(facts, "gpu_memory_gb", round(p.totalGlobalMem / 1073741824.0 * 10) / 10);
	gpuinfo_num(facts, "gpu_sms", p.multiProcessorCount);
	gpuinfo_num(facts, "gpu_l2_mb", p.l2CacheSize / 1048576.0);
	snprintf(buf, sizeof(buf), "%d.%d", p.major, p.minor);
	json_obj_add(facts, "gpu_cc", buf, JSON_STR);
	if (!nvml_driver(buf, sizeof(buf)))
		json_obj_add(facts, "driver", buf, JSON_STR);
	else if (cudaDriverGetVersion(&v) == cudaSuccess)
		gpuinfo_version(facts, "driver", v);
	if (cudaDriverGetVersion(&v) == cudaSuccess)
		gpuinfo_version(facts, "cuda_driver", v);
	if (cudaRuntimeGetVersion(&v) == cudaSuccess)
		gpuinfo_version(facts, "cuda_runtime", v);
	gpuinfo_nvml(facts, pci, uuid);
	return 0;
}

/* A sticky error (an illegal address, a trap, a launch failure) poisons the context: the device
 * synchronises with that error, and so does every call after it. */
extern "C" int gpuinfo_broken(char *why, size_t n)
{
	cudaError_t e = cudaDeviceSynchronize();

	if (e == cudaSuccess)
		e = cudaGetLastError();
	if (e == cudaSuccess)
		return 0;
	snprintf(why, n, "cuda: %s", cudaGetErrorString(e));
	return 1;
}
