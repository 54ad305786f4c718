/* report.c: `sweep report DB`: tables of one sweep's results (pivots, compare, limit, drift, score). */
#include <getopt.h>
#include <math.h>
#include <string.h>

#include "../report.h"
#include "builtin.h"

static const struct option report_long_opts[] = {
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
	{ "unit", required_argument, NULL, 'U' },
	{ "interval", required_argument, NULL, 'I' },
	{ "drop-first", no_argument, NULL, 'F' },
	{ "conditions", no_argument, NULL, 'N' },
	{ "ledger", required_argument, NULL, 'L' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

/* The options that choose a mode, before it is known which one: at most one may be given; and the ones
 * whose meaning depends on it. */
struct modes {
	const char *compare;
	int limit, drift, score;
	const char *stat;          /* --stat, checked once the mode is known */
	int interval;              /* --interval given */
};

/* What cannot go together, said before the database is opened; then the mode and --compare's parts. */
static int report_check(struct report_opts *o, const struct modes *m)
{
	int ret;

	if (!!m->compare + m->limit + m->drift + m->score > 1)
		return fail_usage("--compare, --limit, --drift and --score are separate reports: give one");
	if (m->drift && (o->nrows || o->ncols || o->metric || o->where || o->summary || o->exclude_unstable))
		return fail_usage("--drift takes only --sweep, --threshold, --drop-first, --format and --out");
	if (o->ncols && (m->compare || m->limit || m->score))
		return fail_usage("--cols makes a pivot table; with --%s put the keys into --rows",
				  m->compare ? "compare" : m->limit ? "limit" : "score");
	if (!m->drift && !m->score && !o->metric)
		return fail_usage("which metric? give --metric NAME");
	if (!m->compare && o->paired_by)
		return fail_usage("--paired-by goes with --compare");
	if (!m->score && !isnan(o->bar))
		return fail_usage("--bar goes with --score");
	if ((o->conditions || o->ledger) && (m->compare || m->limit || m->drift || m->score))
		return fail_usage("--conditions and --ledger go with a table");
	/* --conditions appends tables after the report's; a page is whole, with a conditions section */
	if (o->conditions && o->fmt->page)
		return fail_usage("--conditions goes with md, text, csv, latex or json: the page (%s) has its "
				  "conditions section", o->fmt->name);
	if (o->summary && (m->drift || m->score))
		return fail_usage("--summary goes with a table, --limit or --compare");
	if (o->unit && !o->summary)
		return fail_usage("--unit goes with --summary");
	if (o->drop_first && !m->drift && !o->exclude_unstable)
		return fail_usage("--drop-first goes with --drift or --exclude-unstable");
	if (m->interval && !m->compare)
		return fail_usage("--interval goes with --compare");
	o->mode = m->compare ? REPORT_COMPARE : m->limit ? REPORT_LIMIT : m->drift ? REPORT_DRIFT :
		  m->score ? REPORT_SCORE : REPORT_TABLE;
	if (m->stat && (ret = report_opts_stat(m->stat, o->mode)))
		return ret;
	o->stat = m->stat ? m->stat : m->compare ? "mean" : "median";
	if (!m->compare)
		return FAIL_OK;
	return report_opts_compare(o, m->compare);
}

/* A list option given once. SHOW_USAGE when given twice or with an empty name. */
static int list_opt(const char *what, const char *arg, char ***v, int *n)
{
	return *v || report_opts_split(what, arg, v, n) ? SHOW_USAGE : FAIL_OK;
}

/* One option into o (and m). FAIL_USAGE after error() for a bad value; SHOW_USAGE for a malformed
 * command line. */
static int report_opt(struct report_opts *o, struct modes *m, int opt, const char *arg)
{
	long l;
	int ret = FAIL_OK;

	switch (opt) {
	case 'S': o->sweep = arg; break;
	case 'r': return list_opt("--rows", arg, &o->rows, &o->nrows);
	case 'c': return list_opt("--cols", arg, &o->cols, &o->ncols);
	case 'P': return list_opt("--pool", arg, &o->pool, &o->npool);
	case 'm': o->metric = arg; break;
	case 'Z': o->strict = 1; break;
	case 'N': o->conditions = 1; break;
	case 'L': o->ledger = arg; break;
	case 's': m->stat = arg; break;
	case 'U': o->unit = arg; break;
	case 'F': o->drop_first = 1; break;
	case 'I':
		m->interval = 1;
		return report_opts_interval(o, arg);
	case 'w': o->where = arg; break;
	case 'f': return (o->fmt = table_format_find(arg)) ? FAIL_OK : FAIL_USAGE;
	case 'o': o->out = arg; break;
	case 'D':
		if (!(ret = report_opts_number(arg, 1, 17, "--digits takes 1 to 17", &l)))
			o->digits = (int)l;
		break;
	case 'C': m->compare = arg; break;
	case 'p': o->paired_by = arg; break;
	case 'i': return report_opts_bootstrap(o, "ci", arg);
	case 'b': return report_opts_bootstrap(o, "boot", arg);
	case 'e': return report_opts_bootstrap(o, "seed", arg);
	case 'l': o->limit = arg; m->limit = 1; break;
	case 'u':
		o->summary = 1;
		o->summary_by = arg && *arg ? arg : NULL;
		break;
	case 'x': o->exclude_unstable = 1; break;
	case 't':
		if (parse_double(arg, &o->threshold) || !(o->threshold > 0) || o->threshold >= 100)
			return fail_usage("--threshold takes a percentage such as 3, not '%s'", arg);
		o->threshold /= 100;
		break;
	case 'd': m->drift = 1; break;
	case 'k': m->score = 1; break;
	case 'B':
		if (parse_double(arg, &o->bar) || !(o->bar > 0))
			return fail_usage("--bar takes a percentage such as 10, not '%s'", arg);
		break;
	default: return SHOW_USAGE;
	}
	return ret;
}

static int report_fn(int argc, char **argv)
{
	struct report_opts o;
	struct modes m = { NULL, 0, 0, 0, NULL, 0 };
	int opt, ret = FAIL_OK, fmt_given = 0;

	report_opts_init(&o);
	while (!ret && (opt = getopt_long(argc, argv, "h", report_long_opts, NULL)) != -1) {
		if (opt == 'h') {
			cmd_usage(&cmd_report);
			report_opts_release(&o);
			return EXIT_OK;
		}
		ret = report_opt(&o, &m, opt, optarg);
		fmt_given |= opt == 'f';
	}
	if (ret == SHOW_USAGE || (!ret && optind != argc - 1)) {
		report_opts_release(&o);
		return cmd_usage(&cmd_report);
	}
	if (!ret) {
		o.db = argv[optind];
		report_opts_out_format(&o, fmt_given);
		if (!(ret = report_check(&o, &m)) && !(ret = report_out_check("--out", o.out, o.db)))
			ret = report_run(&o);
	}
	report_opts_release(&o);
	return exitcode_of(ret);
}

const struct cmd cmd_report = { "report", report_fn,
	"sweep report DB [--rows KEYS] [--cols KEYS] --metric NAME [--compare KEY=A/B |\n"
	"                  --limit EXPR | --drift | --score] [OPTIONS]",
	"Tables of the ok results of one sweep (the only one with results unless --sweep). A key is a\n"
	"parameter, host, gpu, pass, replica, label.NAME (an inventory label of the host) or item (the items\n"
	"a command's metric lines name: a row per benchmark). Each row (and column) aggregates every\n"
	"result of its cells, all passes, with --stat (default median; also mean, geomean, min, max, stdev,\n"
	"cv, pNN); --cols pivots. Metrics are those the results stored (seconds, gflops, gbs, a command's\n"
	"own); tflops, tbs, ms and us are derived. --where EXPR filters with names (\"name\" for one that is\n"
	"also a word of the syntax), numbers, 'text', arithmetic, comparisons,\n"
	"AND/OR/NOT, IN, BETWEEN, LIKE and CASE (e.g. \"M >= 1024 AND dtype = 'f32'\"). Markdown by default.\n"
	"\n"
	"--compare KEY=A/B: per row, the items of arm A and arm B (averaged over passes) are paired by name\n"
	"(or by a parameter with --paired-by KEY); the ratio is mean(A)/mean(B) over paired items (--stat\n"
	"geomean: the geometric mean of the items' ratios) with a bootstrap interval resampling items (same\n"
	"indices for both arms; --interval percentile or bca). CSV columns:\n"
	"<rows>,n,<metric>_A,<metric>_B,ratio,ci_lo,ci_hi. Items without a partner are named on stderr;\n"
	"fewer than 5 pairs or 1000 resamples, a value <= 0 and unequal passes are warned of and marked.\n"
	"--limit EXPR: a limit per result from its parameters, metrics and its host's probes (e.g.\n"
	"\"host_read_gbs * 1e9 / bytes_per_token\"), with the share stat(metric) / stat(limit) of the results\n"
	"that have both. --summary adds rows with the median, min, max, mean, the 95 % Student t interval of\n"
	"the mean (ci95 lo, ci95 hi) and n of every column (the ratio of a comparison), per value of KEY\n"
	"(--summary=label.class), over units: one value per --unit KEY (a row key; host, else replica, when\n"
	"one is; else each row), the mean of its rows; fewer than 5 units are warned of and marked.\n"
	"--drift: each worker's control cell over time as a ratio to the median of its runs (--drop-first\n"
	"leaves the first out); a host is unstable when the drift or the control's noise (for runs of one\n"
	"sample, their spread) passes --threshold (3 %); --exclude-unstable leaves those out.\n"
	"--score: rms and mean signed error, 100 (measured - predicted) / predicted, of the predictions\n"
	"registered with 'sweep predict', blind and late apart, and whether the rms met --bar PCT (exit 4\n"
	"when a group missed it, the table printed).\n"
	"--conditions: after the table, what its numbers were measured under: the conditions common to\n"
	"every result (sweep version and commit, the hashes of the files a command runs, host, GPU driver,\n"
	"CUDA, clocks, power limit, CPU governor and boost, ASLR, isolated CPUs, load average) once, then\n"
	"each row's result ids with the conditions that vary. --ledger FILE: one line per result with its\n"
	"database, sweep, cell key, result id, params, value and conditions (CSV for a .csv name, else JSON\n"
	"lines); it never writes over an SQLite file (exit 1).\n"
	"\n"
	"options: --sweep NAME, --stat S, --where EXPR, --digits N, --format md|text|csv|latex|json|html,\n"
	"  --out FILE, --summary[=KEY], --unit KEY, --exclude-unstable, --threshold PCT (3), --drop-first,\n"
	"  --paired-by item|KEY, --ci PCT (95), --boot N (10000, at least 100), --seed S (1), --interval\n"
	"  percentile|bca, --bar PCT, --pool KEYS, --strict, --conditions, --ledger FILE. Notes (unpaired\n"
	"  items, excluded hosts, missing probes) and warnings go to stderr. --out FILE takes its format from\n"
	"  .md, .csv, .tex, .json, .txt or .html unless --format says; it never writes over an SQLite file or\n"
	"  DB itself (exit 1).\n"
	"A parameter that varies inside a row and is not in --rows, --cols, --compare or --pool KEYS\n"
	"becomes a row key; --pool aggregates over it and the title says so. A value holding a median not\n"
	"known to the precision its spec asked (its 95 % interval wider, or none) is marked (a column precise\n"
	"in csv and json); --strict leaves those results out and says how many of how many; when that is\n"
	"every one, it says so and exits 2, as a report with nothing to show does. --metric noise reports the\n"
	"samples' noise, --metric precision how well each median is known (its interval's half-width\n"
	"over the median).\n"
	"html: one self-contained page (nothing loaded from anywhere): the table with its marks, its figure\n"
	"inline as SVG (a table, --compare, --limit; with gnuplot) with the numbers drawn, the notes and\n"
	"warnings, the method and the conditions the database knows (hosts, GPU, driver, clocks, versions)." };
