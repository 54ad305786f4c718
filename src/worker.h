/* worker.h: a worker rank's side of a sweep: the loop that runs the master's cells. */
#ifndef SWEEP_WORKER_H
#define SWEEP_WORKER_H

#include "comm.h"

/* A worker sends its results together when they come fast: at most this long after the first unsent
 * one, and at most this many in one message. */
#define RESULTS_SECONDS 0.0005
#define RESULTS_MAX 256

/*
 * Whether a worker sends the results it holds now, after a cell of wall seconds: short cells' results go
 * back together, when the last cell of the master's message is done (the worker would wait for more
 * otherwise), once the oldest has waited RESULTS_SECONDS, or RESULTS_MAX at a time. A long cell's result
 * (wall >= RESULTS_SECONDS) goes at once: held until the next cell ends, it would keep the master from
 * sending the cell after that one in time, and the prefetch would turn into stop-and-wait.
 */
int worker_results_due(int last_of_batch, double wall, double waited, int count);

/* The worker for every sweep of the job (spec, hello, cells until STOP; again after NEXT). Returns 0, or -1
 * on a protocol error. */
int worker_run(struct comm *c);
/* One sweep: spec, hello, then cells until STOP (*next = 0) or NEXT (*next = 1). Rank 0's own worker runs
 * one session a sweep on a thread beside the master. 0, or -1 on a protocol error. */
int worker_session(struct comm *c, int *next);

#endif
