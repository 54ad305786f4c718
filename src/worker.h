/* worker.h: a worker rank's side of a sweep: the loop that runs the master's cells. */
#ifndef SWEEP_WORKER_H
#define SWEEP_WORKER_H

#include "comm.h"

/* The worker for every sweep of the job (spec, hello, cells until STOP; again after NEXT). Returns 0, 1 when
 * the master went silent (MSG_ORPHAN_SECONDS: the job is gone, the executor was ended), or -1 on a protocol
 * error. */
int worker_run(struct comm *c);
/* One sweep: spec, hello, then cells until STOP (*next = 0) or NEXT (*next = 1). Rank 0's own worker runs
 * one session a sweep on a thread beside the master. 0, 1 (the master silent) or -1, as worker_run. */
int worker_session(struct comm *c, int *next);

#endif
