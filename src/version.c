/* version.c: the version and the build's commit, recorded with every run (runs.version, runs.revision). */
#include "version.h"

/* The Makefile passes the commit to this file alone (SWEEP_COMMIT), so a new commit rebuilds one object. */
#ifndef SWEEP_COMMIT
#define SWEEP_COMMIT ""
#endif

const char *version_string(void)
{
	return "0.1.0";
}

const char *version_commit(void)
{
	return SWEEP_COMMIT[0] ? SWEEP_COMMIT : 0;
}
