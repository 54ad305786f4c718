/* plot.c: `sweep plot DB`: a metric against a key, through gnuplot. */
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
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* One option into o. FAIL_USAGE after error() for a bad value; SHOW_USAGE for a malformed command line. */
static int plot_opt(struct report_opts *o, int opt, const char *arg)
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
	case 'P':
		return o->pool || report_opts_split("--pool", arg, &o->pool, &o->npool) ? SHOW_USAGE : FAIL_OK;
	case 't':
		if (report_opts_stat(arg, REPORT_PLOT))
			return FAIL_USAGE;
		o->stat = arg;
		break;
	default: return SHOW_USAGE;
	}
	return FAIL_OK;
}

static int plot_fn(int argc, char **argv)
{
	struct report_opts o;
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
		ret = plot_opt(&o, opt, optarg);
	}
	if (!ret && (optind != argc - 1 || !o.x || !o.metric || !o.out)) {
		if (optind == argc - 1)
			error("plot needs --x KEY, --y METRIC and --out FILE.png|svg|pdf");
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
		else
			ret = report_run(&o);
	}
	report_opts_release(&o);
	return exitcode_of(ret);
}

const struct cmd cmd_plot = { "plot", plot_fn,
	"sweep plot DB --x KEY --y METRIC [--series KEY] [--facet KEY] [--logx] [--logy]\n"
	"                --out FILE.png|svg|pdf [OPTIONS]",
	"Plot a metric (aggregated over passes with --stat) against a key, one line per --series value\n"
	"and one panel per --facet value, through gnuplot. A parameter that varies inside a point must be\n"
	"named: as --series or --facet, or with --pool KEYS to aggregate over it (the y label says so).\n"
	"FILE.dat and FILE.gp are written beside the picture; without gnuplot they are all that is\n"
	"written, and the command says how to render them. Text in the script is escaped (control\n"
	"characters shown as '?').\n"
	"options: --sweep NAME, --where EXPR, --stat S, --pool KEYS, --title T, --xlabel L, --ylabel L\n"
	"(the defaults name the key and the metric with its unit)." };
