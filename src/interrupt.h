/* interrupt.h: SIGINT, SIGTERM and SIGUSR1 caught as a flag that a run's long steps look at. */
#ifndef SWEEP_INTERRUPT_H
#define SWEEP_INTERRUPT_H

/*
 * Catch the three signals until interrupt_release: each only records itself (interrupt_signal), so that
 * a run can stop where it is safe to (a loop between transactions, a statement the store aborts and
 * rolls back) instead of dying in the middle of a start. Nested: the outermost catch installs the
 * handler and clears the flag, its release puts back what was there. Not for threads other than the
 * one that catches. Nothing to free.
 */
void interrupt_catch(void);
void interrupt_release(void);
/* The signal that came since the outermost catch (SIGINT, SIGTERM or SIGUSR1), 0 when none (or when
 * nothing catches). */
int interrupt_signal(void);
/* The process that sent it with kill(), 0 when unknown (the terminal's Ctrl-C, or none). */
int interrupt_sender(void);
/* Its name ("SIGINT"), for messages. */
const char *interrupt_name(int sig);

#endif
