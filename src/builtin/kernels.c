/* kernels.c: `sweep kernels`: every kernel built in, with its parameters. */
#include <stdio.h>

#include "../../kernels/kernel.h"
#include "builtin.h"

static int kernels_fn(int argc, char **argv)
{
	static const char *const types[] = { "int", "float", "str", "bytes" };

	if (argc != 1)
		return cmd_usage(&cmd_kernels);
	for (int i = 0; kernel_registry[i]; i++) {
		const struct kernel_ops *k = kernel_registry[i];

		printf("%s%s: %s\n", i ? "\n" : "", k->name, k->doc);
		if (k->gpus > 1)
			printf("  (uses %d GPUs per cell)\n", k->gpus);
		for (const struct param_def *p = k->params; p && p->name; p++) {
			char type[96];

			snprintf(type, sizeof(type), "%s%s%s", types[p->type], p->choices ? " " : "",
				 p->choices ? p->choices : "");
			printf("  %-10s %-16s %-12s %s\n", p->name, type, p->def ? p->def : "(required)", p->doc);
		}
	}
	return EXIT_OK;
}

const struct cmd cmd_kernels = { "kernels", kernels_fn, "sweep kernels",
	"List every kernel built into this binary with its parameters, types, defaults and documentation." };
