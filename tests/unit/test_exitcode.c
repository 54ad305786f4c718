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
	/* a function that only says error() fails as FAIL_IO; fail_usage says it and blames the input */
	test_capture_start();
	CHECK_INT(error("disk '%s'", "d"), FAIL_IO, "error() is FAIL_IO");
	rc = fail_usage("no sweep '%s'", "x");
	capture_into(errs, sizeof(errs));
	CHECK_INT(rc, FAIL_USAGE, "fail_usage() is FAIL_USAGE");
	CHECK_TEXT(errs, "sweep: disk 'd'\nsweep: no sweep 'x'\n", "both print their message");
	return test_done();
}
