/* spec_gpu.c: what a sweep asks of its GPUs' conditions: the clocks a run locks them at (clocks:), the
 * hardware counters read beside its results (counters:). */
#include "spec_int.h"

/* A clock's MHz above any card's: a typo of units (Hz, kHz) rather than a clock to lock. */
#define CLOCK_MAX_MHZ 20000

/* One clock: MHz, or base where allowed (the SM clock: NVML locks it at the card's base clock). */
static void clock_value(struct sp *p, const struct ynode *n, const char *what, int base_ok, int *out)
{
	const char *t = spec_node_scalar(p, n, what);
	char a[SHOW_BUF];
	long v;

	if (!t)
		return;
	if (!strcmp(t, "base")) {
		if (base_ok)
			*out = SPEC_CLOCK_BASE;
		else
			spec_node_problem(p, n, "'%s' takes MHz, not 'base' (only the SM clock has a base to lock at)",
					  what);
		return;
	}
	if (!spec_node_is_num(n, NULL) || parse_long(t, &v)) {
		spec_node_problem(p, n, "expected MHz%s for '%s', got '%s'", base_ok ? " or 'base'" : "", what,
				  spec_shown(a, t));
		return;
	}
	if (!spec_node_long(p, n, what, 1, CLOCK_MAX_MHZ, &v))
		*out = (int)v;
}

void spec_gpu_clocks(struct sp *p, const struct ynode *n)
{
	static const char *const names[] = { "sm", "memory", NULL };
	const struct ynode *v[2] = { NULL, NULL }, *k[2] = { NULL, NULL };

	if (spec_node_fields(p, n, "'clocks'", names, v, k))
		return;
	if (!v[0] && !v[1]) {
		spec_node_problem(p, n, "'clocks' names no clock: give sm (MHz or base), memory (MHz) or both");
		return;
	}
	if (v[0])
		clock_value(p, v[0], "clocks.sm", 1, &p->s->clock_sm);
	if (v[1])
		clock_value(p, v[1], "clocks.memory", 0, &p->s->clock_mem);
}

void spec_gpu_counters(struct sp *p, const struct ynode *n)
{
	struct spec *s = p->s;
	char a[SHOW_BUF];

	if (!(s->counters = spec_node_strings(p, n, "counters", &s->ncounters)))
		return;
	if (!s->ncounters)
		spec_node_problem(p, n, "'counters' names no counter (dram__bytes_read.sum, ...)");
	for (int i = 0; i < s->ncounters; i++) {
		const char *c = s->counters[i];

		if (!*c || strspn(c, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.") != strlen(c))
			spec_node_problem(p, ydoc_item(n, i), "'%s' is no counter's name (Nsight Compute's: letters, "
					  "digits, '_' and '.', as dram__bytes_read.sum)", spec_shown(a, c));
	}
}
