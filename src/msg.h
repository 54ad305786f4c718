/* msg.h: the messages between master and workers, as byte buffers. Pure, so unit-tested without MPI. */
#ifndef SWEEP_MSG_H
#define SWEEP_MSG_H

#include <stddef.h>
#include "result.h"
#include "util.h"

/* Message tags. The protocol: master sends SPEC; each worker answers HELLO; then TASKs (a few in flight
 * per worker: one running, the others prefetched), each answered by a RESULT; finally STOP, or NEXT when
 * another SPEC follows in the same job (sweep hosts probe runs several sweeps on the same workers). */
/* MSG_GANG_BLOB: a gang's bootstrap blob, leader -> master -> the other members. MSG_BEAT: nothing but a
 * sign of life (see MSG_LOST_SECONDS), either way. MSG_PING: master -> worker, answered at once with a
 * MSG_BEAT (which ranks are still there, when mpirun ends the job). */
enum msg_tag { MSG_SPEC = 1, MSG_HELLO, MSG_TASK, MSG_RESULT, MSG_STOP, MSG_NEXT, MSG_BEAT, MSG_PING,
	       MSG_GANG_BLOB = 100 };

/*
 * Liveness. A cell may run for hours and its worker has nothing to say meanwhile, so a worker that has
 * sent nothing for MSG_BEAT_SECONDS sends MSG_BEAT, whatever it is doing. A worker the master has heard
 * nothing from for MSG_LOST_SECONDS, while the master was listening, is lost (its host is down or cut off,
 * or the rank hangs): Open MPI 4.1 cannot go on without a rank, so the run ends. The grace is many beats,
 * so that a loaded machine is not taken for a dead one, and is independent of the cells' length.
 * The other way round, the master sends each worker rank MSG_BEAT every MSG_BEAT_SECONDS once the cells are
 * handed out, and a worker that hears nothing from it for MSG_ORPHAN_SECONDS while it listens takes the job
 * for gone (the master's host down or cut off): it ends its executor, with the programs of its cells, and
 * exits by itself (run_worker). Longer than MSG_LOST_SECONDS, so that when a worker's host is cut off the
 * master, which can hand the cells back, decides first.
 */
#define MSG_BEAT_SECONDS 2.0
#define MSG_LOST_SECONDS 20.0
#define MSG_ORPHAN_SECONDS 30.0
/* A worker that has not looked for the master's messages for MSG_LISTEN_GAP was busy (an executor starting):
 * what the master sent meanwhile waits unread, so the silence counts only from when it listens again.
 * Between its hello and the master's first message the master files the hellos (the replicas of a large
 * sweep may take a while) and beats nothing: MSG_FIRST_WAIT is allowed then. */
#define MSG_LISTEN_GAP 4.0
#define MSG_FIRST_WAIT 600.0

/* The master's silence as a worker counts it (times from now_mono). Nothing to free. */
struct msg_silence {
	double heard;              /* the master's last message, or when the worker began to listen */
	double looked;             /* when the worker last looked for its messages */
	int heard_once;            /* the master has sent something since the worker began */
};
/* The worker begins to listen at now. */
void msg_silence_start(struct msg_silence *m, double now);
/* A message from the master came at now. */
void msg_silence_heard(struct msg_silence *m, double now);
/* The worker looks for messages at now: 1 when the master has been silent for MSG_ORPHAN_SECONDS
 * (MSG_FIRST_WAIT before its first message) while the worker listened, the job gone; else 0. */
int msg_silence_over(struct msg_silence *m, double now);

/* What a worker says about itself at start. Owns its strings (hello_release). */
struct hello {
	int rank;
	int local_rank;
	int gpu;               /* -1: no GPU */
	char *host;
	char *facts;           /* JSON object of host (and GPU) facts */
	char *gpu_uuid;        /* "" without GPU */
	char *binding;         /* cpuset the worker bound itself to, "" when unbound */
	char *conditions;      /* JSON object: what it measures under at its start (hostinfo_conditions) */
	int cannot;            /* 0, or why it can run none of the sweep's cells (enum hello_cannot) */
	char *why;             /* "" or that reason in words, naming the host */
};
/* A worker that can run none of its sweep's cells takes none (master_assign): a program its commands
 * name is missing on its host (no worker having it stops the run before any attempt), or the sweep's
 * kernel runs on a GPU and it has none (the cells wait for a worker that has one). */
enum hello_cannot { HELLO_CAN = 0, HELLO_NO_PROGRAM = 1, HELLO_NO_GPU = 2 };
void hello_release(struct hello *h);

/* What a worker tells its executor process before anything else: the spec and where it runs. Owns its
 * strings (exec_init_release). */
struct exec_init {
	int rank, local_rank, local_size;
	int bind;              /* 1: pin near the GPU (the ranks of this host have cores of their own) */
	char *spec_path, *spec_text;
};
void exec_init_release(struct exec_init *x);

/* Encoders append to sb. Decoders return 0, or -1 when the buffer is truncated or malformed (the output is
 * then released). Integers are little-endian fixed width; strings are a 32-bit length and bytes. */
void msg_put_hello(struct strbuf *sb, const struct hello *h);
int msg_get_hello(const char *buf, size_t len, struct hello *h);
void msg_put_init(struct strbuf *sb, const struct exec_init *x);
int msg_get_init(const char *buf, size_t len, struct exec_init *x);
void msg_put_task(struct strbuf *sb, const struct task *t);
int msg_get_task(const char *buf, size_t len, struct task *t);
/* A TASK message carries n >= 1 tasks (all a worker is sent in one round: one message, not n). On success
 * *out is an array of *n tasks the caller releases (task_release each, then free). */
void msg_put_tasks(struct strbuf *sb, const struct task *const *t, int n);
int msg_get_tasks(const char *buf, size_t len, struct task **out, int *n);
void msg_put_result(struct strbuf *sb, const struct result *r);
int msg_get_result(const char *buf, size_t len, struct result *r);
/* A RESULT message carries n >= 1 results, as a worker batches them when its cells are short. Build one
 * with msg_results_init then msg_results_add each; msg_results_count says how many it holds.
 * msg_results_get decodes them all into *r (n of them; the caller releases each and frees *r): 0, or -1
 * (nothing kept, nothing said) on a malformed message, refused whole. */
void msg_results_init(struct strbuf *sb);
void msg_results_add(struct strbuf *sb, const struct result *r);
int msg_results_count(const struct strbuf *sb);
int msg_results_get(const char *buf, size_t len, struct result **r, int *n);
/* One result's record as a RESULT message holds it: a 4-byte size, then msg_put_result's bytes. The
 * executor writes such records to its data pipe; the worker adds them to its message unchanged
 * (msg_results_add_record) after reading what it needs without decoding the rest (msg_record_peek:
 * 0, or -1 when rec is not a whole record). */
void msg_record_put(struct strbuf *sb, const struct result *r);
/* The length of the record at the start of buf (avail bytes), or 0 until the whole record is there. */
size_t msg_record_len(const char *buf, size_t avail);
int msg_record_peek(const char *rec, size_t len, int64_t *cell, enum result_status *status, double *started,
		    double *wall);
void msg_results_add_record(struct strbuf *sb, const char *rec, size_t len);

#endif
