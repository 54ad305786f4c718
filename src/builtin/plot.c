/* plot.c: `sweep plot DB`: a metric against a key, or a comparison or the shares of a limit as a figure,
 * through gnuplot. */
#include <getopt.h>
#include <string.h>

#include "../report.h"
#include "builtin.h"

static const struct option plot_long_opts[] = {
	{ "x", required_argument, NULL, 'x' },
	{ "y", required_argument, NULL, 'y' },
	{ "series", required_argument, NULL, 's' },
	{ "facet", required_argument, NULL, 'f' },
	{ "logx", no_argument, NULL, 'L' },
	{ "logy", no_argument, NULL, 'Y' },
	{ "out", required_argument, NULL, 'o' },
	{ "sweep", required_argument, NULL, 'S' },
	{ "where", required_argument, NULL, 'w' },
	{ "stat", required_argument, NULL, 't' },
	{ "pool", required_argument, NULL, 'P' },
	{ "title", required_argument, NULL, 'T' },
	{ "xlabel", required_argument, NULL, 'X' },
	{ "ylabel", required_argument, NULL, 'V' },
	{ "errors", required_argument, NULL, 'E' },
	{ "spread", required_argument, NULL, 'R' },
	{ "compare", required_argument, NULL, 'C' },
	{ "limit", required_argument, NULL, 'l' },
	{ "rows", required_argument, NULL, 'r' },
	{ "summary", optional_argument, NULL, 'u' },
	{ "paired-by", required_argument, NULL, 'p' },
	{ "ci", required_argument, NULL, 'i' },
	{ "boot", required_argument, NULL, 'b' },
	{ "seed", required_argument, NULL, 'e' },
	{ "interval", required_argument, NULL, 'I' },
	{ "unit", required_argument, NULL, 'U' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A list option given once. SHOW_USAGE when given twice or with an empty name. */
static int list_opt(const char *what, const char *arg, char ***v, int *n)
{
	return *v || report_opts_split(what, arg, v, n) ? SHOW_USAGE : FAIL_OK;
}

/* What the options say before the figure is known: --compare's argument, --stat (checked against the
 * figure's mode), and whether --compare and --limit were both given. */
struct plot_args {
	const char *compare, *stat;
	int both, interval;
};

/* One option into o (and a). FAIL_USAGE after error() for a bad value; SHOW_USAGE for a malformed
 * command line. */
static int plot_opt(struct report_opts *o, struct plot_args *a, int opt, const char *arg)
{
	switch (opt) {
	case 'x': o->x = arg; break;
	case 'y': o->metric = arg; break;
	case 's': o->series = arg; break;
	case 'f': o->facet = arg; break;
	case 'L': o->logx = 1; break;
	case 'Y': o->logy = 1; break;
	case 'o': o->out = arg; break;
	case 'S': o->sweep = arg; break;
	case 'w': o->where = arg; break;
	case 'T': o->title = arg; break;
	case 'X': o->xlabel = arg; break;
	case 'V': o->ylabel = arg; break;
	case 'P': return list_opt("--pool", arg, &o->pool, &o->npool);
	case 'r': return list_opt("--rows", arg, &o->rows, &o->nrows);
	case 't': a->stat = arg; break;
	case 'E': return report_opts_errors(o, arg);
	case 'R': return report_opts_level("--spread", arg, &o->spread);
	case 'C':
		a->both |= !!o->limit;
		a->compare = arg;
		o->mode = REPORT_COMPARE;
		break;
	case 'l':
		a->both |= !!a->compare;
		o->limit = arg;
		o->mode = REPORT_LIMIT;
		break;
	case 'U': o->unit = arg; break;
	case 'I':
		a->interval = 1;
		return report_opts_interval(o, arg);
	case 'u':
		o->summary = 1;
		o->summary_by = arg && *arg ? arg : NULL;
		break;
	case 'p': o->paired_by = arg; break;
	case 'i': return report_opts_bootstrap(o, "ci", arg);
	case 'b': return report_opts_bootstrap(o, "boot", arg);
	case 'e': return report_opts_bootstrap(o, "seed", arg);
	default: return SHOW_USAGE;
	}
	return FAIL_OK;
}

/*
 * What cannot go together: a line plot takes --x and the options of its points; a figure of --compare or
 * --limit takes --rows (--limit: host unless given), --summary and --unit, and draws the table's own
 * interval. --stat as the figure's mode takes it (--compare: mean unless given).
 */
static int plot_check(struct report_opts *o, const struct plot_args *a)
{
	int ret;

	if (a->both)
		return fail_usage("--compare and --limit are separate figures: give one");
	if (a->stat && (ret = report_opts_stat(a->stat, o->mode)))
		return ret;
	o->stat = a->stat ? a->stat : a->compare ? "mean" : "median";
	if (o->unit && !o->summary)
		return fail_usage("--unit goes with --summary");
	if (a->interval && !a->compare)
		return fail_usage("--interval goes with --compare");
	if (o->mode == REPORT_PLOT) {
		if (o->nrows || o->summary || o->paired_by)
			return fail_usage("--rows, --summary and --paired-by go with --compare or --limit");
		if (o->spread && o->errors != ERRORS_SPREAD)
			return fail_usage("--spread goes with --errors spread");
		return FAIL_OK;
	}
	o->figure = 1;
	if (o->x || o->series || o->facet || o->logx || o->errors != ERRORS_SPREAD || o->spread)
		return fail_usage("--%s draws its table's rows with the table's interval: --x, --series, --facet, "
				  "--logx, --errors and --spread go with a line plot", a->compare ? "compare" : "limit");
	if (o->mode == REPORT_LIMIT && !o->nrows && report_opts_split("--rows", "host", &o->rows, &o->nrows))
		return FAIL_USAGE;
	return a->compare ? report_opts_compare(o, a->compare) : FAIL_OK;
}

static int plot_fn(int argc, char **argv)
{
	struct report_opts o;
	struct plot_args a = { NULL, NULL, 0, 0 };
	const char *ext;
	int opt, ret = FAIL_OK;

	report_opts_init(&o);
	o.mode = REPORT_PLOT;
	o.fmt = &table_text;
	while (!ret && (opt = getopt_long(argc, argv, "h", plot_long_opts, NULL)) != -1) {
		if (opt == 'h') {
			cmd_usage(&cmd_plot);
			report_opts_release(&o);
			return EXIT_OK;
		}
		ret = plot_opt(&o, &a, opt, optarg);
	}
	if (!ret && (optind != argc - 1 || (!o.x && o.mode == REPORT_PLOT) || !o.metric || !o.out)) {
		if (optind == argc - 1)
			error("plot needs --x KEY, --y METRIC and --out FILE.png|svg|pdf (--compare or --limit "
			      "in place of --x)");
		ret = SHOW_USAGE;
	}
	if (ret == SHOW_USAGE) {
		report_opts_release(&o);
		return cmd_usage(&cmd_plot);
	}
	if (!ret) {
		ext = strrchr(o.out, '.');
		o.db = argv[optind];
		if (!ext || strchr(ext, '/') || (strcmp(ext, ".png") && strcmp(ext, ".svg") && strcmp(ext, ".pdf")))
			ret = fail_usage("--out '%s': the picture is made from the name's extension: .png, .svg or "
					 ".pdf", o.out);
		else if (!(ret = plot_check(&o, &a)))
			ret = report_run(&o);
	}
	report_opts_release(&o);
	return exitcode_of(ret);
}

const struct cmd cmd_plot = { "plot", plot_fn,
	"sweep plot DB --x KEY --y METRIC [--series KEY] [--facet KEY] [--logx] [--logy]\n"
	"                [--errors none|spread|ci] --out FILE.png|svg|pdf [OPTIONS]\n"
	"       sweep plot DB --compare KEY=A/B --y METRIC [--rows KEYS] --out FILE [OPTIONS]\n"
	"       sweep plot DB --limit EXPR --y METRIC [--rows KEYS] [--summary[=KEY]] --out FILE [OPTIONS]",
	"Plot a metric (aggregated over passes with --stat) against a key, one line per --series value\n"
	"and one panel per --facet value, through gnuplot. A parameter that varies inside a point must be\n"
	"named: as --series or --facet, or with --pool KEYS to aggregate over it (the y label says so).\n"
	"Each point carries an interval: --errors spread (the default) the min-max of\n"
	"the values it aggregates (passes, hosts, pooled keys), or with --spread PCT their central PCT %\n"
	"(--spread 90: 5th to 95th percentile); --errors ci the 95 % interval of each result's median\n"
	"(databases that keep one; a time or a kernel's rate), --stat over the point's results; none.\n"
	"The legend, under the plot, names each series and, when some point has a bar, what the bars are.\n"
	"Sizes in bytes are labelled 64 KiB, 1 MiB; counts in SI from 10000 (16.4k); seconds in s, ms, us\n"
	"or ns; ticks on a log axis fall on the values the grid holds, a label that would touch the one\n"
	"before it left out.\n"
	"--compare KEY=A/B draws 'sweep report --compare' as a figure: a row per table row, labelled by its\n"
	"keys, the ratio A/B with its paired bootstrap interval as a bar, a line at 1 (--paired-by, --ci,\n"
	"--boot, --seed, --interval, --stat mean|geomean as for the report). --limit EXPR draws each row's\n"
	"share of its limit (--rows host unless given), grouped by --summary=KEY (e.g. label.class; --unit\n"
	"KEY as for the report), each group's mean and 95 % t interval as a band: the rows and summary\n"
	"'sweep report --limit' prints (a share's axis from 0; --logy a log axis). A value the table marks\n"
	"is ringed (†) or boxed (‡), the legend giving its footnote.\n"
	"FILE.dat (the numbers as 'sweep report --format csv' prints them) and FILE.gp are written beside\n"
	"the picture; without gnuplot they are all that is written, and the command says how to render\n"
	"them. Text in the script is escaped (control characters shown as '?').\n"
	"options: --sweep NAME, --where EXPR, --stat S, --pool KEYS, --title T, --xlabel L, --ylabel L\n"
	"(the defaults name the key and the metric with its unit)." };
