/* build.h - the scheduler: runs the dirty steps in dependency order on -j workers */
#ifndef IDPMAKE_BUILD_H
#define IDPMAKE_BUILD_H

#include "base/intr.h"
#include "render/planner.h"
#include "graph/status.h"

struct build_opts {
	int jobs;			/* -j */
	int keep_going;			/* -k: stop after this many failures; 0 never */
	const char *command;		/* for the run log */
	long long run;			/* the run's number in the state: the Idpmake-Run trailer */
	/*
	 * Called once, on the main thread, when the push or a step that talks
	 * to Argo CD is about to start (the first of them to run); nonzero:
	 * it does not start, nor anything after it (up's checks put off until
	 * the renders ran: preflight_late).  NULL: none.
	 */
	int (*gate)(void *arg);
	void *gate_arg;
};

/*
 * The seam for sync steps: argocd.c provides the real one; tests may put a
 * fake here.  Called from a worker thread; 0 or -1 with *err.
 */
struct sync_ops {
	int (*sync)(void *ctx, struct step *s, const char *commit, const char **err);
	/* is the sync step's Application still at commit (or newer) and Healthy? (a wave's bake;
	 * `refresh`: ask for a fresh comparison first) */
	int (*verify)(void *ctx, struct step *s, const char *commit, int refresh, const char **err);
	long poll_ms;	/* how often a bake polls verify */
	/* the bake's wait on a watch stream: up to max_ms for one of the n steps to verify (1, *which),
	 * 0 none, -1 no stream (poll verify); n = 0 frees *state (argocd_bake_watch) */
	int (*watch)(void *ctx, struct step *const *s, size_t n, void **state, long max_ms, size_t *which);
	/* CLUSTER:register and repository:register */
	int (*reg)(void *ctx, struct step *s, const char **err);
	/* CLUSTER:provision (argocapi.c): the Cluster converged, or initialized when not of uid `known`; 0 with *uid */
	int (*provision)(void *ctx, struct step *s, const char *known, const char **uid, const char **err);
	/* a cluster named only by `name`: 0 Argo CD knows it, 1 it does not (*err), -1 could not tell */
	int (*lookup)(void *ctx, const struct cluster *cl, const char *log, const char **err);
	void *ctx;
};
extern struct sync_ops build_sync;

/* where a step's command writes its output: STATEDIR/logs/ID.log, '/' and ':' as '_' (arena) */
const char *step_log_path(const char *statedir, const struct step *s);

/* run; 0 when every step succeeded, 1 when one failed, 2 on an internal error */
int build_run(struct planner *pl, const struct build_opts *o, struct summary *sum);
/* interrupted by SIGINT/SIGTERM? the signal, or 0: intr.h's flag under its older name */
#define build_interrupted intr_signal

#endif
