/* interrupt.c: SIGINT, SIGTERM and SIGUSR1 caught as a flag that a run's long steps look at. */
#include "interrupt.h"

#include <signal.h>
#include <string.h>

static volatile sig_atomic_t caught;
static volatile sig_atomic_t sender;
static int depth;
static struct sigaction old_int, old_term, old_usr1;

static void on_signal(int sig, siginfo_t *info, void *context)
{
	(void)context;
	caught = sig;
	sender = info && info->si_code == SI_USER ? info->si_pid : 0;
}

void interrupt_catch(void)
{
	struct sigaction sa;

	if (depth++)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_signal;
	sa.sa_flags = SA_SIGINFO;
	caught = sender = 0;
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	sigaction(SIGUSR1, &sa, &old_usr1);
}

void interrupt_release(void)
{
	if (!depth || --depth)
		return;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGUSR1, &old_usr1, NULL);
	caught = 0;
}

int interrupt_signal(void)
{
	return caught;
}

int interrupt_sender(void)
{
	return sender;
}

const char *interrupt_name(int sig)
{
	return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGUSR1 ? "SIGUSR1" : "a signal";
}
