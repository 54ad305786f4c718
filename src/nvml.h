/* nvml.h: the few NVML queries sweep makes, with NVML loaded by dlopen so that no driver is needed. */
#ifndef SWEEP_NVML_H
#define SWEEP_NVML_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Which clock: the values are NVML's own nvmlClockType_t. */
enum nvml_clock { NVML_SM = 1, NVML_MEM = 2 };

/* What nvml_lock takes for the base clock (NVML_CLOCK_LIMIT_ID_TDP, as NVBench locks "base"). */
#define NVML_LOCK_BASE 0xffffff01u

/*
 * Every function returns 0, or -1 when NVML is absent (no driver, no libnvidia-ml.so.1) or the query
 * failed; nothing is printed and outputs are left alone on failure. Safe to call from any thread. None
 * of them changes a setting of the card but nvml_lock and nvml_unlock, which only clocks.c calls (a run's
 * explicit consent, sweep run --lock-clocks, or sweep hosts unlock). A device handle is NVML's own and is
 * never freed.
 */
/* Load the library, once per process, and initialise it; later calls return the first answer. The
 * library is libnvidia-ml.so.1, or the file the environment's SWEEP_NVML_LIB names (the tests' fake,
 * tests/fakes/fake_nvml.c). */
int nvml_open(void);
/* The number of GPUs NVML sees, and the handle of the i-th in NVML's order (not CUDA's: a lock for a rank
 * without a CUDA device, clocks.c). */
int nvml_count(unsigned *n);
int nvml_device_index(unsigned i, void **dev);
/* Lock which clock at mhz (NVML_LOCK_BASE: the base clock; memory takes MHz only), or put back the
 * driver's default (nvml_unlock). -1 with NVML's reason in why, and *denied 1 when the reason is
 * permission (not root). */
int nvml_lock(void *dev, enum nvml_clock which, unsigned mhz, char *why, size_t n, int *denied);
int nvml_unlock(void *dev, enum nvml_clock which, char *why, size_t n);
/* The handle of the GPU at PCI address pci ("0000:1b:00.0", as cudaDeviceGetPCIBusId writes it), else
 * of the GPU whose UUID is uuid ("GPU-xxxxxxxx-..."; either may be NULL): CUDA and NVML number devices
 * differently (CUDA_VISIBLE_DEVICES, ordering), so an index would name the wrong card. */
int nvml_device(const char *pci, const char *uuid, void **dev);
/* The clock now, or its maximum (max != 0), in MHz. */
int nvml_clock(void *dev, enum nvml_clock which, int max, unsigned *mhz);
/* The application clock of which: its target now, or its default (deflt != 0), in MHz (a card or driver
 * without application clocks fails). */
int nvml_app_clock(void *dev, enum nvml_clock which, int deflt, unsigned *mhz);
/* The power limit in force, in watts. */
int nvml_power_limit(void *dev, double *watts);
/* The power the card's controller last read (NVML's instant power field, which an H200 refreshes every
 * 100 ms, when its controller also sets the clock), in watts. */
int nvml_power(void *dev, double *watts);
/* The energy the card has used since the driver loaded (NVML's total energy counter, in millijoules
 * there), in joules; Volta and later. */
int nvml_energy(void *dev, double *joules);
/* Whether a power or thermal limit holds the clocks back now (the clock event reasons software power
 * cap, hardware slowdown, software and hardware thermal slowdown, power brake): *capped 1 or 0. */
int nvml_capped(void *dev, int *capped);
/* ECC mode now: *on is 1 or 0. */
int nvml_ecc(void *dev, int *on);
/* The PCIe link now: generation and width (lanes). */
int nvml_pcie(void *dev, unsigned *gen, unsigned *width);
/* The driver version ("580.159.04") into buf. */
int nvml_driver(char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
