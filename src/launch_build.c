/* launch_build.c: sweep built on a host from the source of this binary's commit (launch --build). */
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launch.h"
#include "remote.h"
#include "util.h"

/* Run git with args in dir; its first output line into out (when not NULL). -1 with why on failure. */
static int git(const char *dir, const char *const *args, struct strbuf *out, struct strbuf *why)
{
	struct remote_argv a = { 0 };
	struct remote_out o;
	int ret = -1;

	ALLOC_GROW(a.v, 4, a.alloc);
	a.v[a.n++] = xstrdup("git");
	a.v[a.n++] = xstrdup("-C");
	a.v[a.n++] = xstrdup(dir);
	for (; *args; args++) {
		ALLOC_GROW(a.v, a.n + 2, a.alloc);
		a.v[a.n++] = xstrdup(*args);
	}
	a.v[a.n] = NULL;
	if (remote_spawn(a.v, now_mono() + 120, &o) || o.status || o.signal || o.timed_out) {
		sb_addf(why, "git %s in '%s' failed: ", a.v[3], dir);
		remote_why(&o, why);
	} else {
		if (out)
			sb_add(out, o.out.buf ? o.out.buf : "", o.out.buf ? strcspn(o.out.buf, "\n") : 0);
		ret = 0;
	}
	remote_out_release(&o);
	remote_argv_release(&a);
	return ret;
}

int launch_source(const char *exe, int quiet, struct launch_source *src)
{
	char *d1 = xstrdup(exe), *dir = NULL;
	struct strbuf top = STRBUF_INIT, dirty = STRBUF_INIT, why = STRBUF_INIT;
	const char *toplevel[] = { "rev-parse", "--show-toplevel", NULL };
	const char *head[] = { "rev-parse", "--verify", "HEAD", NULL };
	const char *status[] = { "status", "--porcelain", "--untracked-files=no", NULL };
	char tmpl[] = "/tmp/sweep-source-XXXXXX";
	int fd, ret = -1;

	memset(src, 0, sizeof(*src));
	sb_init(&src->commit);
	/* The checkout the binary was built in: BIN is CHECKOUT/build/sweep. */
	dir = xasprintf("%s/..", dirname(d1));
	if (git(dir, toplevel, &top, &why) || git(top.buf, head, &src->commit, &why)) {
		if (!quiet)
			error("--build: no source for this binary ('%s' is not in a git checkout: %s)", exe,
			      why.buf);
		goto out;
	}
	if (strspn(src->commit.buf, "0123456789abcdef") != src->commit.len || src->commit.len < 7) {
		if (!quiet)
			error("--build: '%s' has no commit HEAD", top.buf);
		goto out;
	}
	if (!quiet && !git(top.buf, status, &dirty, &why) && dirty.len)
		warning("--build: '%s' has changes not committed: the hosts build commit %.12s without them",
			top.buf, src->commit.buf);
	if ((fd = mkstemp(tmpl)) < 0) {
		if (!quiet)
			error("cannot create a file in /tmp: %s", strerror(errno));
		goto out;
	}
	close(fd);
	src->archive = xasprintf("%s.tar.gz", tmpl);
	unlink(tmpl);
	{
		char *prefix = xasprintf("--prefix=%s/", src->commit.buf);
		char *outp = xasprintf("--output=%s", src->archive);
		const char *archive[] = { "archive", "--format=tar.gz", prefix, outp, src->commit.buf, NULL };
		int r = git(top.buf, archive, NULL, &why);

		free(prefix);
		free(outp);
		if (r) {
			if (!quiet)
				error("--build: %s", why.buf);
			goto out;
		}
	}
	ret = 0;
out:
	if (ret)
		launch_source_release(src);
	free(d1);
	free(dir);
	sb_release(&top);
	sb_release(&dirty);
	sb_release(&why);
	return ret;
}

void launch_source_release(struct launch_source *src)
{
	if (src->archive)
		unlink(src->archive);
	free(src->archive);
	sb_release(&src->commit);
	memset(src, 0, sizeof(*src));
}

int launch_make_arg_ok(const char *s)
{
	size_t n = strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");

	if (!n || s[n] != '=' || (s[0] >= '0' && s[0] <= '9') ||
	    strspn(s + n + 1, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.,:/=+-@%")
	    != strlen(s + n + 1))
		return error("--make takes NAME=VALUE (no spaces, quotes or '$' in VALUE), not '%s'", s);
	return 0;
}

static int make_var_cmp(const void *a, const void *b)
{
	const char *x = *(const char *const *)a, *y = *(const char *const *)b;
	size_t nx = strcspn(x, "="), ny = strcspn(y, "=");
	int c = strncmp(x, y, nx < ny ? nx : ny);

	return c ? c : (nx > ny) - (nx < ny);
}

void launch_make_set(const char *args, struct strbuf *out)
{
	char *copy = xstrdup(args ? args : ""), **v = NULL, *save = NULL;
	size_t n = 0, alloc = 0;

	sb_reset(out);
	sb_adds(out, "");
	/* make takes the last value of a variable given twice: that one stays, at its name's place. */
	for (char *t = strtok_r(copy, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		size_t i;

		for (i = 0; i < n && make_var_cmp(&v[i], &t); i++)
			;
		if (i == n) {
			ALLOC_GROW(v, n + 1, alloc);
			n++;
		}
		v[i] = t;
	}
	if (n)
		qsort(v, n, sizeof(*v), make_var_cmp);
	for (size_t i = 0; i < n; i++)
		sb_addf(out, "%s%s", i ? " " : "", v[i]);
	free(v);
	free(copy);
}

void launch_build_key(const struct launch_source *src, const char *make_args, struct strbuf *key)
{
	struct strbuf set = STRBUF_INIT;

	launch_make_set(make_args, &set);
	sb_reset(key);
	sb_adds(key, src->commit.buf);
	if (set.len)
		sb_addf(key, "-%08llx", (unsigned long long)(hash64(HASH64_INIT, set.buf, set.len) >> 32));
	sb_release(&set);
}

/* The build script's answers: 0 when it built (or had built: *reused = 1); else -1 with its error and the
 * end of its log appended to msg. */
static int build_answer(const struct remote_out *o, int *reused, struct strbuf *msg)
{
	int ret = -1, said = 0;

	for (const char *p = o->out.buf ? o->out.buf : ""; *p;) {
		size_t len = strcspn(p, "\n"), t = strlen(REMOTE_TAG);
		char *line = xstrndup(p, len);

		if (len > t && !strncmp(line, REMOTE_TAG, t)) {
			const char *k = line + t;

			if (!strncmp(k, "built ", 6)) {
				ret = 0;
			} else if (!strncmp(k, "had ", 4)) {
				ret = 0;
				*reused = 1;
			} else if (!strncmp(k, "error ", 6)) {
				sb_add_printable(msg, k + 6, 300);
				said = 1;
			} else if (!strncmp(k, "log ", 4) && said) {
				sb_adds(msg, "\n    ");
				sb_add_printable(msg, k + 4, 300);
			}
		}
		free(line);
		p += len + (p[len] == '\n');
	}
	if (ret && !said) {
		sb_adds(msg, "no answer from the build: ");
		remote_why(o, msg);
	}
	return ret;
}

int launch_build(const struct inventory_host *h, const struct launch_source *src, const char *bin,
		 const char *make_args, double deadline, int *reused, struct strbuf *msg)
{
	const char *c = src->commit.buf;
	struct strbuf sc = STRBUF_INIT, key = STRBUF_INIT, set = STRBUF_INIT;
	char *rel, *path;
	struct remote_out o;
	int ret = -1, have;

	/* A build is the commit's with the make variables' set (CUDA=0 then CUDA=1 builds twice). */
	launch_make_set(make_args, &set);
	launch_build_key(src, make_args, &key);
	rel = xasprintf(".sweep-build/%s.tar.gz", key.buf);
	path = remote_path(h, rel);
	*reused = 0;

	/* The archive first: a folder for it, then scp. */
	launch_script_begin(&sc, h, 1);
	sb_addf(&sc, "mkdir -p .sweep-build results || { say error cannot make folders in \"$W\"; exit 0; }\n"
		"if [ -f .sweep-build/%s/.built ]; then say have; else say ready; fi\n", key.buf);
	if (remote_run(h, sc.buf, deadline, &o) || remote_unreachable(&o) ||
	    !strstr(o.out.buf ? o.out.buf : "", REMOTE_TAG)) {
		sb_adds(msg, "cannot prepare the build: ");
		remote_why(&o, msg);
		remote_out_release(&o);
		goto out;
	}
	if (strstr(o.out.buf, REMOTE_TAG "error ")) {
		const char *e = strstr(o.out.buf, REMOTE_TAG "error ") + strlen(REMOTE_TAG "error ");
		char *line = xstrndup(e, strcspn(e, "\n"));

		sb_add_printable(msg, line, 300);
		free(line);
		remote_out_release(&o);
		goto out;
	}
	/* Built there before: the source is not sent again. */
	have = strstr(o.out.buf, REMOTE_TAG "have") != NULL;
	remote_out_release(&o);
	if (!have && remote_put(h, src->archive, path, deadline, &o)) {
		sb_addf(msg, "cannot copy the source of %.12s: ", c);
		remote_why(&o, msg);
		remote_out_release(&o);
		goto out;
	}
	if (!have)
		remote_out_release(&o);
	/* Built once a commit and set of make variables: .built marks a finished build (and says with
	 * what), and the binary is copied into place. Only what building and running need is installed
	 * (make deps-run: no Slurm, munge or sshd). The archive's folder is the commit: unpacked beside. */
	sb_reset(&sc);
	launch_script_begin(&sc, h, 0);
	sb_adds(&sc, "B=");
	remote_quote(&sc, bin);
	sb_addf(&sc, "; C=%s; K=%s; S=.sweep-build/$K; G=results/build-$K.log; M='%s'\n", c, key.buf, set.buf);
	sb_adds(&sc,
		"if [ -x \"$S/build/sweep\" ] && [ -f \"$S/.built\" ]; then say had \"$K\"; else\n"
		"  rm -rf \"$S\" \"$S.part\"; mkdir -p \"$S.part\"\n"
		"  { tar -xzf \"$S.tar.gz\" -C \"$S.part\" && mv \"$S.part/$C\" \"$S\"; } >\"$G\" 2>&1 ||"
		" { say error cannot unpack the source; tail -n 3 \"$G\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; }\n"
		"  rm -rf \"$S.part\" \"$S.tar.gz\"\n"
		"  hasbin make || { say error no make on the host \"(apt-get install make, then again)\"; exit 0; }\n"
		"  echo \"--- sweep launch --build $C${M:+ $M} $(date -u +%Y-%m-%dT%H:%M:%SZ)\" >>\"$G\"\n"
		"  (cd \"$S\" && make deps-run && make -j\"$(nproc 2>/dev/null || echo 2)\" COMMIT=\"$C\" $M build/sweep)"
		" >>\"$G\" 2>&1 || { say error the build failed, see \"$W/$G\";"
		" tail -n 5 \"$G\" | sed 's/^/" REMOTE_TAG "log /'; exit 0; }\n"
		"  echo \"$C${M:+ $M}\" >\"$S/.built\"\n"
		"fi\n"
		"rm -f \"$S.tar.gz\"\n"
		"case $B in */*) mkdir -p \"${B%/*}\" ;; esac\n"
		"cp \"$S/build/sweep\" \"$B.build-part\" && mv -f \"$B.build-part\" \"$B\" ||"
		" { say error cannot put the binary at \"$W/$B\"; exit 0; }\n"
		"\"$B\" --version >/dev/null 2>&1 || { say error the binary built does not run:"
		" \"$(\"$B\" --version 2>&1 | tail -n 1)\"; exit 0; }\n"
		"say built \"$K\"\n");
	if (remote_run(h, sc.buf, deadline, &o) || remote_unreachable(&o)) {
		sb_adds(msg, remote_unreachable(&o) ? "unreachable during the build: " : "the build: ");
		remote_why(&o, msg);
		remote_out_release(&o);
		goto out;
	}
	ret = build_answer(&o, reused, msg);
	remote_out_release(&o);
out:
	sb_release(&sc);
	sb_release(&key);
	sb_release(&set);
	free(rel);
	free(path);
	return ret;
}
