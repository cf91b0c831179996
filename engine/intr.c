/* intr.c - SIGINT and SIGTERM: see intr.h */
#include <pthread.h>
#include <signal.h>
#include <string.h>

#include "exec.h"
#include "intr.h"

volatile sig_atomic_t intr_signal;

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
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
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
