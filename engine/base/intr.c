/* intr.c - SIGINT, SIGTERM and SIGHUP: see intr.h */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/types.h>

#include "base/intr.h"

volatile sig_atomic_t intr_signal;

/*
 * The running children, so the signal handler can signal them all: a slot
 * holds a pid or 0, claimed and released with atomics (lock-free, so the
 * handler may read them).  See exec.h for why INTR_CHILDREN slots hold
 * every child; a child that found no slot anyway is signalled by its own
 * proc_run, which checks interrupted() while it waits.
 */
#define NSLOTS INTR_CHILDREN
static _Atomic int running[NSLOTS];

int intr_track(pid_t pid)
{
	for (int i = 0; i < NSLOTS; i++) {
		int none = 0;
		if (atomic_compare_exchange_strong(&running[i], &none, (int)pid))
			return i;
	}
	return -1;
}

void intr_untrack(int slot)
{
	if (slot >= 0 && slot < NSLOTS)
		atomic_store(&running[slot], 0);
}

void proc_kill_all(int sig)
{
	for (int i = 0; i < NSLOTS; i++) {
		int pid = atomic_load(&running[i]);
		if (pid > 0)
			kill(-pid, sig);
	}
}

static void on_signal(int sig)
{
	if (intr_signal) {
		/* the second signal: end now, children with us */
		proc_kill_all(SIGKILL);
		signal(sig, SIG_DFL);
		raise(sig);	/* blocked in this handler; delivered, fatal, on return */
		return;
	}
	intr_signal = sig;
	proc_kill_all(sig);
}

static void install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaddset(&sa.sa_mask, SIGHUP);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/* a closed terminal or a dropped ssh: stopped as cleanly (a hook's credential file removed, hookkube.h) */
	sigaction(SIGHUP, &sa, NULL);
}

void intr_install(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	pthread_once(&once, install);
}

int intr_exit_status(void)
{
	return intr_signal ? 128 + intr_signal : 0;
}
