/* usage.c: the usage line every subcommand prints on a bad command line. */
#include <stdio.h>

#include "builtin.h"

int cmd_usage(const struct cmd *c)
{
	fprintf(stderr, "usage: %s\n(see 'sweep %s --help')\n", c->usage, c->name);
	return EXIT_USAGE;
}
