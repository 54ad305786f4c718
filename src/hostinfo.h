/* hostinfo.h: facts about this host and its GPU, reported by every worker at start. */
#ifndef SWEEP_HOSTINFO_H
#define SWEEP_HOSTINFO_H

#include "json.h"

/* Add hostname, cpu, cores, memory_gb, os, kernel to facts. Never fails (unknown facts are left out). */
void hostinfo_collect(struct json_obj *facts);
/*
 * The conditions a worker starts measuring under, into cond (workers.conditions): of the GPU, those of
 * facts (as hostinfo_gpu filled it) that may change between runs (driver, CUDA, clocks now and application
 * clocks, power limit); of the host, the CPU frequency governor and boost, ASLR, the isolated CPUs and the
 * load average, read from /proc and /sys. What cannot be read is left out (never guessed).
 */
void hostinfo_conditions(const struct json_obj *facts, struct json_obj *cond);
/* Add the facts of GPU gpu (name, uuid, pci, memory, sms, l2, clocks, power limit, ecc, pcie, driver,
 * cuda): from the CUDA runtime and NVML loaded with dlopen. Without CUDA or a driver adds nothing and
 * returns -1. */
int hostinfo_gpu(struct json_obj *facts, int gpu);
/* Number of CUDA devices visible (0 without CUDA or a driver). */
int hostinfo_gpu_count(void);
/* The PCI bus id of CUDA device gpu ("0000:1B:00.0", as cudaDeviceGetPCIBusId writes it) into buf of n
 * bytes; -1 without CUDA, a driver or that device. */
int hostinfo_gpu_pci(int gpu, char *buf, size_t n);
/* After a failed GPU cell: 1 with the reason in why (e.g. "cuda: an illegal memory access was
 * encountered") when the process's CUDA context is left unusable (a sticky error: every later call would
 * fail), else 0. Call it only in a process that ran a GPU cell (it would make a context otherwise);
 * always 0 in a build without CUDA. */
int hostinfo_gpu_broken(char *why, size_t n);

#ifdef SWEEP_CUDA
/* The CUDA side (a .cu file, extern "C"): what hostinfo_gpu and hostinfo_gpu_count return in CUDA builds. */
int gpuinfo_collect(struct json_obj *facts, int gpu);
int gpuinfo_count(void);
int gpuinfo_pci(int gpu, char *buf, size_t n);
int gpuinfo_broken(char *why, size_t n);
#endif

#endif
