/* test_sched.c: the worker's rule for sending its results (sched_results_due). */
#include "sched_int.h"
#include "test.h"

int main(void)
{
	/* A short cell in the middle of the master's message: held for the next ones. */
	CHECK(!sched_results_due(0, 1e-5, 0, 1), "a short cell's result waits for the next cells");
	CHECK(!sched_results_due(0, 1e-5, RESULTS_SECONDS / 2, 100), "and so do a hundred of them");
	/* The ways out of holding. */
	CHECK(sched_results_due(1, 1e-5, 0, 1), "the last cell of the message: the worker would wait next");
	CHECK(sched_results_due(0, 1e-5, RESULTS_SECONDS, 3), "the oldest has waited RESULTS_SECONDS");
	CHECK(sched_results_due(0, 1e-5, 0, RESULTS_MAX), "RESULTS_MAX results make a message");
	/* The prefetched cell behind a long one: holding the long cell's result until that one ends would
	 * leave the master nothing to send in time (2 ms cells ran 25 % slower so). */
	CHECK(sched_results_due(0, 0.002, 0, 1), "a 2 ms cell's result goes at once");
	CHECK(sched_results_due(0, RESULTS_SECONDS, 0, 1), "so does one of exactly RESULTS_SECONDS");
	CHECK(!sched_results_due(0, RESULTS_SECONDS * 0.99, 0, 1), "just under it waits");
	return test_done();
}
