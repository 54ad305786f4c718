/* executor.c: `sweep __executor FD`, not for users: the executor process a worker starts for its cells. */
#include <stdlib.h>

#include "../executor.h"
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
