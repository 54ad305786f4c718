/* msg.h: the messages between master and workers, as byte buffers. Pure, so unit-tested without MPI. */
#ifndef SWEEP_MSG_H
#define SWEEP_MSG_H

#include <stddef.h>
#include "result.h"
#include "util.h"

/* Message tags. The protocol: master sends SPEC; each worker answers HELLO; then TASKs (a few in flight
 * per worker: one running, the others prefetched), each answered by a RESULT; finally STOP, or NEXT when
 * another SPEC follows in the same job (sweep hosts probe runs several sweeps on the same workers). */
enum msg_tag { MSG_SPEC = 1, MSG_HELLO, MSG_TASK, MSG_RESULT, MSG_STOP, MSG_NEXT };

/* What a worker says about itself at start. Owns its strings (hello_release). */
struct hello {
	int rank;
	int local_rank;
	int gpu;               /* -1: no GPU */
	char *host;
	char *facts;           /* JSON object of host (and GPU) facts */
	char *gpu_uuid;        /* "" without GPU */
	char *binding;         /* cpuset the worker bound itself to, "" when unbound */
};
void hello_release(struct hello *h);

/* Encoders append to sb. Decoders return 0, or -1 when the buffer is truncated or malformed (the output is
 * then released). Integers are little-endian fixed width; strings are a 32-bit length and bytes. */
void msg_put_hello(struct strbuf *sb, const struct hello *h);
int msg_get_hello(const char *buf, size_t len, struct hello *h);
void msg_put_task(struct strbuf *sb, const struct task *t);
int msg_get_task(const char *buf, size_t len, struct task *t);
void msg_put_result(struct strbuf *sb, const struct result *r);
int msg_get_result(const char *buf, size_t len, struct result *r);

#endif
