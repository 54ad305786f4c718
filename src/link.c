/* link.c: framed messages over a stream socket between a worker rank and its executor process. */
#include "link.h"

#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A message larger than this is a broken peer, not a cell's result (results of 256 cells of 10,000
 * samples each stay far below it). */
#define LINK_MAX (1u << 30)

/* send(), not write(): a peer that died must not kill this process with SIGPIPE. */
static int write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Read exactly len bytes; the first byte is awaited until deadline (< 0: forever), the rest without
 * one (a writer never stops inside a message). 1, 0 on timeout before the first byte, -1 at the end. */
static int read_all(int fd, void *buf, size_t len, double deadline)
{
	char *p = buf;
	size_t got = 0;

	while (got < len) {
		ssize_t n;

		if (!got && deadline >= 0) {
			struct pollfd pfd = { fd, POLLIN, 0 };
			double left = deadline - now_mono();
			int rc = poll(&pfd, 1, left > 0 ? (int)(left * 1000 + 1) : 0);

			if (rc < 0 && errno == EINTR)
				continue;
			if (rc < 0)
				return -1;
			if (rc == 0)
				return 0;
		}
		n = read(fd, p + got, len - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	return 1;
}

int link_results_due(int last_of_batch, double wall, double waited, int count)
{
	return last_of_batch || wall >= RESULTS_SECONDS || waited >= RESULTS_SECONDS || count >= RESULTS_MAX;
}

int link_send(int fd, int tag, const void *buf, size_t len)
{
	uint32_t head[2] = { (uint32_t)tag, (uint32_t)len };

	if (len > LINK_MAX)
		BUG("link message of %zu bytes", len);
	if (write_all(fd, head, sizeof(head)))
		return -1;
	return len ? write_all(fd, buf, len) : 0;
}

int link_recv(int fd, int *tag, struct strbuf *buf, double timeout)
{
	uint32_t head[2];
	int rc = read_all(fd, head, sizeof(head), timeout < 0 ? -1 : now_mono() + timeout);

	if (rc <= 0)
		return rc;
	if (head[1] > LINK_MAX)
		return -1;
	sb_reset(buf);
	sb_grow(buf, head[1]);
	if (head[1] && read_all(fd, buf->buf, head[1], -1) != 1)
		return -1;
	buf->len = head[1];
	buf->buf[buf->len] = '\0';
	*tag = (int)head[0];
	return 1;
}

int link_ready(int fd)
{
	struct pollfd pfd = { fd, POLLIN, 0 };

	return poll(&pfd, 1, 0) > 0;
}

int link_send_fd(int sock, int fd)
{
	char byte = 0, ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);

	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, MSG_NOSIGNAL) == 1 ? 0 : -1;
}

int link_recv_fd(int sock, double timeout)
{
	char byte, ctl[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &byte, 1 };
	struct msghdr m = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof(ctl) };
	struct pollfd p = { sock, POLLIN, 0 };
	struct cmsghdr *c;
	int fd;

	if (poll(&p, 1, timeout < 0 ? -1 : (int)(timeout * 1000)) <= 0 ||
	    recvmsg(sock, &m, MSG_CMSG_CLOEXEC) != 1)
		return -1;
	c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len != CMSG_LEN(sizeof(int)))
		return -1;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
}
