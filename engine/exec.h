/* exec.h - child processes (renderers, hooks, tool versions), as git's run-command */
#ifndef IDPMAKE_EXEC_H
#define IDPMAKE_EXEC_H

#include "buf.h"

struct proc {
	const char *const *argv;	/* argv[0] is searched on PATH */
	const char *cwd;		/* NULL: inherit */
	const char *const *env;		/* NULL: inherit */
	const char *log;		/* stderr (and stdout unless captured) go here; NULL: /dev/null */
	struct buf *out;		/* capture stdout here, or NULL */
	size_t out_cap;			/* byte cap on captured stdout; 0: 1 GiB */
	int timeout;			/* seconds; 0: none */
	/* results */
	int status;			/* exit code, or 128+signal */
	int timed_out;
	int spawn_errno;		/* nonzero: the program could not be started */
};

/* run to completion: 0 when it exited 0, -1 otherwise (see the fields) */
int proc_run(struct proc *p);
/* a one-line description of a failed proc_run, arena */
const char *proc_failure(const struct proc *p);
/* find a program on PATH; arena path or NULL */
const char *which(const char *prog);
/* kill every running child (on SIGINT/SIGTERM) */
void proc_kill_all(int sig);

#endif
