/* status.h: what a database says about its sweeps: cells by state, the latest run and its workers, the
 * failures, Slurm jobs; and the one-line JSON of totals that `sweep status --hosts` reads over ssh. */
#ifndef SWEEP_STATUS_H
#define SWEEP_STATUS_H

#include "store.h"
#include "util.h"

/* Print the status tables of st on stdout. Returns 0, or -1 on an SQL error. */
int status_print(struct store *st);

/* Append the totals of sweep in st (NULL: every sweep but probe runs) as one JSON object (sweeps, cells by
 * state, failed attempts, the latest run, its rate and ETA). Returns 0 or -1. */
int status_json(struct store *st, const char *sweep, struct strbuf *out);

#endif
