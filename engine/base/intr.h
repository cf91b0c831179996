/* intr.h - SIGINT, SIGTERM and SIGHUP: a flag that long loops check, forwarded to children */
#ifndef IDPMAKE_INTR_H
#define IDPMAKE_INTR_H

#include <signal.h>
#include <sys/types.h>

/*
 * 0 until SIGINT, SIGTERM or SIGHUP arrives, then that signal's number.  Set only
 * by the handler intr_install puts in place; long loops (the scheduler,
 * YAML parsing and emitting, waits on children and servers) check it and
 * stop early.
 *
 * The first signal sets the flag and sends the same signal to every running
 * child's process group (exec.c), so the run stops cleanly: what finished
 * is recorded, the lock is released, the exit status is 128 + the signal.
 * A second signal kills the children, restores the default action and
 * raises the signal again: the process ends at once.
 */
extern volatile sig_atomic_t intr_signal;

static inline int interrupted(void)
{
	return intr_signal;
}

/* install the handler for SIGINT, SIGTERM and SIGHUP (once; later calls do nothing) */
void intr_install(void);
/* 130 after SIGINT, 143 after SIGTERM, 129 after SIGHUP, 0 when no signal came */
int intr_exit_status(void);

/* how many children can be tracked at once (exec.h: JOBS_MAX + 64) */
#define INTR_CHILDREN (256 + 64)
/* the children a signal goes to (exec.c tracks each child it starts): the
 * slot that holds pid, or -1 when every slot is taken */
int intr_track(pid_t pid);
/* the child in slot (intr_track's answer; -1 is ignored) has ended */
void intr_untrack(int slot);
/* send sig to the process group of every tracked child */
void proc_kill_all(int sig);

#endif
