/* retry.c: `sweep retry DB`: quarantined or failed cells back to planned, their attempts reset. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "../report.h"
#include "builtin.h"

static int retry_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sweep", required_argument, NULL, 's' }, { "where", required_argument, NULL, 'w' },
		{ "state", required_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct report_ctx ctx = { 0 };
	struct report_query where = REPORT_QUERY_INIT;
	struct store *st = NULL;
	const char *expr = NULL, *sweep = NULL;
	int opt, states = RETRY_QUARANTINED | RETRY_FAILED, ret = FAIL_IO;
	uint64_t n = 0;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 's':
			sweep = optarg;
			break;
		case 'w':
			expr = optarg;
			break;
		case 't':
			if (!strcmp(optarg, "quarantined"))
				states = RETRY_QUARANTINED;
			else if (!strcmp(optarg, "failed"))
				states = RETRY_FAILED;
			else
				return exitcode_of(fail_usage("--state takes quarantined or failed, not '%s'", optarg));
			break;
		case 'h':
			cmd_usage(&cmd_retry);
			return EXIT_OK;
		default:
			return cmd_usage(&cmd_retry);
		}
	}
	if (optind != argc - 1)
		return cmd_usage(&cmd_retry);
	/* The sweep and the --where names, as reports resolve them (read-only). */
	if ((ret = report_ctx_open(&ctx, argv[optind], sweep)) ||
	    (expr && (ret = report_expr_sql(&ctx, &where, "--where", expr, 0) ? FAIL_USAGE : FAIL_OK)))
		goto out;
	/* store_open's and store_lock's kinds as they are: a run writing it is FAIL_BUSY */
	if ((ret = store_open(ctx.db, STORE_RW, &st)) || (ret = store_lock(st, "sweep retry")) ||
	    (ret = store_begin(st)))
		goto out;
	ret = FAIL_IO;
	if (store_retry(st, ctx.sweep, states, expr ? where.sql.buf : NULL, (const char *const *)where.binds,
			(int)where.nbind, &n) || store_commit(st)) {
		store_rollback(st);
		goto out;
	}
	printf("%s: %llu %s cells back to planned, attempts reset: run the sweep again to measure them\n", ctx.sweep,
	       (unsigned long long)n, states == RETRY_QUARANTINED ? "quarantined" : states == RETRY_FAILED ?
	       "failed" : "quarantined or failed");
	ret = FAIL_OK;
out:
	store_close(st);
	report_ctx_release(&ctx);
	report_query_release(&where);
	return exitcode_of(ret);
}

const struct cmd cmd_retry = { "retry", retry_fn,
	"sweep retry DB [--sweep NAME] [--where EXPR] [--state quarantined|failed]",
	"Put cells back to planned with their attempts and error cleared, so that the next 'sweep run' of\n"
	"the spec measures them again: quarantined cells and cells with failed attempts (or only those of\n"
	"--state), of the database's only sweep or --sweep NAME, where EXPR holds (the names of report\n"
	"--where: parameters, host, gpu, pass, replica). Prints how many. The decision is dated: the\n"
	"databases merged from this one take it (the shards of an array submitted again run those cells),\n"
	"and merging an older copy back does not quarantine them again. Exit: 0 done, 2 bad options,\n"
	"1 other errors (a run writing the database refuses it)." };
