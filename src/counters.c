/* counters.c: a spec's counters: read by Nsight Compute's CLI over one untimed run of a command cell's
 * program (ncu --csv), and the one line a result carries when they could not be. */
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "counters.h"
#include "counters_cupti.h"
#include "spawn.h"
#include "util.h"

/* ncu's output kept: its CSV has a row per kernel and metric. */
#define COUNTERS_CAPTURE (16u << 20)
/* A run under ncu replays each kernel once per pass of counters: far slower than the timed runs. */
#define COUNTERS_TIMEOUT_FACTOR 20

/* The next field of a CSV line at *p (quotes removed, "" as "), into f; *p moves past its comma. 0 at the
 * line's end. */
static int csv_field(const char **p, struct strbuf *f)
{
	const char *s = *p;

	sb_reset(f);
	if (!*s || *s == '\n' || *s == '\r')
		return 0;
	if (*s == '"') {
		for (s++; *s && *s != '\n'; s++) {
			if (*s == '"' && s[1] == '"')
				sb_add(f, s++, 1);
			else if (*s == '"')
				break;
			else
				sb_add(f, s, 1);
		}
		if (*s == '"')
			s++;
	} else {
		for (; *s && *s != ',' && *s != '\n' && *s != '\r'; s++)
			sb_add(f, s, 1);
	}
	if (!f->buf)
		sb_add(f, "", 0);
	*p = *s == ',' ? s + 1 : s;
	return 1;
}

/* A value as ncu prints it: thousands separated by commas ("2,147,483,648"). */
static int counters_value(const char *text, double *v)
{
	char buf[64];
	size_t k = 0;

	for (; *text && k + 1 < sizeof(buf); text++)
		if (*text != ',')
			buf[k++] = *text;
	buf[k] = '\0';
	return parse_double(buf, v);
}

static int counters_ends(const char *name, const char *suffix)
{
	size_t a = strlen(name), b = strlen(suffix);

	return a > b && !strcmp(name + a - b, suffix);
}

void counters_fold(const char *name, struct counter_sum *c, double value)
{
	if (!c->n)
		c->v = value;
	else if (counters_ends(name, ".max"))
		c->v = fmax(c->v, value);
	else if (counters_ends(name, ".min"))
		c->v = fmin(c->v, value);
	else
		c->v += value;
	c->n++;
}

/* Which column is called name in the header line at p, else -1. */
static int csv_column(const char *p, const char *name, struct strbuf *f)
{
	for (int i = 0; csv_field(&p, f); i++)
		if (!strcmp(f->buf, name))
			return i;
	return -1;
}

/* The last ==ERROR== line of ncu's into why. */
static void counters_error(const char *text, char *why, size_t wn)
{
	const char *e = NULL, *p;

	for (p = strstr(text, "==ERROR=="); p; p = strstr(p + 1, "==ERROR=="))
		e = p;
	if (!e) {
		snprintf(why, wn, "ncu gave no rows of the counters asked");
		return;
	}
	e += strlen("==ERROR==");
	while (*e == ' ')
		e++;
	snprintf(why, wn, "ncu: %.*s", (int)strcspn(e, "\r\n"), e);
}

int counters_parse_ncu(const char *text, char *const *names, int n, struct result *r, char *why, size_t wn)
{
	struct counter_sum *sum = xcalloc((size_t)n, sizeof(*sum));
	struct strbuf f = STRBUF_INIT;
	int cname = -1, cvalue = -1, set = 0;
	const char *line;

	for (line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
		const char *p = line;
		char *metric = NULL;
		double v;
		int i, ok = 0;

		if (cname < 0) {
			if ((cname = csv_column(line, "Metric Name", &f)) >= 0)
				cvalue = csv_column(line, "Metric Value", &f);
			if (cvalue < 0)
				cname = -1;
			continue;
		}
		if (!strncmp(line, "==", 2))
			continue;   /* ncu's own lines */
		for (i = 0; csv_field(&p, &f); i++) {
			if (i == cname)
				metric = xstrdup(f.buf);
			else if (i == cvalue)
				ok = !counters_value(f.buf, &v);
		}
		for (i = 0; metric && ok && i < n; i++)
			if (!strcmp(metric, names[i]))
				counters_fold(names[i], &sum[i], v);
		free(metric);
	}
	set = counters_set(names, n, sum, r);
	if (!set)
		counters_error(text, why, wn);
	sb_release(&f);
	free(sum);
	return set;
}

int counters_set(char *const *names, int n, const struct counter_sum *sum, struct result *r)
{
	int set = 0;

	for (int i = 0; i < n; i++) {
		int plain = !counters_ends(names[i], ".sum") && !counters_ends(names[i], ".max") &&
			    !counters_ends(names[i], ".min");

		if (!sum[i].n)
			continue;
		result_set_metric(r, names[i], plain ? sum[i].v / sum[i].n : sum[i].v);
		set++;
	}
	return set;
}

/* ncu's options, then argv: a new array of pointers (not of strings) the caller frees. --clock-control none:
 * ncu's default locks the GPU's clocks to base while it profiles, a change of the card's settings that sweep
 * never makes (the counters come from the card as found, as CUPTI's do). */
static char **counters_argv(char *ncu, char *list, int from_start, char *const *argv)
{
	static char *const opts[] = { "--csv", "--print-units", "base", "--target-processes", "all",
				      "--clock-control", "none", "--metrics" };
	static char *const off[] = { "--profile-from-start", "off" };
	size_t na = 0, no = sizeof(opts) / sizeof(opts[0]), k;
	char **av;

	while (argv[na])
		na++;
	av = xcalloc(na + no + 5, sizeof(*av));
	av[0] = ncu;
	memcpy(av + 1, opts, no * sizeof(*av));
	av[no + 1] = list;
	k = no + 2;
	if (!from_start) {
		memcpy(av + k, off, sizeof(off));
		k += 2;
	}
	memcpy(av + k, argv, na * sizeof(*av));
	return av;
}

int counters_command(const struct spec *s, char *const *argv, char *const *env, int from_start,
		     struct result *r, char *why, size_t n)
{
	char ncu[] = "ncu";
	struct strbuf list = STRBUF_INIT;
	struct spawn_result end;
	struct spawn_opts o = {
		.env = env, .in = SPAWN_NULL,
		.out = { .to = SPAWN_CAPTURE, .cap = COUNTERS_CAPTURE },
		.err = { .to = SPAWN_CAPTURE, .cap = 1u << 16, .tail = 1 },
		.deadline = s->timeout > 0 ? now_mono() + COUNTERS_TIMEOUT_FACTOR * s->timeout : 0,
		.term_grace = 2, .linger = 1,
	};
	char **av;
	int ret = -1;

	for (int i = 0; i < s->ncounters; i++)
		sb_addf(&list, "%s%s", i ? "," : "", s->counters[i]);
	o.argv = av = counters_argv(ncu, list.buf, from_start, argv);
	if (spawn_run(&o, &end)) {
		if (end.exec_errno == ENOENT)
			snprintf(why, n, "no ncu (Nsight Compute's CLI) on PATH: none read");
		else
			snprintf(why, n, "cannot run ncu: %s", strerror(end.exec_errno));
	} else {
		/* ncu says why it read nothing on stdout or stderr, depending on the version */
		sb_add(&end.out, "\n", 1);
		sb_add(&end.out, end.err.buf ? end.err.buf : "", end.err.len);
		ret = counters_parse_ncu(end.out.buf, s->counters, s->ncounters, r, why, n) > 0 ? 0 : -1;
	}
	spawn_result_release(&end);
	free(av);
	sb_release(&list);
	return ret;
}

void counters_note(struct result *r, const char *why)
{
	char *s = xasprintf("%s%scounters: %s", r->err ? r->err : "", r->err && *r->err ? "\n" : "", why);

	free(r->err);
	r->err = s;
}

#ifndef SWEEP_CUDA
/* counters_cupti.cu's answer in a build without CUDA. */
int counters_cupti(char *const *names, int n, int gpu, void *cuctx, const struct counters_launch *l,
		   struct result *r, char *why, size_t wn)
{
	snprintf(why, wn, "no CUPTI in a build without CUDA");
	return COUNTERS_NO_CUPTI;
}
#endif
