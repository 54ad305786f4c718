/* comm.h: how master and workers talk. comm.c is the only file that calls MPI. */
#ifndef SWEEP_COMM_H
#define SWEEP_COMM_H

#include <stddef.h>
#include "util.h"

/*
 * One process's communication state. Under mpirun (detected from the launcher's environment) MPI is
 * initialised with MPI_THREAD_FUNNELED: on rank 0 only the master thread calls MPI. Rank 0's own worker
 * is a thread that talks to the master through an in-process queue; outside mpirun that queue is all
 * there is. Peers are ranks: the master sends to rank r, a worker always sends to rank 0.
 */
struct comm;

/* Start MPI when launched by mpirun, else a single process of size 1. Returns 0 or -1 after error(). */
int comm_init(int *argc, char ***argv, struct comm **out);
/* Finalise MPI (when started) and free. */
void comm_finish(struct comm *c);
/* End the whole job now (MPI_Abort under mpirun, exit otherwise) with code. */
void comm_abort(struct comm *c, int code) __attribute__((noreturn));
/*
 * End a job that has a rank on a host cut off the network, the database already sound. mpirun (Open MPI
 * 4.1) waits for every daemon to confirm an abort, and a daemon that cannot be reached answers nothing for
 * as long as TCP retries (many minutes) unless mpirun was given keepalive options. So when mpirun is an
 * ancestor of this process (it started this rank, or the daemon that did on the same machine), a helper
 * apart from the job sends it SIGTERM (it ends the ranks and daemons it reaches), and a second one 3 s later
 * if it is still there, on which Open MPI 4.1's mpirun exits 1 at once. Else MPI_Abort after wait seconds
 * (a rank that hangs on a host that answers). Never returns.
 */
void comm_end_cut(struct comm *c, int code, double wait) __attribute__((noreturn));
/*
 * The master is gone (MSG_ORPHAN_SECONDS): exit with code without MPI_Finalize, which would wait for it for
 * ever. This rank's Open MPI daemon, when it is its parent, is ended too (it would wait for mpirun for as
 * long as TCP retries), once the daemon's other ranks have exited (they end themselves alike; 5 s at most).
 */
void comm_orphan_exit(struct comm *c, int code) __attribute__((noreturn));
/* Whether pid is the mpirun or the Open MPI daemon that started this rank (an ancestor of it). */
int comm_is_launcher(const struct comm *c, int pid);
int comm_rank(const struct comm *c);
int comm_size(const struct comm *c);
int comm_is_mpi(const struct comm *c);
/* Rank among the ranks of this host, and how many ranks this host has. */
int comm_local_rank(const struct comm *c);
int comm_local_size(const struct comm *c);

/* The master's side (rank 0's main thread). Sending to rank 0 reaches the local worker thread.
 * Receive returns 1 with a message, 0 when timeout seconds passed with none, -1 on error. */
int comm_master_send(struct comm *c, int peer, int tag, const void *buf, size_t len);
int comm_master_recv(struct comm *c, int *peer, int *tag, struct strbuf *buf, double timeout);

/* A worker's side: on rank 0 the local thread (through the queue), elsewhere the rank's main thread
 * (through MPI). The peer is always the master. Receive returns like comm_master_recv. */
int comm_worker_send(struct comm *c, int tag, const void *buf, size_t len);
int comm_worker_recv(struct comm *c, int *tag, struct strbuf *buf, double timeout);
/* Wait up to timeout seconds for a message from the master (taken into tag and buf: 1) or for fd to be
 * readable (2, nothing taken); 0 on timeout, -1 after error(). A worker waits so on the master and its
 * executor at once. */
int comm_worker_wait(struct comm *c, int fd, int *tag, struct strbuf *buf, double timeout);

#endif
