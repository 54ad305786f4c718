/* test_link.c: the worker-executor link (framed messages, fd passing) and the result records of the
 * executor's data pipe (msg_record_put/peek, msg_results_add_record). */
#include <fcntl.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "link.h"
#include "msg.h"
#include "test.h"

static void test_frames(void)
{
	struct strbuf buf = STRBUF_INIT;
	char big[200000];
	int sv[2], tag = 0;
	double t0;

	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv), "socketpair");
	CHECK_INT(link_send(sv[0], LINK_TASKS, "abc", 3), 0, "send");
	CHECK_INT(link_send(sv[0], LINK_DUE, "", 0), 0, "send an empty message");
	CHECK_INT(link_recv(sv[1], &tag, &buf, 1), 1, "recv");
	CHECK(tag == LINK_TASKS && buf.len == 3 && !memcmp(buf.buf, "abc", 3) && buf.buf[3] == 0,
	      "tag %d and bytes, NUL-terminated", tag);
	CHECK_INT(link_recv(sv[1], &tag, &buf, 1), 1, "recv the empty one");
	CHECK(tag == LINK_DUE && buf.len == 0, "tag %d, no bytes", tag);
	t0 = now_mono();
	CHECK_INT(link_recv(sv[1], &tag, &buf, 0.2), 0, "nothing there: a timeout");
	CHECK(now_mono() - t0 >= 0.19, "after the timeout: %.3f s", now_mono() - t0);
	/* A message larger than the socket's buffer arrives whole (the writer is a thread here: a fork). */
	for (size_t i = 0; i < sizeof(big); i++)
		big[i] = (char)(i * 7);
	if (fork() == 0) {
		link_send(sv[0], LINK_TASKS, big, sizeof(big));
		_exit(0);
	}
	CHECK_INT(link_recv(sv[1], &tag, &buf, 10), 1, "a 200 KB message");
	CHECK(buf.len == sizeof(big) && !memcmp(buf.buf, big, sizeof(big)), "arrives whole, %zu bytes", buf.len);
	close(sv[0]);
	CHECK_INT(link_recv(sv[1], &tag, &buf, 1), -1, "the peer closed: -1");
	close(sv[1]);
	sb_release(&buf);
}

static void test_fd_passing(void)
{
	int sv[2], pp[2], got;
	char c = 0;

	CHECK(!socketpair(AF_UNIX, SOCK_STREAM, 0, sv) && !pipe(pp), "socketpair and pipe");
	CHECK_INT(link_send_fd(sv[0], pp[1]), 0, "send the pipe's write end");
	got = link_recv_fd(sv[1], 1);
	CHECK(got >= 0 && got != pp[1], "received as a new fd %d", got);
	CHECK(write(got, "x", 1) == 1 && read(pp[0], &c, 1) == 1 && c == 'x', "it writes into the same pipe");
	CHECK(fcntl(got, F_GETFD) & FD_CLOEXEC, "received close-on-exec");
	CHECK_INT(link_send(sv[0], LINK_DUE, "", 0), 0, "a plain message");
	CHECK_INT(link_recv_fd(sv[1], 1), -1, "is not an fd");
	close(got);
	close(pp[0]);
	close(pp[1]);
	close(sv[0]);
	close(sv[1]);
}

static int collect(struct result *r, void *data)
{
	struct strbuf *sb = data;

	sb_addf(sb, "%lld:%s:%s;", (long long)r->cell, result_status_name[r->status], r->error ? r->error : "-");
	result_release(r);
	return 0;
}

static void test_records(void)
{
	struct strbuf rec1 = STRBUF_INIT, rec2 = STRBUF_INIT, msg = STRBUF_INIT, seen = STRBUF_INIT;
	struct result r, *got;
	int ngot;
	enum result_status st;
	int64_t cell;
	double started, wall;

	result_init(&r);
	r.cell = 42;
	r.worker = 3;
	r.wall = 0.125;
	r.started = 1.7e9;
	result_add_sample(&r, 0.5, 0);
	result_fail(&r, RESULT_TIMEOUT, "took too long");
	msg_record_put(&rec1, &r);
	CHECK_INT(msg_record_peek(rec1.buf, rec1.len, &cell, &st, &started, &wall), 0, "peek a record");
	CHECK(cell == 42 && st == RESULT_TIMEOUT && wall == 0.125 && started == 1.7e9,
	      "cell %lld, status %d, started %g, wall %g", (long long)cell, st, started, wall);
	CHECK_INT(msg_record_peek(rec1.buf, rec1.len - 1, &cell, &st, &started, &wall), -1, "a cut record is refused");
	result_release(&r);
	result_init(&r);
	r.cell = 43;
	r.wall = 2;
	msg_record_put(&rec2, &r);
	CHECK_INT(msg_record_peek(rec2.buf, rec2.len, &cell, &st, &started, &wall), 0, "peek a record without an error");
	CHECK(cell == 43 && st == RESULT_OK && wall == 2, "cell %lld, status %d, wall %g", (long long)cell, st, wall);
	/* Records as the pipe carries them become a RESULT message unchanged. */
	msg_results_init(&msg);
	msg_results_add_record(&msg, rec1.buf, rec1.len);
	msg_results_add_record(&msg, rec2.buf, rec2.len);
	CHECK_INT(msg_results_count(&msg), 2, "two results in the message");
	CHECK_INT(msg_results_get(msg.buf, msg.len, &got, &ngot), 0, "the message decodes");
	for (int i = 0; i < ngot; i++)
		collect(&got[i], &seen);
	free(got);
	CHECK_INT(msg_results_get(msg.buf, msg.len - 1, &got, &ngot), -1, "a message cut short is refused");
	CHECK_STR(seen.buf, "42:timeout:took too long;43:ok:-;", "both results, in order, as made");
	result_release(&r);
	sb_release(&rec1);
	sb_release(&rec2);
	sb_release(&msg);
	sb_release(&seen);
}

int main(void)
{
	test_frames();
	test_fd_passing();
	test_records();
	return test_done();
}
