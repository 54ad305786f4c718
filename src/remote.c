/* remote.c: commands on inventory hosts over ssh, files to and from them with scp, hosts in parallel. */
#include "remote.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "spawn.h"

void remote_out_release(struct remote_out *o)
{
	sb_release(&o->out);
	sb_release(&o->err);
	memset(o, 0, sizeof(*o));
}

static void argv_add(struct remote_argv *a, const char *s)
{
	ALLOC_GROW(a->v, a->n + 2, a->alloc);
	a->v[a->n++] = xstrdup(s);
	a->v[a->n] = NULL;
}

__attribute__((format(printf, 2, 3)))
static void argv_addf(struct remote_argv *a, const char *fmt, ...)
{
	struct strbuf sb = STRBUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	sb_vaddf(&sb, fmt, ap);
	va_end(ap);
	ALLOC_GROW(a->v, a->n + 2, a->alloc);
	a->v[a->n++] = sb_detach(&sb);
	a->v[a->n] = NULL;
}

void remote_argv_release(struct remote_argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

/* The options ssh and scp share. -i, not -o IdentityFile: ssh expands ~ in both, but -i is what users
 * know from their own command lines. */
static void common_opts(const struct inventory_host *h, int connect_timeout, struct remote_argv *a)
{
	if (h->user) {
		argv_add(a, "-o");
		argv_addf(a, "User=%s", h->user);
	}
	if (h->port) {
		argv_add(a, "-o");
		argv_addf(a, "Port=%d", h->port);
	}
	if (h->identity) {
		argv_add(a, "-i");
		argv_add(a, h->identity);
	}
	for (int i = 0; i < h->nssh_options; i++) {
		argv_add(a, "-o");
		argv_add(a, h->ssh_options[i]);
	}
	argv_add(a, "-o");
	argv_add(a, "BatchMode=yes");
	argv_add(a, "-o");
	argv_addf(a, "ConnectTimeout=%d", connect_timeout < 1 ? 1 : connect_timeout);
	/* A host that vanishes mid-command (preempted, network gone) is noticed in about 15 s. */
	argv_add(a, "-o");
	argv_add(a, "ServerAliveInterval=5");
	argv_add(a, "-o");
	argv_add(a, "ServerAliveCountMax=3");
}

void remote_ssh_argv(const struct inventory_host *h, int connect_timeout, const char *command,
		     struct remote_argv *a)
{
	argv_add(a, "ssh");
	common_opts(h, connect_timeout, a);
	argv_add(a, "-T");
	argv_add(a, "--");
	argv_add(a, h->address);
	argv_add(a, command);
}

void remote_scp_argv(const struct inventory_host *h, int connect_timeout, const char *local, const char *path,
		     int to_host, struct remote_argv *a)
{
	char *spec;

	/* An IPv6 address needs brackets, or scp takes its first ':' for the end of the host. */
	if (strchr(h->address, ':'))
		spec = xasprintf("[%s]:%s", h->address, path);
	else
		spec = xasprintf("%s:%s", h->address, path);
	argv_add(a, "scp");
	argv_add(a, "-q");
	argv_add(a, "-p");
	common_opts(h, connect_timeout, a);
	argv_add(a, "--");
	argv_add(a, to_host ? local : spec);
	argv_add(a, to_host ? spec : local);
	free(spec);
}

void remote_quote(struct strbuf *sb, const char *s)
{
	sb_addc(sb, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			sb_adds(sb, "'\\''");
		else
			sb_addc(sb, *s);
	}
	sb_addc(sb, '\'');
}

const char *remote_workdir(const struct inventory_host *h)
{
	const char *w = h->workdir ? h->workdir : "sweep";

	if (!strcmp(w, "~"))
		return ".";
	if (!strncmp(w, "~/", 2))
		return w[2] ? w + 2 : ".";
	return w;
}

char *remote_path(const struct inventory_host *h, const char *rel)
{
	const char *w = remote_workdir(h);
	size_t n = strlen(w);

	if (rel[0] == '/')
		return xstrdup(rel);
	if (!strcmp(w, "."))
		return xstrdup(rel);
	return xasprintf("%s%s%s", w, n && w[n - 1] == '/' ? "" : "/", rel);
}

int remote_spawn(char *const *argv, double deadline, struct remote_out *o)
{
	/* Its own process group, so that a timeout ends scp's ssh too; once it exited, what is left of the
	 * group lives on (an ssh ControlPersist master). */
	struct spawn_opts so = {
		.argv = argv,
		.in = SPAWN_NULL,
		.out = { .to = SPAWN_CAPTURE, .cap = REMOTE_MAX_OUTPUT },
		.err = { .to = SPAWN_CAPTURE, .cap = REMOTE_MAX_OUTPUT },
		.deadline = deadline,
		.term_grace = 0,
		.linger = 0.5,
		.keep_leftovers = 1,
	};
	struct spawn_result res;

	memset(o, 0, sizeof(*o));
	if (spawn_run(&so, &res)) {
		sb_init(&o->out);
		sb_init(&o->err);
		sb_addf(&o->err, "cannot run '%s': %s", argv[0], strerror(res.exec_errno));
		spawn_result_release(&res);
		return -1;
	}
	o->out = res.out;
	o->err = res.err;
	o->timed_out = res.timed_out;
	if (WIFEXITED(res.status)) {
		o->status = WEXITSTATUS(res.status);
	} else if (WIFSIGNALED(res.status)) {
		o->signal = WTERMSIG(res.status);
		o->status = 128 + o->signal;
	}
	return 0;
}

/* ssh's connect timeout: never past the deadline. */
static int connect_timeout(double deadline)
{
	double left = deadline - now_mono();

	if (left > REMOTE_CONNECT_TIMEOUT)
		return REMOTE_CONNECT_TIMEOUT;
	return left < 1 ? 1 : (int)left;
}

int remote_run(const struct inventory_host *h, const char *script, double deadline, struct remote_out *o)
{
	struct remote_argv a = { 0 };
	struct strbuf cmd = STRBUF_INIT;
	int ret;

	/* ssh hands the line to the login shell, which may be csh or fish: sh -c runs our script under sh,
	 * and single quotes mean the same to all of them. */
	sb_adds(&cmd, "sh -c ");
	remote_quote(&cmd, script);
	remote_ssh_argv(h, connect_timeout(deadline), cmd.buf, &a);
	ret = remote_spawn(a.v, deadline, o);
	remote_argv_release(&a);
	sb_release(&cmd);
	return ret;
}

static int copy(const struct inventory_host *h, const char *local, const char *path, int to_host,
		double deadline, struct remote_out *o)
{
	struct remote_argv a = { 0 };
	int ret;

	remote_scp_argv(h, connect_timeout(deadline), local, path, to_host, &a);
	ret = remote_spawn(a.v, deadline, o);
	remote_argv_release(&a);
	if (ret || o->timed_out || o->status)
		return -1;
	return 0;
}

int remote_put(const struct inventory_host *h, const char *local, const char *path, double deadline,
	       struct remote_out *o)
{
	return copy(h, local, path, 1, deadline, o);
}

int remote_get(const struct inventory_host *h, const char *path, const char *local, double deadline,
	       struct remote_out *o)
{
	return copy(h, local, path, 0, deadline, o);
}

int remote_unreachable(const struct remote_out *o)
{
	return o->timed_out || o->status == 255;
}

void remote_why(const struct remote_out *o, struct strbuf *sb)
{
	const char *e = o->err.buf ? o->err.buf : "";
	size_t end = o->err.len, start;

	if (o->timed_out) {
		sb_adds(sb, "no answer before the timeout");
		return;
	}
	/* The last non-empty line. */
	while (end && (e[end - 1] == '\n' || e[end - 1] == '\r'))
		end--;
	start = end;
	while (start && e[start - 1] != '\n')
		start--;
	if (end > start) {
		/* Printable only: it comes from another machine and goes to a terminal. */
		for (size_t i = start; i < end && i < start + 300; i++)
			sb_addc(sb, (unsigned char)e[i] < 0x20 || e[i] == 0x7f ? '?' : e[i]);
	} else if (o->signal) {
		sb_addf(sb, "killed by signal %d", o->signal);
	} else {
		sb_addf(sb, "exit status %d", o->status);
	}
}

struct par {
	pthread_mutex_t mu;
	int next, n;
	void (*fn)(int i, void *data);
	void *data;
};

static void *par_main(void *arg)
{
	struct par *p = arg;

	for (;;) {
		int i;

		pthread_mutex_lock(&p->mu);
		i = p->next++;
		pthread_mutex_unlock(&p->mu);
		if (i >= p->n)
			return NULL;
		p->fn(i, p->data);
	}
}

void remote_parallel(int n, int jobs, void (*fn)(int i, void *data), void *data)
{
	struct par p = { PTHREAD_MUTEX_INITIALIZER, 0, n, fn, data };
	pthread_t *t;
	int started = 0;

	if (jobs > n)
		jobs = n;
	if (jobs < 2) {
		for (int i = 0; i < n; i++)
			fn(i, data);
		return;
	}
	/* This thread is one of the jobs (and does all of the work if no thread can be made). */
	t = xcalloc((size_t)jobs, sizeof(*t));
	for (int i = 0; i < jobs - 1; i++) {
		if (pthread_create(&t[started], NULL, par_main, &p))
			break;
		started++;
	}
	par_main(&p);
	for (int i = 0; i < started; i++)
		pthread_join(t[i], NULL);
	free(t);
	pthread_mutex_destroy(&p.mu);
}
