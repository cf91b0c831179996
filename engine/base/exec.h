/* exec.h - child processes (renderers, hooks, tool versions), as git's run-command */
#ifndef IDPMAKE_EXEC_H
#define IDPMAKE_EXEC_H

#include "base/buf.h"

/*
 * The cap on -j.  Every thread runs at most one child at a time (proc_run
 * waits for it), and the threads that run children are the scheduler's
 * workers (at most JOBS_MAX), the scan's (at most 16) and the main thread:
 * so at most JOBS_MAX + 17 children run at once, and intr.c's table of
 * running children (JOBS_MAX + 64 slots) holds them all.
 */
#define JOBS_MAX 256

struct proc {
	const char *const *argv;	/* argv[0] is searched on PATH */
	const char *cwd;		/* NULL: inherit */
	const char *const *env;		/* NULL: proc_env_base's allowlist */
	const char *log;		/* stderr (and stdout unless captured) go here; NULL: /dev/null */
	struct buf *out;		/* capture stdout here, or NULL */
	size_t out_cap;			/* byte cap on captured stdout; 0: 1 GiB */
	int timeout;			/* seconds; 0: none */
	/* results */
	int status;			/* exit code, or 128+signal */
	int timed_out;
	int spawn_errno;		/* nonzero: the program could not be started */
	int cwd_failed;			/* and the cause was the folder cwd (gone, not a folder...) */
};

/*
 * Run to completion: 0 when it exited 0, -1 otherwise (see the fields).
 * The child gets descriptors 0 (/dev/null), 1 and 2 and no other: every
 * descriptor above 2 is closed at spawn, whoever opened it (libcurl's
 * sockets, another step's log).  It runs in its own process group.  After
 * an interrupt (intr.h) nothing new starts, and a running child gets the
 * signal.
 */
int proc_run(struct proc *p);
/*
 * proc_run with the child's stderr (and its stdout, unless captured) in a
 * temporary file, removed after: on failure, -1 and *why the child's last
 * line of it (terminal-safe), else proc_failure's words; arena.  p->log
 * must be NULL.
 */
int proc_run_why(struct proc *p, const char **why);
/* a one-line description of a failed proc_run, arena */
const char *proc_failure(const struct proc *p);
/* argv as a shell would read it back (words with odd characters in '...'), arena */
const char *proc_command(const char *const *argv);
/* find a program on PATH; arena path or NULL */
const char *which(const char *prog);
/* signal every running child's process group; safe in a signal handler */

/*
 * The environment children get: only the variables named here are passed
 * on from idpmake's, never a credential (ARGOCD_AUTH_TOKEN,
 * IDPMAKE_GIT_TOKEN, ...):
 *   PATH HOME USER LOGNAME LANG LANGUAGE LC_* TMPDIR TZ TERM KUBECONFIG
 *   HELM_{CACHE,CONFIG,DATA}_HOME HELM_PLUGINS HELM_REGISTRY_CONFIG
 *   HELM_REPOSITORY_{CACHE,CONFIG} XDG_{CACHE,CONFIG,DATA}_HOME XDG_RUNTIME_DIR
 *   SSL_CERT_FILE SSL_CERT_DIR HTTP(S)_PROXY NO_PROXY (either case)
 */
int proc_env_allowed(const char *name, size_t len);
/* push the allowed entries of idpmake's environment onto env */
void proc_env_base(struct strvec *env);

#endif
