/* states.h: a sweep's cells by state as they are, the cells of hosts named in its hosts: that never ran
 * included, and the words status and reports say them in ("12 of 40 cells measured; ..."). */
#ifndef SWEEP_STATES_H
#define SWEEP_STATES_H

#include <stdint.h>
#include "store.h"
#include "util.h"

struct states {
	uint64_t ok, planned, running, quarantined;
	/* A per: host (or per: gpu) sweep's hosts named in its hosts: of which no replica exists: no run had
	 * them, so their cells are its templates, per_host of them each (for per: gpu, at least that many). */
	uint64_t absent, per_host;
	int nabsent;
	struct strbuf hosts;       /* those hosts, ", " between */
};
#define STATES_INIT { 0, 0, 0, 0, 0, 0, 0, STRBUF_INIT }

/* The states of sweep's cells in st, from the counts the store keeps and the hosts: of its stored spec (no
 * cell is read). Retired cells and templates are no part of them. 0, or -1 after error(). states_release
 * frees s either way. */
int states_of(struct store *st, const char *sweep, struct states *s);
void states_release(struct states *s);

/* The cells the sweep has to measure: ok, planned, running, quarantined and those of absent hosts. */
uint64_t states_cells(const struct states *s);

/* "K of N cells measured (ok); the others: P planned, Q quarantined, R running, W wait for hosts that never
 * ran (a, b: 4 each)", the states that hold none left out; nothing when every cell is ok. */
void states_words(const struct states *s, const char *sweep, struct strbuf *sb);

/* "W cells wait for hosts that never ran: a, b (4 each)"; nothing when none do. */
void states_absent_words(const struct states *s, struct strbuf *sb);

#endif
