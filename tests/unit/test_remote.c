/* test_remote.c: ssh and scp command lines from an inventory's ssh fields, shell quoting, running a program
 * with a deadline (its whole process group killed), hosts in parallel; store_snapshot of a database; the
 * key of a host's build (launch --build). */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "inventory.h"
#include "launch.h"
#include "remote.h"
#include "store.h"
#include "test.h"

/* The argv joined with '|' (so that a missing or extra argument shows). */
static char *joined(const struct remote_argv *a)
{
	struct strbuf sb = STRBUF_INIT;

	for (size_t i = 0; i < a->n; i++)
		sb_addf(&sb, "%s%s", i ? "|" : "", a->v[i]);
	return sb_detach(&sb);
}

static void test_inventory_ssh(void)
{
	static const char text[] =
		"defaults:\n"
		"  user: ubuntu\n"
		"  identity: ~/.ssh/rent\n"
		"  ssh_options: [StrictHostKeyChecking=accept-new, ServerAliveInterval=30]\n"
		"hosts:\n"
		"  - {name: a, address: 192.0.2.1}\n"
		"  - name: b\n"
		"    address: 2001:db8::2\n"
		"    user: root\n"
		"    port: 2222\n"
		"    ssh_options: [ProxyJump=jump.example]\n"
		"    workdir: ~/bench\n"
		"    sweep_bin: /opt/sweep/bin/sweep\n"
		"  - {name: c, workdir: /data/s}\n";
	struct inventory inv;
	struct remote_argv a = { 0 };
	char *s, *p;

	CHECK_INT(inventory_parse("t.yaml", text, sizeof(text) - 1, &inv), 0, "inventory with ssh fields");
	if (inv.nhosts != 3)
		return;
	CHECK_STR(inv.hosts[0].user, "ubuntu", "a: user from defaults");
	CHECK_INT(inv.hosts[0].port, 0, "a: no port (ssh's default)");
	CHECK_STR(inv.hosts[0].workdir, "sweep", "a: default workdir");
	CHECK_STR(inv.hosts[0].sweep_bin, "build/sweep", "a: default binary");
	CHECK_STR(inv.hosts[1].user, "root", "b: its own user");
	CHECK_INT(inv.hosts[1].port, 2222, "b: port");
	CHECK_STR(inv.hosts[1].identity, "~/.ssh/rent", "b: identity from defaults");
	CHECK_INT(inv.hosts[1].nssh_options, 3, "b: its option, then the defaults'");
	CHECK_STR(inv.hosts[1].ssh_options[0], "ProxyJump=jump.example", "b: its own option first");
	CHECK_STR(inv.hosts[1].ssh_options[2], "ServerAliveInterval=30", "b: defaults' after");

	remote_ssh_argv(&inv.hosts[0], 7, "echo hi", &a);
	s = joined(&a);
	CHECK_STR(s, "ssh|-o|User=ubuntu|-i|~/.ssh/rent|-o|StrictHostKeyChecking=accept-new|-o|"
		  "ServerAliveInterval=30|-o|BatchMode=yes|-o|ConnectTimeout=7|-o|ServerAliveInterval=5|-o|"
		  "ServerAliveCountMax=3|-T|--|192.0.2.1|echo hi", "ssh argv: the inventory's first, then ours");
	CHECK(a.v[a.n] == NULL, "argv is NULL-terminated");
	free(s);
	remote_argv_release(&a);

	remote_scp_argv(&inv.hosts[1], 0, "local.db", "bench/results/x.db", 0, &a);
	s = joined(&a);
	CHECK_STR(s, "scp|-q|-p|-o|User=root|-o|Port=2222|-i|~/.ssh/rent|-o|ProxyJump=jump.example|-o|"
		  "StrictHostKeyChecking=accept-new|-o|ServerAliveInterval=30|-o|BatchMode=yes|-o|"
		  "ConnectTimeout=1|-o|ServerAliveInterval=5|-o|ServerAliveCountMax=3|--|"
		  "[2001:db8::2]:bench/results/x.db|local.db", "scp from an IPv6 host: brackets, timeout >= 1");
	free(s);
	remote_argv_release(&a);
	remote_scp_argv(&inv.hosts[2], 5, "f", "/data/s/f", 1, &a);
	CHECK_STR(a.v[a.n - 2], "f", "scp to the host: local first");
	CHECK_STR(a.v[a.n - 1], "c:/data/s/f", "scp to the host: host:path last (address = name)");
	remote_argv_release(&a);

	CHECK_STR(remote_workdir(&inv.hosts[1]), "bench", "~/bench is bench from the home");
	p = remote_path(&inv.hosts[1], "results/x.db");
	CHECK_STR(p, "bench/results/x.db", "a path under ~/bench");
	free(p);
	p = remote_path(&inv.hosts[2], "results/x.db");
	CHECK_STR(p, "/data/s/results/x.db", "a path under an absolute workdir");
	free(p);
	p = remote_path(&inv.hosts[2], "/opt/x");
	CHECK_STR(p, "/opt/x", "an absolute path stays");
	free(p);
	inventory_release(&inv);
}

static void test_inventory_ssh_errors(void)
{
	static const char *const bad[] = {
		"hosts: [{name: a, user: -oProxyCommand=x}]\n",
		"hosts: [{name: a, port: 70000}]\n",
		"hosts: [{name: a, port: ssh}]\n",
		"hosts: [{name: a, ssh_options: [ProxyCommand]}]\n",
		"hosts: [{name: a, ssh_options: ['-oProxyCommand=x']}]\n",
		"hosts: [{name: a, ssh_options: BatchMode=no}]\n",
		"hosts: [{name: a, workdir: 'a b'}]\n",
		"hosts: [{name: a, workdir: '$(reboot)'}]\n",
		"hosts: [{name: a, sweep_bin: '-x'}]\n",
		"hosts: [{name: a, address: -oProxyCommand=x}]\n",
		"defaults: {identity: '-i'}\nhosts: [{name: a}]\n",
		"defaults: {prot: 22}\nhosts: [{name: a}]\n",
	};
	struct inventory inv;

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(inventory_parse("bad.yaml", bad[i], strlen(bad[i]), &inv) == -1, "bad inventory %zu refused",
		      i);
	CHECK(inventory_remote_path_ok("~/x/y-1.2+3"), "~/ and safe characters");
	CHECK(!inventory_remote_path_ok("x~"), "~ only at the start");
	CHECK(!inventory_remote_path_ok("a'b"), "no quote");
}

static void test_quote(void)
{
	static const char *const words[] = { "plain", "", "it's", "a b", "$HOME `id` $(id) \\ \" ; & | *",
		"'''", "new\nline" };

	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		struct strbuf cmd = STRBUF_INIT;
		struct remote_out o;
		char *argv[] = { "sh", "-c", NULL, NULL };

		sb_adds(&cmd, "printf %s ");
		remote_quote(&cmd, words[i]);
		argv[2] = cmd.buf;
		CHECK_INT(remote_spawn(argv, now_mono() + 10, &o), 0, "sh runs");
		CHECK_STR(o.out.buf ? o.out.buf : "", words[i], "sh reads the quoted word back unchanged");
		remote_out_release(&o);
		sb_release(&cmd);
	}
}

static void test_spawn(void)
{
	char *fail[] = { "sh", "-c", "echo out; echo first >&2; echo 'the reason' >&2; exit 7", NULL };
	char *slow[] = { "sh", "-c", "sleep 30 & echo $!; echo started >&2; wait", NULL };
	char *none[] = { "/nonexistent/program", NULL };
	char *linger[] = { "sh", "-c", "sleep 30 & echo $!; echo done", NULL };
	char *big[] = { "sh", "-c", "head -c 6000000 /dev/zero", NULL };
	struct remote_out o;
	struct strbuf why = STRBUF_INIT;
	double t0;
	long pid = 0;

	CHECK_INT(remote_spawn(fail, now_mono() + 10, &o), 0, "a failing program runs");
	CHECK_INT(o.status, 7, "its exit status");
	CHECK_INT(o.timed_out, 0, "not timed out");
	CHECK_STR(o.out.buf, "out\n", "stdout captured");
	CHECK_STR(o.err.buf, "first\nthe reason\n", "stderr captured");
	remote_why(&o, &why);
	CHECK_STR(why.buf, "the reason", "why: the last line of stderr");
	CHECK(!remote_unreachable(&o), "exit 7 is not ssh failing to connect");
	remote_out_release(&o);

	t0 = now_mono();
	CHECK_INT(remote_spawn(slow, now_mono() + 0.5, &o), 0, "a slow program runs");
	/* The program sleeps 30 s: anything well under that is the deadline's kill (load only delays it). */
	CHECK(now_mono() - t0 < 15, "killed at the deadline: %.2f s", now_mono() - t0);
	CHECK_INT(o.timed_out, 1, "timed out");
	CHECK_INT(o.signal, SIGKILL, "by SIGKILL");
	CHECK(remote_unreachable(&o), "no answer counts as unreachable");
	sb_reset(&why);
	remote_why(&o, &why);
	CHECK_STR(why.buf, "no answer before the timeout", "why: the timeout");
	pid = strtol(o.out.buf ? o.out.buf : "0", NULL, 10);
	CHECK(pid > 0, "the background child's pid was read: %ld", pid);
	/* Its process group went with it: the child it left in the background too (reaped by init, so it
	 * may take a moment to vanish; bounded). */
	for (int i = 0; i < 100 && pid > 0 && !kill((pid_t)pid, 0); i++)
		usleep(20000);
	CHECK(pid > 0 && kill((pid_t)pid, 0) != 0, "the whole process group was killed");
	remote_out_release(&o);

	t0 = now_mono();
	CHECK_INT(remote_spawn(linger, now_mono() + 20, &o), 0,
		  "a program leaving a child that holds its output");
	CHECK(now_mono() - t0 < 15, "returns when the program exits, not at the 20 s deadline: %.2f s",
	      now_mono() - t0);
	CHECK_INT(o.timed_out, 0, "not a timeout");
	CHECK_INT(o.status, 0, "its exit status");
	CHECK(o.out.buf && strstr(o.out.buf, "done\n"), "its output: %s", o.out.buf ? o.out.buf : "");
	pid = strtol(o.out.buf ? o.out.buf : "0", NULL, 10);
	if (pid > 0)
		kill((pid_t)pid, SIGKILL);
	remote_out_release(&o);

	CHECK_INT(remote_spawn(none, now_mono() + 10, &o), -1, "a missing program cannot start");
	CHECK(o.err.buf && strstr(o.err.buf, "/nonexistent/program"), "the reason names it: %s", o.err.buf);
	remote_out_release(&o);

	CHECK_INT(remote_spawn(big, now_mono() + 20, &o), 0, "a program with a lot of output");
	CHECK_INT((long long)o.out.len, REMOTE_MAX_OUTPUT, "the output is capped, the rest read and dropped");
	CHECK_INT(o.status, 0, "and it ran to its end");
	remote_out_release(&o);
	sb_release(&why);
}

struct par_data {
	pthread_mutex_t mu;
	int calls[40];
	int running, most;
};

static void par_fn(int i, void *data)
{
	struct par_data *d = data;

	pthread_mutex_lock(&d->mu);
	d->calls[i]++;
	if (++d->running > d->most)
		d->most = d->running;
	pthread_mutex_unlock(&d->mu);
	usleep(50000);
	pthread_mutex_lock(&d->mu);
	d->running--;
	pthread_mutex_unlock(&d->mu);
}

static void test_parallel(void)
{
	struct par_data d = { PTHREAD_MUTEX_INITIALIZER, { 0 }, 0, 0 };
	int once = 1;

	remote_parallel(40, 8, par_fn, &d);
	for (int i = 0; i < 40; i++)
		once &= d.calls[i] == 1;
	CHECK(once, "every item handled exactly once");
	CHECK(d.most > 1 && d.most <= 8, "at most 8 at once, more than one: %d", d.most);
	memset(d.calls, 0, sizeof(d.calls));
	d.most = 0;
	remote_parallel(5, 1, par_fn, &d);
	CHECK_INT(d.most, 1, "jobs 1: one at a time");
	CHECK_INT(d.calls[0] + d.calls[4], 2, "jobs 1: every item");
}

static int first_text(const struct store_row *row, void *data)
{
	sb_adds(data, row->text[0] ? row->text[0] : "NULL");
	return 0;
}

static void test_snapshot(void)
{
	char dir[] = "/tmp/test_remote.XXXXXX";
	char *db, *snap;
	struct store *st, *ro;
	int64_t run;

	if (!mkdtemp(dir)) {
		CHECK(0, "mkdtemp");
		return;
	}
	db = xasprintf("%s/a.db", dir);
	snap = xasprintf("%s/snap.db", dir);
	CHECK_INT(store_open(db, STORE_RW, &st), 0, "a database");
	CHECK_INT(store_run_begin(st, "sweep run x", "x", 1, &run), 0, "a run");
	/* A transaction still open while the snapshot is taken: its row is not in the copy. */
	CHECK_INT(store_begin(st), 0, "a transaction left open");
	CHECK_INT(store_run_begin(st, "sweep run y", "y", 2, &run), 0, "a second run, not committed");
	CHECK_INT(store_snapshot(db, snap), 0, "snapshot of a database being written");
	CHECK_INT(store_open(snap, STORE_RO, &ro), 0, "the snapshot opens as a sweep database");
	if (ro) {
		struct strbuf got = STRBUF_INIT;

		CHECK_INT(store_query(ro, "PRAGMA journal_mode", NULL, 0, 0, first_text, &got), 0, "journal mode");
		CHECK_STR(got.buf, "delete", "one file: rollback journal, no -wal to carry");
		sb_reset(&got);
		CHECK_INT(store_query(ro, "SELECT group_concat(sweep) FROM runs", NULL, 0, 1, first_text, &got), 0,
			  "runs");
		CHECK_STR(got.buf, "x", "the committed run only");
		sb_release(&got);
		store_close(ro);
	}
	{
		char *wal = xasprintf("%s-wal", snap);

		CHECK(access(wal, F_OK) != 0, "no -wal beside the snapshot");
		free(wal);
	}
	CHECK_INT(store_snapshot(db, snap), -1, "a snapshot never overwrites a file");
	store_rollback(st);
	store_close(st);
	{
		char *cmd = xasprintf("rm -rf %s", dir);

		CHECK_INT(system(cmd), 0, "clean up");
		free(cmd);
	}
	free(db);
	free(snap);
}

/* A host's build is keyed on the commit and the set of make variables: the last value of a name counts,
 * the order does not, and another set is another key. */
static void test_build_key(void)
{
	struct launch_source src = { .commit = STRBUF_INIT };
	struct strbuf set = STRBUF_INIT, k1 = STRBUF_INIT, k2 = STRBUF_INIT;

	sb_adds(&src.commit, "0123456789abcdef0123456789abcdef01234567");
	launch_make_set("CUDA=1 CC=gcc CUDA=0", &set);
	CHECK_STR(set.buf, "CC=gcc CUDA=0", "the last value of each name, by name");
	launch_make_set(NULL, &set);
	CHECK_STR(set.buf, "", "no variables");
	launch_make_set("CUDA_ARCH=-arch=sm_90 CUDA=0", &set);
	CHECK_STR(set.buf, "CUDA=0 CUDA_ARCH=-arch=sm_90", "a name that starts another sorts first");
	launch_build_key(&src, NULL, &k1);
	CHECK_STR(k1.buf, src.commit.buf, "no variables: the commit");
	launch_build_key(&src, "CUDA=0 CC=gcc", &k1);
	launch_build_key(&src, "CC=gcc CUDA=1 CUDA=0", &k2);
	CHECK_STR(k1.buf, k2.buf, "the same set, another order: one key");
	CHECK_INT((long long)k1.len, 40 + 9, "the commit and 8 hex digits");
	CHECK(!strncmp(k1.buf, src.commit.buf, 40) && k1.buf[40] == '-', "the commit first: %s", k1.buf);
	launch_build_key(&src, "CC=nosuchcc CUDA=0", &k2);
	CHECK(strcmp(k1.buf, k2.buf), "another set, another key: %s", k2.buf);
	sb_release(&src.commit);
	sb_release(&set);
	sb_release(&k1);
	sb_release(&k2);
}

int main(void)
{
	test_build_key();
	test_inventory_ssh();
	test_inventory_ssh_errors();
	test_quote();
	test_spawn();
	test_parallel();
	test_snapshot();
	return test_done();
}
