/* executor.c: `sweep __executor FD` and `sweep __counters SPEC PARAMS GPU`, not for users: the executor
 * process a worker starts for its cells, and the one launch of a kernel cell an executor profiles. */
#include <stdlib.h>

#include "../executor.h"
#include "../spec.h"
#include "../util.h"
#include "builtin.h"

static int executor_fn(int argc, char **argv)
{
	char *end;
	long fd;

	if (argc != 2)
		return cmd_usage(&cmd_executor);
	fd = strtol(argv[1], &end, 10);
	if (*end || fd < 3 || fd > 1 << 20)
		return cmd_usage(&cmd_executor);
	return executor_loop((int)fd);
}

const struct cmd cmd_executor = { "__executor", executor_fn, "sweep __executor FD",
	"Run the cells a worker sends over the socket FD (started by the worker itself)." };

static int counters_pass_fn(int argc, char **argv)
{
	struct spec s;
	long gpu;
	int ret;

	if (argc != 4 || parse_long(argv[3], &gpu) || gpu < -1 || gpu > 1 << 16)
		return cmd_usage(&cmd_counters_pass);
	if (spec_load(argv[1], &s))
		return exitcode_of(FAIL_USAGE);
	ret = executor_one_launch(&s, argv[2], (int)gpu);
	spec_release(&s);
	return exitcode_of(ret ? FAIL_CELLS : FAIL_OK);
}

const struct cmd cmd_counters_pass = { "__counters", counters_pass_fn, "sweep __counters SPEC PARAMS GPU",
	"One launch of a kernel cell of SPEC with PARAMS (JSON) on GPU, only it bracketed for a profiler (run by\n"
	"an executor under ncu for a spec's counters:)." };
