/* better.h: which way a metric improves: a spec's better: lower|higher, a unit's direction, compare's
 * --better; the one enum for it, which sweep compare's verdict needs (a pure stage: no more than this). */
#ifndef SWEEP_BETTER_H
#define SWEEP_BETTER_H

/* BETTER_UNKNOWN (0): not known, no verdict. */
enum better { BETTER_LOWER = -1, BETTER_UNKNOWN = 0, BETTER_HIGHER = 1 };

#endif
