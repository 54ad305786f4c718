/* slurm_int.h: what slurm.c lends slurm_resume.c: a job's states as Slurm gives them, and whether a
 * database's slurm_jobs has its command column. */
#ifndef SWEEP_SLURM_INT_H
#define SWEEP_SLURM_INT_H

#include <stdint.h>
#include "store.h"
#include "util.h"

/* The states Slurm gives for job id (array tasks each), e.g. "RUNNING" or "5_0 COMPLETED, 5_1 RUNNING",
 * appended to out; "unknown to Slurm now (ended long ago?)" when it says nothing. */
void slurm_job_state(const char *id, struct strbuf *out);
/* Whether slurm_jobs has its command column (a table made before it was added has not) into *have. 0 or
 * -1 after error(). */
int slurm_has_command(struct store *st, uint64_t *have);

#endif
