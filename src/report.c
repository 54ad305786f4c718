/* report.c: the options every report starts from: their defaults, and the values the commands parse with
 * the reports' knowledge (the statistics there are, KEY=A/B, lists of keys). */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

static void free_list(char **v, int n)
{
	for (int i = 0; i < n; i++)
		free(v[i]);
	free(v);
}

void report_opts_init(struct report_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->stat = "median";
	o->fmt = &table_md;
	o->ci = 0.95;
	o->boot = 10000;
	o->seed = 1;
	o->threshold = 0.03;
	o->bar = NAN;
	o->fail_above = NAN;
}

void report_opts_release(struct report_opts *o)
{
	free_list(o->rows, o->nrows);
	free_list(o->cols, o->ncols);
	free_list(o->pool, o->npool);
	free(o->cmp_key);
	free(o->cmp_a);
	free(o->cmp_b);
	memset(o, 0, sizeof(*o));
}

int report_opts_compare(struct report_opts *o, const char *arg)
{
	const char *eq = strchr(arg, '='), *slash = eq ? strchr(eq + 1, '/') : NULL;

	if (!eq || eq == arg || !slash || slash == eq + 1 || !slash[1] || strchr(slash + 1, '/'))
		return fail_usage("--compare takes KEY=A/B (such as system=cache/baseline), not '%s'", arg);
	o->cmp_key = xstrndup(arg, (size_t)(eq - arg));
	o->cmp_a = xstrndup(eq + 1, (size_t)(slash - eq - 1));
	o->cmp_b = xstrdup(slash + 1);
	for (int i = 0; i < o->nrows; i++)
		if (!strcmp(o->rows[i], o->cmp_key))
			return fail_usage("the compared key '%s' cannot also be a row key", o->cmp_key);
	if (o->paired_by && strcmp(o->paired_by, "item") && !strcmp(o->paired_by, o->cmp_key))
		return fail_usage("--paired-by %s: the pairs cannot be made by the compared key itself",
				  o->paired_by);
	return FAIL_OK;
}

int report_opts_split(const char *what, const char *list, char ***out, int *n)
{
	const char *p = list;

	*out = NULL;
	*n = 0;
	for (;;) {
		size_t len = strcspn(p, ",");

		if (!len) {
			free_list(*out, *n);
			*out = NULL;
			*n = 0;
			return fail_usage("%s: empty name in '%s'", what, list);
		}
		*out = xrealloc(*out, (size_t)(*n + 1) * sizeof(**out));
		(*out)[(*n)++] = xstrndup(p, len);
		if (!p[len])
			return FAIL_OK;
		p += len + 1;
	}
}

double report_opts_percentile(const char *stat)
{
	double v;

	if (stat[0] != 'p' || !stat[1] || stat[1 + strspn(stat + 1, "0123456789.")] || parse_double(stat + 1, &v) ||
	    v < 0 || v > 100)
		return NAN;
	return v / 100;
}

/* The names of stats_defs (levels only: what a limit's share and a plot take) as a message lists them,
 * "a, b, c" then " or d" when or_last. */
static void stat_names(struct strbuf *sb, int levels, int or_last)
{
	size_t n = 0, k = 0;

	for (size_t i = 0; i < stats_ndefs; i++)
		n += !levels || stats_defs[i].level;
	for (size_t i = 0; i < stats_ndefs; i++) {
		if (levels && !stats_defs[i].level)
			continue;
		sb_addf(sb, "%s%s", !k ? "" : or_last && k == n - 1 ? " or " : ", ", stats_defs[i].name);
		k++;
	}
}

int report_opts_stat(const char *stat, enum report_mode mode)
{
	const struct stats_def *def = stats_def_find(stat);
	struct strbuf sb = STRBUF_INIT;
	int ret = FAIL_OK;

	if (!def && isnan(report_opts_percentile(stat))) {
		stat_names(&sb, 0, 0);
		ret = fail_usage("--stat is %s or pNN (a percentile such as p90), not '%s'", sb.buf, stat);
	} else if ((mode == REPORT_LIMIT || mode == REPORT_PLOT) && !(def && def->level)) {
		stat_names(&sb, 1, 1);
		ret = fail_usage("--stat %s: %s takes %s", stat, mode == REPORT_LIMIT ? "--limit" : "a plot", sb.buf);
	} else if (mode == REPORT_COMPARE && strcmp(stat, "mean") && strcmp(stat, "geomean")) {
		ret = fail_usage("--stat %s: --compare takes mean (the ratio of means) or geomean (the geometric "
				 "mean of the per-unit ratios)", stat);
	} else if (mode == REPORT_DRIFT || mode == REPORT_SCORE) {
		ret = fail_usage("--stat goes with a table, --limit or --compare, not --%s",
				 mode == REPORT_DRIFT ? "drift" : "score");
	}
	sb_release(&sb);
	return ret;
}

int report_opts_errors(struct report_opts *o, const char *arg)
{
	static const char *const words[] = { [ERRORS_SPREAD] = "spread", [ERRORS_NONE] = "none", [ERRORS_CI] = "ci" };

	for (size_t i = 0; i < ARRAY_SIZE(words); i++)
		if (!strcmp(arg, words[i])) {
			o->errors = (int)i;
			return FAIL_OK;
		}
	return fail_usage("--errors is none, spread or ci, not '%s'", arg);
}

int report_opts_interval(struct report_opts *o, const char *arg)
{
	if (strcmp(arg, "percentile") && strcmp(arg, "bca"))
		return fail_usage("--interval is percentile or bca, not '%s'", arg);
	o->interval = !strcmp(arg, "bca") ? STATS_BCA : STATS_PERCENTILE;
	return FAIL_OK;
}

void report_opts_out_format(struct report_opts *o, int fmt_given)
{
	if (o->out && !fmt_given && table_format_of_path(o->out))
		o->fmt = table_format_of_path(o->out);
}

int report_opts_level(const char *opt, const char *s, double *out)
{
	double v;

	if (parse_double(s, &v) || v <= 0 || v >= 100)
		return fail_usage("%s takes a level in (0, 100), such as 95, not '%s'", opt, s);
	*out = v > 1 ? v / 100 : v;
	if (*out >= 1)
		return fail_usage("%s takes a level in (0, 100), such as 95, not '%s'", opt, s);
	return FAIL_OK;
}

int report_opts_number(const char *arg, long min, long max, const char *takes, long *out)
{
	if (parse_long(arg, out) || *out < min || *out > max)
		return fail_usage("%s, not '%s'", takes, arg);
	return FAIL_OK;
}

int report_opts_bootstrap(struct report_opts *o, const char *name, const char *arg)
{
	long l;
	int ret;

	if (!strcmp(name, "ci"))
		return report_opts_level("--ci", arg, &o->ci);
	if (!strcmp(name, "boot")) {
		/* fewer than 100 resamples put the bounds on a handful of them; under 1000 is warned of */
		if (!(ret = report_opts_number(arg, 100, 10000000, "--boot takes 100 to 10000000 resamples", &l)))
			o->boot = (int)l;
		return ret;
	}
	if (!(ret = report_opts_number(arg, LONG_MIN, LONG_MAX, "--seed takes an integer", &l)))
		o->seed = (uint64_t)l;
	return ret;
}
