/* test_exitcode.c: the one mapping of kinds of failure to exit codes, and the documented codes. */
#include "exitcode.h"
#include "test.h"

int main(void)
{
	char errs[256];
	int rc;

	/* the codes scripts read: documented in exitcode.h and the commands' help, never renumbered */
	CHECK(EXIT_OK == 0 && EXIT_FAIL == 1 && EXIT_USAGE == 2 && EXIT_CELLS == 3, "exit codes 0 to 3");
	CHECK_INT(exitcode_of(FAIL_OK), EXIT_OK, "done");
	CHECK_INT(exitcode_of(FAIL_IO), EXIT_FAIL, "SQL or a file failed");
	CHECK_INT(exitcode_of(FAIL_USAGE), EXIT_USAGE, "the user must change something");
	CHECK_INT(exitcode_of(FAIL_BUSY), EXIT_FAIL, "another writer");
	CHECK_INT(exitcode_of(FAIL_UNSAFE), EXIT_FAIL, "refused to overwrite what is not a report");
	CHECK_INT(exitcode_of(FAIL_CELLS), EXIT_CELLS, "cells failed");
	CHECK(EXIT_WORSE == 4 && EXIT_INTERRUPTED == 5, "a missed bar 4, interrupted 5: two codes");
	CHECK_INT(exitcode_of(FAIL_WORSE), EXIT_WORSE, "a bar missed");
	CHECK_INT(exitcode_of(FAIL_INTERRUPTED), EXIT_INTERRUPTED, "a signal stopped it");
	CHECK_INT(EXIT_INTERRUPTED, 5, "interrupted is 5 (4 is kept for a comparison below its bar)");
	/* the database named is the wrong file: the user's, as a bad option */
	CHECK_INT(exitcode_of(FAIL_MISSING), EXIT_USAGE, "no such database: the user named it");
	CHECK_INT(exitcode_of(FAIL_NOT_SWEEP), EXIT_USAGE, "a text file or another program's SQLite");
	CHECK_INT(exitcode_of(FAIL_CORRUPT), EXIT_FAIL, "a damaged database is sweep's file, not a usage");
	/* a host not reached is not a cell that failed: its own code */
	CHECK_INT(EXIT_UNREACHABLE, 6, "a host not reached is 6");
	CHECK_INT(exitcode_of(FAIL_UNREACHABLE), EXIT_UNREACHABLE, "a host not reached");
	CHECK(exitcode_of(FAIL_UNREACHABLE) != exitcode_of(FAIL_CELLS), "hosts and cells apart");
	/* every kind is distinct: a number never means two things */
	{
		static const int kinds[] = { FAIL_OK, FAIL_IO, FAIL_USAGE, FAIL_BUSY, FAIL_UNSAFE, FAIL_CELLS,
					     FAIL_WORSE, FAIL_INTERRUPTED, FAIL_MISSING, FAIL_NOT_SWEEP,
					     FAIL_CORRUPT, FAIL_UNREACHABLE };
		int same = 0;

		for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
			for (size_t j = 0; j < i; j++)
				same += kinds[i] == kinds[j];
		CHECK_INT(same, 0, "twelve kinds, twelve values");
	}
	/* a function that only says error() fails as FAIL_IO; fail_usage says it and blames the input */
	test_capture_start();
	CHECK_INT(error("disk '%s'", "d"), FAIL_IO, "error() is FAIL_IO");
	rc = fail_usage("no sweep '%s'", "x");
	capture_into(errs, sizeof(errs));
	CHECK_INT(rc, FAIL_USAGE, "fail_usage() is FAIL_USAGE");
	CHECK_TEXT(errs, "sweep: disk 'd'\nsweep: no sweep 'x'\n", "both print their message");
	return test_done();
}
