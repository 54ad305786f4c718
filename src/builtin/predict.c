/* predict.c: `sweep predict DB FILE.csv`: predictions registered before the run, for --score. */
#include <getopt.h>
#include <unistd.h>

#include "../report.h"
#include "builtin.h"

static int predict_fn(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "late", no_argument, NULL, 'l' }, { "sweep", required_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	const char *sweep = NULL, *db;
	int opt, late = 0;

	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (opt == 'l')
			late = 1;
		else if (opt == 'S')
			sweep = optarg;
		else
			return opt == 'h' ? (cmd_usage(&cmd_predict), EXIT_OK) : cmd_usage(&cmd_predict);
	}
	if (optind != argc - 2)
		return cmd_usage(&cmd_predict);
	db = argv[optind];
	/* a prediction needs planned cells: never create a database here */
	if (access(db, F_OK))
		return exitcode_of((error("cannot open '%s': %m (plan the sweep first: sweep plan SPEC --db %s)", db,
					  db), FAIL_MISSING));
	return exitcode_of(report_predict(db, argv[optind + 1], sweep, late));
}

const struct cmd cmd_predict = { "predict", predict_fn,
	"sweep predict DB FILE.csv [--late] [--sweep NAME]",
	"Register predictions before the run. FILE.csv has a header with metric and value, and either a\n"
	"key column (cell keys) or parameter columns (e.g. sweep,M,N,K,dtype,metric,value: every cell with\n"
	"those values, all passes, is predicted). The file's sha256 and the time are stored. A prediction\n"
	"for a cell that already has a result is refused (nothing is registered) unless --late, which\n"
	"marks those predictions as not blind. Registering the same file again adds nothing; a different\n"
	"value for a predicted cell and metric is refused. Score them with 'sweep report DB --score'." };
