/* plot.c: `sweep plot DB`: a metric against a key, through gnuplot. */
#include <getopt.h>
#include <string.h>

#include "../report.h"
#include "builtin.h"

static const struct option plot_opts[] = {
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


static int plot_fn(int argc, char **argv)
{
	struct report r = { 0 };
	struct plot_opts o = { 0 };
	const char *ext;
	int opt, ret = EXIT_USAGE, rc;

	r.stat = "median";
	r.fmt = &table_text;
	while ((opt = getopt_long(argc, argv, "h", plot_opts, NULL)) != -1) {
		switch (opt) {
		case 'x': o.x = optarg; break;
		case 'y': r.metric = optarg; break;
		case 's': o.series = optarg; break;
		case 'f': o.facet = optarg; break;
		case 'L': o.logx = 1; break;
		case 'Y': o.logy = 1; break;
		case 'o': r.out = optarg; break;
		case 'S': r.sweep_arg = optarg; break;
		case 'w': r.where = optarg; break;
		case 'T': o.title = optarg; break;
		case 'P':
			if (r.pool || report_split("--pool", optarg, &r.pool, &r.npool)) {
				ret = cmd_usage(&cmd_plot);
				goto out;
			}
			break;
		case 'X': o.xlabel = optarg; break;
		case 'V': o.ylabel = optarg; break;
		case 't':
			if (report_stat_check(optarg))
				goto out;
			r.stat = optarg;
			break;
		case 'h':
			cmd_usage(&cmd_plot);
			ret = EXIT_OK;
			goto out;
		default:
			ret = cmd_usage(&cmd_plot);
			goto out;
		}
	}
	if (optind != argc - 1 || !o.x || !r.metric || !r.out) {
		if (optind == argc - 1)
			error("plot needs --x KEY, --y METRIC and --out FILE.png|svg|pdf");
		ret = cmd_usage(&cmd_plot);
		goto out;
	}
	ext = strrchr(r.out, '.');
	if (!ext || strchr(ext, '/') || (strcmp(ext, ".png") && strcmp(ext, ".svg") && strcmp(ext, ".pdf"))) {
		error("--out '%s': the picture is made from the name's extension: .png, .svg or .pdf", r.out);
		goto out;
	}
	r.db = argv[optind];
	rc = report_plot(&r, &o);
	ret = rc == -2 ? EXIT_FAIL : rc ? EXIT_USAGE : EXIT_OK;
out:
	report_release(&r);
	return ret;
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
