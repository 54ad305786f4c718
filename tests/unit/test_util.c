/* test_util.c: util.c's text helpers for messages: a reason's first line, cut only between words. */
#include "test.h"
#include "util.h"

static void test_printable_line(void)
{
	char buf[64 + 4];

	CHECK_STR(printable_line(buf, "cuda: CUDA driver version is insufficient", 60),
		  "cuda: CUDA driver version is insufficient", "fits: whole");
	CHECK_STR(printable_line(buf, "cuda: CUDA driver version is insufficient for CUDA runtime version", 40),
		  "cuda: CUDA driver version is...", "over: cut at a word's end");
	CHECK_STR(printable_line(buf, "first line\nsecond line", 60), "first line...", "one line: more follow");
	CHECK_STR(printable_line(buf, "ends here \r\n", 60), "ends here", "a CRLF line, trailing spaces");
	CHECK_STR(printable_line(buf, "x\001y", 60), "x?y", "control bytes shown as ?");
	CHECK_STR(printable_line(buf, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa b", 20), "aaaaaaaaaaaaaaaaaaaa...",
		  "one word longer than max: cut in it rather than lose the line");
	CHECK_STR(printable_line(buf, "", 20), "", "empty");
}

int main(void)
{
	test_printable_line();
	return test_done();
}
