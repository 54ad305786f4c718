/* gang_tcp.h: a communicator over TCP among a gang's members, for CPU gang kernels (cpu.allreduce), built
 * the way NCCL's is: a blob from the leader, through the master, opens it everywhere. */
#ifndef SWEEP_GANG_TCP_H
#define SWEEP_GANG_TCP_H

#include <stddef.h>

struct gang_tcp;
enum gang_tcp_op { GANG_TCP_SUM, GANG_TCP_MAX, GANG_TCP_MIN };

/* The leader: listen on an ephemeral port of every interface; the blob (at most GANG_BLOB_MAX bytes: its
 * IPv4 addresses, the port and a random token) into buf. -1 with the reason in err. */
int gang_tcp_blob(void *buf, size_t *len, char *err, size_t errlen);
/* Every member (gang rank 0 is the leader, which made the blob in this process): connect, within a
 * minute for the whole gang or until *cancel. -1 with the reason in err. */
int gang_tcp_open(int rank, int size, const void *blob, size_t len, volatile int *cancel,
		  struct gang_tcp **out, char *err, size_t errlen);
void gang_tcp_close(struct gang_tcp *g);
/* recv = op over the members' send (count floats, or doubles when f64), the same on every member. 0;
 * -1 when a member is gone; -2 when *cancel was set and grace seconds passed without the others. */
int gang_tcp_allreduce(struct gang_tcp *g, const void *send, void *recv, long count, int f64,
		       enum gang_tcp_op op, volatile int *cancel, double grace);

#endif
