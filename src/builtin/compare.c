/* compare.c: `sweep compare BASE NEW`: one sweep's results in two databases, cell by cell, with a verdict
 * a CI job can gate on (--fail-above). */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <string.h>

#include "../report.h"
#include "builtin.h"

static const struct option compare_long_opts[] = {
	{ "sweep", required_argument, NULL, 'S' },
	{ "metric", required_argument, NULL, 'm' },
	{ "where", required_argument, NULL, 'w' },
	{ "format", required_argument, NULL, 'f' },
	{ "out", required_argument, NULL, 'o' },
	{ "digits", required_argument, NULL, 'D' },
	{ "threshold", required_argument, NULL, 't' },
	{ "fail-above", required_argument, NULL, 'F' },
	{ "better", required_argument, NULL, 'B' },
	{ "superseded", no_argument, NULL, 'U' },
	{ "pair-by", required_argument, NULL, 'P' },
	{ "ci", required_argument, NULL, 'i' },
	{ "boot", required_argument, NULL, 'b' },
	{ "seed", required_argument, NULL, 'e' },
	{ "strict", no_argument, NULL, 'Z' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A percentage option (--threshold, --fail-above) as a fraction. */
static int pct_opt(const char *opt, const char *arg, double *out)
{
	if (parse_double(arg, out) || !(*out >= 0) || *out >= 1000)
		return fail_usage("%s takes a percentage such as 5, not '%s'", opt, arg);
	*out /= 100;
	return FAIL_OK;
}

/* One option into o. FAIL_USAGE after error() for a bad value; SHOW_USAGE for a malformed command line. */
static int compare_opt(struct report_opts *o, int opt, const char *arg)
{
	long l;
	int ret = FAIL_OK;

	switch (opt) {
	case 'S': o->sweep = arg; break;
	case 'm': o->metric = arg; break;
	case 'w': o->where = arg; break;
	case 'f': return (o->fmt = table_format_find(arg)) ? FAIL_OK : FAIL_USAGE;
	case 'o': o->out = arg; break;
	case 'D':
		if (!(ret = report_opts_number(arg, 1, 17, "--digits takes 1 to 17", &l)))
			o->digits = (int)l;
		break;
	case 't': return pct_opt("--threshold", arg, &o->threshold);
	case 'F': return pct_opt("--fail-above", arg, &o->fail_above);
	case 'B':
		if (strcmp(arg, "lower") && strcmp(arg, "higher"))
			return fail_usage("--better takes lower or higher, not '%s'", arg);
		o->better = !strcmp(arg, "lower") ? BETTER_LOWER : BETTER_HIGHER;
		break;
	case 'U': o->superseded = 1; break;
	case 'P':
		if (strcmp(arg, "params") && strcmp(arg, "params,host"))
			return fail_usage("--pair-by takes params or params,host, not '%s'", arg);
		o->pair_params = !strcmp(arg, "params");
		break;
	case 'i': return report_opts_bootstrap(o, "ci", arg);
	case 'b': return report_opts_bootstrap(o, "boot", arg);
	case 'e': return report_opts_bootstrap(o, "seed", arg);
	case 'Z': o->strict = 1; break;
	default: return SHOW_USAGE;
	}
	return ret;
}

/* BASE NEW, or with --superseded DB (or DB DB): the database's superseded results against its ok ones. */
static int compare_args(struct report_opts *o, int argc, char **argv)
{
	int n = argc - optind;

	if (n == 2 && (!o->superseded || !strcmp(argv[optind], argv[optind + 1]))) {
		o->base_db = argv[optind];
		o->db = argv[optind + 1];
	} else if (n == 1 && o->superseded) {
		o->base_db = o->db = argv[optind];
	} else if (n == 2) {
		return fail_usage("--superseded compares one database with itself: give DB (or DB DB), not two");
	} else {
		return SHOW_USAGE;
	}
	if (!o->metric)
		return fail_usage("which metric? give --metric NAME");
	return FAIL_OK;
}

static int compare_fn(int argc, char **argv)
{
	struct report_opts o;
	int opt, ret = FAIL_OK, fmt_given = 0;

	report_opts_init(&o);
	o.threshold = 0.02;
	while (!ret && (opt = getopt_long(argc, argv, "h", compare_long_opts, NULL)) != -1) {
		if (opt == 'h') {
			cmd_usage(&cmd_compare);
			report_opts_release(&o);
			return EXIT_OK;
		}
		ret = compare_opt(&o, opt, optarg);
		fmt_given |= opt == 'f';
	}
	if (!ret)
		ret = compare_args(&o, argc, argv);
	if (ret == SHOW_USAGE) {
		report_opts_release(&o);
		return cmd_usage(&cmd_compare);
	}
	if (!ret) {
		report_opts_out_format(&o, fmt_given);
		/* a page holds one report's table, figure, method and conditions: a comparison has none yet */
		if (o.fmt->page)
			ret = fail_usage("sweep compare prints md, text, csv, latex or json, not a page (%s); "
					 "'sweep report --format html' makes one", o.fmt->name);
		else if (!(ret = report_out_check("--out", o.out, o.base_db)) &&
		    !(ret = report_out_check("--out", o.out, o.db)))
			ret = report_compare(&o);
	}
	report_opts_release(&o);
	return exitcode_of(ret);
}

const struct cmd cmd_compare = { "compare", compare_fn,
	"sweep compare BASE NEW --metric NAME [OPTIONS]\n"
	"       sweep compare DB --superseded --metric NAME [OPTIONS]",
	"One sweep's ok results in two databases (a branch against main, this week against last), cell by\n"
	"cell: cells are paired by their parameters and host (and GPU for per: gpu), whatever their pass;\n"
	"--pair-by params pairs them by their parameters alone (another host's results: the host is said\n"
	"among the conditions that differ). A comparison where no cell pairs is an error naming the keys\n"
	"that differ. Per cell: n pairs, the metric of BASE and NEW, the ratio NEW/BASE of their means with\n"
	"a paired percentile bootstrap interval, and a verdict. The units paired within a cell are its items\n"
	"(where both sides have them; averaged over passes), else its passes, else its timed samples (for\n"
	"seconds, ms, us); the title names them. With one value a cell there is no interval and no verdict.\n"
	"Verdict, on the interval: slower when it lies wholly past --threshold PCT (2) on the worse side,\n"
	"faster the same the other way, unchanged when it lies wholly within +-PCT, else inconclusive.\n"
	"Which way is worse: --better lower|higher, else the metric's 'better:' or unit in the spec (a time\n"
	"is lower-better, a rate per second higher-better), else sweep's own metrics (seconds lower; gflops,\n"
	"gbs, *_gbs higher). A metric without one gets ratios and no verdict. Cells of one side only and the\n"
	"conditions that differ (the sweep version, the host, GPU, driver, CUDA) are said on stderr, one\n"
	"line each. --superseded: one database's results that --force or --replan superseded (BASE) against\n"
	"its ok results (NEW). CSV columns: <params>,host[,gpu],pairs,<metric>_base,<metric>_new,ratio,\n"
	"ci_lo,ci_hi,verdict.\n"
	"\n"
	"options: --sweep NAME, --metric NAME, --where EXPR (as in report), --format md|text|csv|latex|json,\n"
	"  --out FILE, --digits N, --threshold PCT (2), --fail-above PCT, --better lower|higher,\n"
	"  --pair-by params|params,host (params,host), --ci PCT (95), --boot N (10000), --seed S (1),\n"
	"  --strict.\n"
	"exit: 0, or 4 with --fail-above PCT when some row is shown slower by more than PCT (its whole\n"
	"  interval past it; the table is printed); 2 for bad input or when no cell pairs, 1 for a failure." };
