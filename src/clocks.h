/* clocks.h: the GPU clocks a run locks on request (a spec's clocks:, consented to by sweep run
 * --lock-clocks), what they reached, and putting the driver's defaults back. */
#ifndef SWEEP_CLOCKS_H
#define SWEEP_CLOCKS_H

#include <stddef.h>
#include "json.h"
#include "result.h"
#include "spec.h"
#include "util.h"

/* What one process locked: the worker's, put back at its end (clocks_restore). Nothing to free. */
struct clocks_held {
	void *dev;             /* NVML's handle; NULL: nothing locked */
	int sm, mem;           /* 1: this process locked that clock */
	char gpu[64];          /* the GPU, for messages */
};

/*
 * The NVML device of a worker's GPU: the one whose UUID is uuid (its executor's CUDA device, "" or NULL
 * when it has none), else the local_rank-th NVML device, modulo their count: a build without CUDA runs
 * only CPU cells, and a lock asked for is still the worker's to take and to put back. Its name for
 * messages into name. -1 after error().
 */
int clocks_device(const char *uuid, int local_rank, void **dev, char *name, size_t n);
/* Why no clock may be locked or reset on this machine (the environment's SWEEP_NO_LOCK_CLOCKS, set and
 * not 0: the GPU checks set it), else NULL. */
const char *clocks_forbidden(void);
/*
 * Whether spec s (read from path) may run with lock (--lock-clocks given: 1) as sweep run, launch and
 * submit check it before anything starts: clocks: needs the consent, and the consent is refused where
 * clocks_forbidden says so. FAIL_OK, or FAIL_USAGE after error() saying which.
 */
int clocks_consent(const struct spec *s, const char *path, int lock);
/*
 * Lock dev's clocks at what s asks (sm first, then memory), recording each in h; -1 after error() that
 * says why (without root or the driver's permission: that), with what was already locked put back.
 */
int clocks_lock(const struct spec *s, void *dev, const char *name, struct clocks_held *h);
/*
 * A worker's start, between its executor's hello (hello, msg.h's encoding) and its first cell: lock the
 * clocks s asks for (nothing when none) on the executor's GPU, else the local rank's NVML device, and add
 * what was asked and reached to the conditions the hello carries (rewritten in place). 0, or -1 after
 * error() with nothing locked.
 */
int clocks_worker_start(const struct spec *s, struct strbuf *hello, struct clocks_held *h);
/* Put back the driver's defaults for what h locked, once (h is cleared); nothing when nothing was locked.
 * A failure is a warning: there is nothing more to do about it here (sweep hosts unlock, by hand). */
void clocks_restore(struct clocks_held *h);
/* Put back both clocks of dev whatever locked them (sweep hosts unlock): 0, or -1 after error(). */
int clocks_reset(void *dev, const char *name);
/*
 * What s asked and what NVML reads on dev now (NULL: nothing read), as JSON pairs added to o: lock_sm (MHz;
 * "base" where as_text, else absent for base), lock_mem (MHz), locked_sm and locked_mem (NVML's clocks
 * now). Nothing when s asks for no clock.
 */
void clocks_describe(const struct spec *s, void *dev, int as_text, struct json_obj *o);
/* The same as metrics of r (numbers only). */
void clocks_result(const struct spec *s, void *dev, struct result *r);

#endif
