/* fuzz_spec.c: libFuzzer target: any bytes through spec_parse and inventory_parse (and their releases):
 * nothing may crash or leak. */
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>
#include <sanitizer/common_interface_defs.h>

#include "inventory.h"
#include "spec.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int devnull = -1, real_stderr = -1;

/*
 * Rejected inputs print their problems on stderr, which would cost more than parsing them. stderr is
 * silenced only around the parsers, not once for good: libFuzzer prints its progress and final stats
 * there between inputs, and sanitizer reports go to a saved copy of the real stderr.
 */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	devnull = open("/dev/null", O_WRONLY);
	real_stderr = dup(2);
	if (real_stderr >= 0)
		__sanitizer_set_report_fd((void *)(intptr_t)real_stderr);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct spec s;
	struct inventory inv;
	int quiet = devnull >= 0 && real_stderr >= 0;

	if (quiet)
		dup2(devnull, 2);
	if (!spec_parse("fuzz.yaml", (const char *)data, size, &s))
		spec_release(&s);
	if (!inventory_parse("fuzz.yaml", (const char *)data, size, &inv))
		inventory_release(&inv);
	if (quiet)
		dup2(real_stderr, 2);
	return 0;
}
