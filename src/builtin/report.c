/* report.c: `sweep report DB`: tables of one sweep's results (pivots, compare, limit, drift, score). */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "../report.h"
#include "builtin.h"

static const struct option report_opts[] = {
	{ "sweep", required_argument, NULL, 'S' },
	{ "rows", required_argument, NULL, 'r' },
	{ "cols", required_argument, NULL, 'c' },
	{ "metric", required_argument, NULL, 'm' },
	{ "stat", required_argument, NULL, 's' },
	{ "where", required_argument, NULL, 'w' },
	{ "format", required_argument, NULL, 'f' },
	{ "out", required_argument, NULL, 'o' },
	{ "digits", required_argument, NULL, 'D' },
	{ "compare", required_argument, NULL, 'C' },
	{ "paired-by", required_argument, NULL, 'p' },
	{ "ci", required_argument, NULL, 'i' },
	{ "boot", required_argument, NULL, 'b' },
	{ "seed", required_argument, NULL, 'e' },
	{ "limit", required_argument, NULL, 'l' },
	{ "summary", optional_argument, NULL, 'u' },
	{ "exclude-unstable", no_argument, NULL, 'x' },
	{ "threshold", required_argument, NULL, 't' },
	{ "drift", no_argument, NULL, 'd' },
	{ "score", no_argument, NULL, 'k' },
	{ "bar", required_argument, NULL, 'B' },
	{ "pool", required_argument, NULL, 'P' },
	{ "strict", no_argument, NULL, 'Z' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* A percentage given as 95 or 0.95, as a fraction in (0, 1). */
static int parse_level(const char *opt, const char *s, double *out)
{
	double v;

	if (parse_double(s, &v) || v <= 0 || v >= 100)
		return error("%s takes a level in (0, 100), such as 95, not '%s'", opt, s);
	*out = v > 1 ? v / 100 : v;
	if (*out >= 1)
		return error("%s takes a level in (0, 100), such as 95, not '%s'", opt, s);
	return 0;
}

/* What cannot go together, said before the database is opened. */
static int report_check(struct report *r)
{
	int modes = !!r->compare + !!r->limit + r->drift + r->score;

	if (modes > 1)
		return error("--compare, --limit, --drift and --score are separate reports: give one");
	if (r->drift && (r->nrows || r->ncols || r->metric || r->where || r->summary || r->exclude_unstable))
		return error("--drift takes only --sweep, --threshold, --format and --out");
	if (r->ncols && (r->compare || r->limit || r->score))
		return error("--cols makes a pivot table; with --%s put the keys into --rows",
			     r->compare ? "compare" : r->limit ? "limit" : "score");
	if (!r->drift && !r->score && !r->metric)
		return error("which metric? give --metric NAME");
	if (!r->compare && (r->paired_by))
		return error("--paired-by goes with --compare");
	if (!r->score && !isnan(r->bar))
		return error("--bar goes with --score");
	if (r->summary && (r->drift || r->score))
		return error("--summary goes with a table, --limit or --compare");
	return 0;
}

static int report_fn(int argc, char **argv)
{
	struct report r = { 0 };
	long l;
	int opt, ret = EXIT_USAGE, fmt_given = 0;

	r.stat = "median";
	r.fmt = TABLE_MD;
	r.ci = 0.95;
	r.boot = 10000;
	r.seed = 1;
	r.threshold = 0.03;
	r.bar = NAN;
	r.noisy = -1;
	while ((opt = getopt_long(argc, argv, "h", report_opts, NULL)) != -1) {
		switch (opt) {
		case 'S':
			r.sweep_arg = optarg;
			break;
		case 'r':
			if (r.rows || report_split("--rows", optarg, &r.rows, &r.nrows))
				goto usage;
			break;
		case 'c':
			if (r.cols || report_split("--cols", optarg, &r.cols, &r.ncols))
				goto usage;
			break;
		case 'm':
			r.metric = optarg;
			break;
		case 'P':
			if (r.pool || report_split("--pool", optarg, &r.pool, &r.npool))
				goto usage;
			break;
		case 'Z':
			r.strict = 1;
			break;
		case 's':
			if (report_stat_check(optarg))
				goto out;
			r.stat = optarg;
			break;
		case 'w':
			r.where = optarg;
			break;
		case 'f':
			if (table_format_parse(optarg, &r.fmt))
				goto out;
			fmt_given = 1;
			break;
		case 'o':
			r.out = optarg;
			break;
		case 'D':
			if (parse_long(optarg, &l) || l < 1 || l > 17) {
				error("--digits takes 1 to 17, not '%s'", optarg);
				goto out;
			}
			r.digits = (int)l;
			break;
		case 'C':
			r.compare = optarg;
			break;
		case 'p':
			r.paired_by = optarg;
			break;
		case 'i':
			if (parse_level("--ci", optarg, &r.ci))
				goto out;
			break;
		case 'b':
			if (parse_long(optarg, &l) || l < 1 || l > 10000000) {
				error("--boot takes 1 to 10000000 resamples, not '%s'", optarg);
				goto out;
			}
			r.boot = (int)l;
			break;
		case 'e':
			if (parse_long(optarg, &l)) {
				error("--seed takes an integer, not '%s'", optarg);
				goto out;
			}
			r.seed = (uint64_t)l;
			break;
		case 'l':
			r.limit = optarg;
			break;
		case 'u':
			r.summary = 1;
			r.summary_by = optarg && *optarg ? optarg : NULL;
			break;
		case 'x':
			r.exclude_unstable = 1;
			break;
		case 't':
			if (parse_double(optarg, &r.threshold) || !(r.threshold > 0) || r.threshold >= 100) {
				error("--threshold takes a percentage such as 3, not '%s'", optarg);
				goto out;
			}
			r.threshold /= 100;
			break;
		case 'd':
			r.drift = 1;
			break;
		case 'k':
			r.score = 1;
			break;
		case 'B':
			if (parse_double(optarg, &r.bar) || !(r.bar > 0)) {
				error("--bar takes a percentage such as 10, not '%s'", optarg);
				goto out;
			}
			break;
		case 'h':
			cmd_usage(&cmd_report);
			ret = EXIT_OK;
			goto out;
		default:
			goto usage;
		}
	}
	if (optind != argc - 1)
		goto usage;
	r.db = argv[optind];
	if (report_check(&r))
		goto out;
	/* the file's extension says its format, unless --format does */
	if (r.out && !fmt_given)
		table_format_of_path(r.out, &r.fmt);
	if (report_out_check(&r)) {
		ret = EXIT_FAIL;
		goto out;
	}
	if (report_open(&r))
		goto out;
	if (r.exclude_unstable && report_unstable_hosts(&r)) {
		ret = EXIT_FAIL;
		goto out;
	}
	/* After the database is open, a failure is the input's (a name, an expression) unless SQL failed:
	 * both print their reason; EXIT_USAGE tells scripts nothing was wrong with the data itself. */
	if (r.drift)
		ret = report_drift(&r);
	else if (r.score)
		ret = report_score(&r);
	else if (r.compare)
		ret = report_compare(&r);
	else if (r.limit)
		ret = report_limit(&r);
	else
		ret = report_table(&r);
	ret = ret ? EXIT_USAGE : EXIT_OK;
	goto out;
usage:
	ret = cmd_usage(&cmd_report);
out:
	report_release(&r);
	return ret;
}

const struct cmd cmd_report = { "report", report_fn,
	"sweep report DB --rows KEYS [--cols KEYS] --metric NAME [--compare KEY=A/B |\n"
	"                  --limit EXPR | --drift | --score] [OPTIONS]",
	"Tables of the ok results of one sweep (the only one with results unless --sweep). A key is a\n"
	"parameter, host, gpu, pass, replica or label.NAME (an inventory label of the host). Each row (and\n"
	"column) aggregates every result of its cells, all passes, with --stat (default median); --cols\n"
	"pivots. Metrics are those the results stored (seconds, gflops, gbs, a command's own); tflops, tbs,\n"
	"ms and us are derived. --where EXPR filters with names, numbers, 'text', arithmetic, comparisons,\n"
	"AND/OR/NOT, IN, BETWEEN, LIKE and CASE (e.g. \"M >= 1024 AND dtype = 'f32'\"). Markdown by default.\n"
	"\n"
	"--compare KEY=A/B: per row, the items of arm A and arm B (averaged over passes) are paired by name\n"
	"(or by a parameter with --paired-by KEY); the ratio is mean(A)/mean(B) over paired items with a\n"
	"percentile bootstrap interval resampling items (same indices for both arms). CSV columns:\n"
	"<rows>,n,<metric>_A,<metric>_B,ratio,ci_lo,ci_hi. Items without a partner are named on stderr.\n"
	"--limit EXPR: a limit per result from its parameters, metrics and its host's probes (e.g.\n"
	"\"host_read_gbs * 1e9 / bytes_per_token\"), with the share metric/limit. --summary adds rows with the\n"
	"median, min, max, mean, the 95 % Student t interval of the mean over the rows (ci95 lo, ci95 hi)\n"
	"and n of every column, per value of KEY (e.g. --summary=label.class).\n"
	"--drift: each worker's control cell over time as a ratio to its first run; a host is unstable when\n"
	"the drift or the control's noise passes --threshold (3 %); --exclude-unstable leaves those out.\n"
	"--score: rms and mean signed error, 100 (measured - predicted) / predicted, of the predictions\n"
	"registered with 'sweep predict', blind and late apart, and whether the rms met --bar PCT.\n"
	"\n"
	"options: --sweep NAME, --stat median|mean|geomean|min|max, --where EXPR, --digits N,\n"
	"  --format md|text|csv|latex|json, --out FILE, --summary[=KEY], --exclude-unstable,\n"
	"  --threshold PCT (3), --paired-by item|KEY, --ci PCT (95), --boot N (10000), --seed S (1),\n"
	"  --bar PCT, --pool KEYS, --strict. Notes (unpaired items, excluded hosts, missing probes) go to\n"
	"  stderr. --out FILE takes its format from .md, .csv, .tex, .json or .txt unless --format says;\n"
	"  it never writes over an SQLite file or DB itself (exit 1).\n"
	"A parameter that varies inside a row and is not in --rows, --cols, --compare or --pool KEYS\n"
	"becomes a row key; --pool aggregates over it and the title says so. A value holding a median not\n"
	"known to the precision its spec asked (its 95 % interval wider, or none) is marked (a column precise\n"
	"in csv and json); --strict leaves those results out and says how many of how many; when that is\n"
	"every one, it says so and exits 2, as a report with nothing to show does. --metric noise reports the\n"
	"samples' noise." };
