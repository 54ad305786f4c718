/* snapshot.c: `sweep snapshot DB OUT.db`: a consistent copy of a database a run may be writing. */
#include <stdio.h>

#include "../store.h"
#include "builtin.h"

static int snapshot_fn(int argc, char **argv)
{
	int ret;

	if (argc != 3)
		return cmd_usage(&cmd_snapshot);
	if ((ret = store_snapshot(argv[1], argv[2])))
		return exitcode_of(ret);
	printf("%s: snapshot written to %s\n", argv[1], argv[2]);
	return exitcode_of(FAIL_OK);
}

const struct cmd cmd_snapshot = { "snapshot", snapshot_fn, "sweep snapshot DB OUT.db",
	"Write a consistent copy of DB (which a run may be writing) to the new file OUT.db, in one read\n"
	"transaction, checked; never copy a live database with cp. 'sweep pull' runs it on each host." };
