/* probe.h: `sweep hosts probe`: measured ceilings of every GPU and host of the job, into probes. */
#ifndef SWEEP_PROBE_H
#define SWEEP_PROBE_H

#include "comm.h"

/*
 * Rank 0's side: each probe as a sweep of its own (GPU probes when gpus > 0 and the build has CUDA; the
 * host probe always), the job's workers kept between them, each ok result copied into the probes table
 * of db. read_bytes: the host read probe's buffer (0: 1 GiB, past any last-level cache; less only where
 * many ranks share one machine, as tests do). args is the command line recorded in runs. The other ranks
 * run run_worker(). Returns FAIL_OK, FAIL_CELLS when a probe left cells not ok, or another kind of failure
 * (exitcode.h) after error().
 */
int probe_run(struct comm *c, const char *db, int gpus, double read_bytes, const char *args);

#endif
