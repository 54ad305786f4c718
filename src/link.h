/* link.h: framed messages over a stream socket between a worker rank and its executor process, and the
 * data pipe beside it: the executor writes each result there as it is made (a crash loses none), and
 * rings the worker (LINK_DUE) only when the master should have them. */
#ifndef SWEEP_LINK_H
#define SWEEP_LINK_H

#include <stddef.h>
#include "util.h"

/* What travels on the link. The payloads are msg.c's encodings where one exists. */
enum link_tag {
	LINK_INIT = 1,         /* worker -> executor: the spec and where it runs (link_init_*) */
	LINK_HELLO,            /* executor -> worker: its hello (msg_put_hello), after binding and facts */
	LINK_TASKS,            /* worker -> executor: cells to run in order (msg_put_tasks) */
	LINK_DUE,              /* executor -> worker: results wait in the data pipe: take them now */
	LINK_BLOB,             /* a gang's bootstrap blob: the leader's executor -> worker, worker -> member */
	LINK_QUIT              /* worker -> executor: exit now */
};

/* A worker sends its results together when they come fast: at most this long after the first unsent
 * one, and at most this many in one message. */
#define RESULTS_SECONDS 0.0005
#define RESULTS_MAX 256

/*
 * Both ends of the link share it: the executor rings the worker by it, the worker sends by it.
 * Whether a worker sends the results it holds now, after a cell of wall seconds: short cells' results go
 * back together, when the last cell of the master's message is done (the worker would wait for more
 * otherwise), once the oldest has waited RESULTS_SECONDS, or RESULTS_MAX at a time. A long cell's result
 * (wall >= RESULTS_SECONDS) goes at once: held until the next cell ends, it would keep the master from
 * sending the cell after that one in time, and the prefetch would turn into stop-and-wait.
 */
int link_results_due(int last_of_batch, double wall, double waited, int count);

/* Send one message: a 4-byte tag, a 4-byte length, the bytes. Blocks until written. 0, or -1 when the
 * peer is gone (no message printed: the caller knows what a broken link means). */
int link_send(int fd, int tag, const void *buf, size_t len);

/* Wait up to timeout seconds (< 0: forever) for one whole message into buf (replacing its contents).
 * 1 with *tag set, 0 on timeout, -1 when the peer closed the link or sent something malformed. */
int link_recv(int fd, int *tag, struct strbuf *buf, double timeout);

/* 1 when a message (or the end of the link) can be read from fd now. */
int link_ready(int fd);

/* Hand an open file descriptor to the peer (SCM_RIGHTS), or take one: the fd, or -1. */
int link_send_fd(int sock, int fd);
int link_recv_fd(int sock, double timeout);

#endif
