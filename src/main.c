/* main.c: the sweep program is the library behind cli_main. */
#include "cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
