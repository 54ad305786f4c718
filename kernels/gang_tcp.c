/* gang_tcp.c: a communicator over TCP for CPU gang kernels, bootstrapped like NCCL: the leader listens,
 * its blob (addresses, port, a random token) reaches the members through the master, they connect. */
#include "gang_tcp.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "kernel.h"

#define BLOB_MAGIC 0x53574754u     /* "SWGT" */
#define MAX_ADDRS 48
#define CONNECT_SECONDS 3.0        /* per address a member tries */
#define OPEN_SECONDS 60.0          /* for the whole gang to connect */

struct blob {
	uint32_t magic;
	uint16_t port;             /* network order */
	uint16_t naddr;
	uint64_t token;
	uint32_t addr[MAX_ADDRS];  /* IPv4, network order, the leader's non-loopback ones first */
};

struct gang_tcp {
	int rank, size;
	int *fd;                   /* leader: the socket of each member by gang rank; member: fd[0], the leader */
};

/* The listening socket between the leader's blob and its open (one gang at a time per process). */
static int listen_fd = -1;
static uint64_t listen_token;

static int io_wait(int fd, short ev, double deadline, volatile int *cancel, double grace)
{
	double give_up = deadline;

	for (;;) {
		struct pollfd p = { fd, ev, 0 };
		double now = now_mono();
		int rc;

		if (cancel && *cancel && give_up > now + grace)
			give_up = now + grace;
		if (now >= give_up)
			return -2;
		rc = poll(&p, 1, 100);
		if (rc > 0)
			return p.revents & (POLLERR | POLLNVAL) && !(p.revents & ev) ? -1 : 0;
		if (rc < 0 && errno != EINTR)
			return -1;
	}
}

/* All n bytes out, or -1 (the peer is gone) / -2 (cancelled or too late). */
static int send_all(int fd, const void *buf, size_t n, double deadline, volatile int *cancel, double grace)
{
	const char *p = buf;

	while (n) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL | MSG_DONTWAIT);
		int rc;

		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
			return -1;
		if ((rc = io_wait(fd, POLLOUT, deadline, cancel, grace)))
			return rc;
	}
	return 0;
}

static int recv_all(int fd, void *buf, size_t n, double deadline, volatile int *cancel, double grace)
{
	char *p = buf;

	while (n) {
		ssize_t k = recv(fd, p, n, MSG_DONTWAIT);
		int rc;

		if (k > 0) {
			p += k;
			n -= (size_t)k;
			continue;
		}
		if (k == 0 || (k < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
			return -1;
		if ((rc = io_wait(fd, POLLIN, deadline, cancel, grace)))
			return rc;
	}
	return 0;
}

static uint64_t random_token(void)
{
	uint64_t t = 0;
	int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || read(fd, &t, sizeof(t)) != sizeof(t))
		t = (uint64_t)now_wall() * 2654435761u ^ (uint64_t)getpid();
	if (fd >= 0)
		close(fd);
	return t;
}

int gang_tcp_blob(void *buf, size_t *len, char *err, size_t errlen)
{
	struct blob b = { .magic = BLOB_MAGIC };
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t alen = sizeof(a);
	struct ifaddrs *ifs, *i;
	int lo = 0;

	if (listen_fd >= 0)
		close(listen_fd);
	listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd < 0 || bind(listen_fd, (struct sockaddr *)&a, sizeof(a)) || listen(listen_fd, 64) ||
	    getsockname(listen_fd, (struct sockaddr *)&a, &alen)) {
		snprintf(err, errlen, "cannot listen: %s", strerror(errno));
		return -1;
	}
	b.port = a.sin_port;
	b.token = listen_token = random_token();
	if (!getifaddrs(&ifs)) {
		for (i = ifs; i; i = i->ifa_next) {
			if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP))
				continue;
			if (i->ifa_flags & IFF_LOOPBACK)
				lo = 1;
			else if (b.naddr < MAX_ADDRS - 1)
				b.addr[b.naddr++] = ((struct sockaddr_in *)i->ifa_addr)->sin_addr.s_addr;
		}
		freeifaddrs(ifs);
	}
	if (lo || !b.naddr)
		b.addr[b.naddr++] = htonl(INADDR_LOOPBACK);
	*len = offsetof(struct blob, addr) + b.naddr * sizeof(b.addr[0]);
	memcpy(buf, &b, *len);
	return 0;
}

/* A member: the leader at one of the blob's addresses, then its token and gang rank. */
static int member_connect(const struct blob *b, int rank, char *err, size_t errlen)
{
	for (int k = 0; k < b->naddr; k++) {
		struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = b->port };
		int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0), one = 1, soerr = 0;
		socklen_t sl = sizeof(soerr);
		double deadline = now_mono() + CONNECT_SECONDS;
		unsigned char hello[12];

		if (fd < 0)
			break;
		a.sin_addr.s_addr = b->addr[k];
		if ((connect(fd, (struct sockaddr *)&a, sizeof(a)) && errno != EINPROGRESS) ||
		    io_wait(fd, POLLOUT, deadline, NULL, 0) || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) ||
		    soerr) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		memcpy(hello, &b->token, 8);
		memcpy(hello + 8, &rank, 4);
		if (send_all(fd, hello, sizeof(hello), deadline, NULL, 0)) {
			close(fd);
			continue;
		}
		return fd;
	}
	snprintf(err, errlen, "cannot reach the gang's leader at any of its %d addresses", b->naddr);
	return -1;
}

/* The leader: every member's connection, checked by its token, placed by its gang rank. */
static int leader_accept(struct gang_tcp *g, volatile int *cancel, char *err, size_t errlen)
{
	double deadline = now_mono() + OPEN_SECONDS;
	int got = 0;

	while (got < g->size - 1) {
		unsigned char hello[12];
		uint64_t token;
		int fd, r, one = 1;

		if (io_wait(listen_fd, POLLIN, deadline, cancel, 0)) {
			snprintf(err, errlen, "%d of %d members connected in time", got, g->size - 1);
			return -1;
		}
		fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
		if (fd < 0)
			continue;
		if (recv_all(fd, hello, sizeof(hello), now_mono() + 5, cancel, 0)) {
			close(fd);
			continue;
		}
		memcpy(&token, hello, 8);
		memcpy(&r, hello + 8, 4);
		if (token != listen_token || r < 1 || r >= g->size || g->fd[r] >= 0) {
			close(fd);   /* not one of ours */
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		g->fd[r] = fd;
		got++;
	}
	return 0;
}

int gang_tcp_open(int rank, int size, const void *blob, size_t len, volatile int *cancel,
		  struct gang_tcp **out, char *err, size_t errlen)
{
	struct gang_tcp *g = xcalloc(1, sizeof(*g));
	struct blob b = { 0 };
	int rc;

	g->rank = rank;
	g->size = size;
	g->fd = xcalloc((size_t)size, sizeof(int));
	for (int i = 0; i < size; i++)
		g->fd[i] = -1;
	if (rank == 0) {
		rc = listen_fd >= 0 ? leader_accept(g, cancel, err, errlen) :
				      (snprintf(err, errlen, "no bootstrap was made"), -1);
		close(listen_fd);
		listen_fd = -1;
	} else {
		if (len < offsetof(struct blob, addr) || len > sizeof(b)) {
			snprintf(err, errlen, "a bootstrap blob of %zu bytes", len);
			rc = -1;
		} else {
			memcpy(&b, blob, len);
			rc = b.magic != BLOB_MAGIC || b.naddr > MAX_ADDRS ||
					     len < offsetof(struct blob, addr) + b.naddr * sizeof(b.addr[0]) ?
				     (snprintf(err, errlen, "not a bootstrap of this kernel"), -1) :
				     (g->fd[0] = member_connect(&b, rank, err, errlen)) < 0 ? -1 : 0;
		}
	}
	if (rc) {
		gang_tcp_close(g);
		return -1;
	}
	*out = g;
	return 0;
}

void gang_tcp_close(struct gang_tcp *g)
{
	if (!g)
		return;
	for (int i = 0; i < g->size; i++)
		if (g->fd[i] >= 0)
			close(g->fd[i]);
	free(g->fd);
	free(g);
}

static void combine(void *acc, const void *x, long count, int f64, enum gang_tcp_op op)
{
	for (long i = 0; i < count; i++) {
		double a = f64 ? ((double *)acc)[i] : ((float *)acc)[i];
		double b = f64 ? ((const double *)x)[i] : ((const float *)x)[i];
		double r = op == GANG_TCP_SUM ? a + b : op == GANG_TCP_MAX ? (a > b ? a : b) : (a < b ? a : b);

		if (f64)
			((double *)acc)[i] = r;
		else
			((float *)acc)[i] = (float)r;
	}
}

int gang_tcp_allreduce(struct gang_tcp *g, const void *send, void *recv, long count, int f64,
		       enum gang_tcp_op op, volatile int *cancel, double grace)
{
	size_t bytes = (size_t)count * (f64 ? 8 : 4);
	double forever = now_mono() + 1e9;
	void *tmp;
	int rc = 0;

	if (recv != send)
		memcpy(recv, send, bytes);
	if (g->rank != 0) {
		/* A star through the leader: ours in, the result out (a twin for correctness, not speed). */
		rc = send_all(g->fd[0], send, bytes, forever, cancel, grace);
		return rc ? rc : recv_all(g->fd[0], recv, bytes, forever, cancel, grace);
	}
	tmp = xmalloc(bytes ? bytes : 1);
	/* In gang-rank order, so that every run sums in the same order. */
	for (int r = 1; r < g->size && !rc; r++)
		if (!(rc = recv_all(g->fd[r], tmp, bytes, forever, cancel, grace)))
			combine(recv, tmp, count, f64, op);
	free(tmp);
	for (int r = 1; r < g->size && !rc; r++)
		rc = send_all(g->fd[r], recv, bytes, forever, cancel, grace);
	return rc;
}
