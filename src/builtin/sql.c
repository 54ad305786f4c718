/* sql.c: `sweep sql DB QUERY`: one read-only query, its rows as a table. */
#include <getopt.h>
#include <stdio.h>

#include "../query.h"
#include "builtin.h"

static int sql_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "csv", no_argument, NULL, 'c' }, { "json", no_argument, NULL, 'j' },
		{ "md", no_argument, NULL, 'm' }, { "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const struct table_format *fmt = &table_text;
	double timeout = STORE_SQL_LIMIT;
	struct store *st;
	int opt, ret;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		if (opt == 'c')
			fmt = &table_csv;
		else if (opt == 'j')
			fmt = &table_json;
		else if (opt == 'm')
			fmt = &table_md;
		else if (opt == 't' && (parse_double(optarg, &timeout) || !(timeout >= 0) || timeout > 1e6))
			return exitcode_of(fail_usage("--timeout: '%s' is not a number of seconds from 0 (no limit) "
						      "to 1000000", optarg));
		else if (opt != 't')
			return cmd_usage(&cmd_sql);
	}
	if (optind != argc - 2)
		return cmd_usage(&cmd_sql);
	if ((ret = store_open(argv[optind], STORE_SQL, &st)))
		return exitcode_of(ret);
	store_time_limit(st, timeout);
	/* the query is the user's: one SQLite refuses (or the guard does, or the limit stops) is theirs to
	 * change */
	ret = query_stream(st, argv[optind + 1], fmt, stdout) ? FAIL_USAGE : FAIL_OK;
	store_close(st);
	return exitcode_of(ret);
}

const struct cmd cmd_sql = { "sql", sql_fn, "sweep sql DB QUERY [--csv | --json | --md] [--timeout SECONDS]",
	"Run one read-only SQL query and print the rows as an aligned table. The functions median(x),\n"
	"quantile(x, q), geomean(x), stdev(x), cv(x) and ratio_ci(a, b [, ci, boot, seed]) are available,\n"
	"with SQLite's plain ones; functions that read or write memory or files, PRAGMAs that set anything\n"
	"and ATTACH are refused. A query that runs past --timeout (60 s; 0: none) is stopped. Rows are printed as\n"
	"they come, a few thousand at a time (the text and Markdown tables aligned within each)." };
