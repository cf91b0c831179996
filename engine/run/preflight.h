/*
 * preflight.h - up's checks before anything is pushed, synced or registered
 * (idpmake(1) "PRE-FLIGHT").
 *
 * up predicts which selected steps will run, as plan does, and checks what
 * those steps need, all of it, before the first render: Argo CD's settings,
 * that it answers and accepts the token (one GET /api/version), each
 * register step's credential, whether an http(s) GitOps remote asks for
 * a credential the push does not have, and that the kube context of each
 * cluster whose deploy: kubectl syncs run answers (kubectl_check).  A run
 * with nothing to do checks nothing and makes no request.
 */
#ifndef IDPMAKE_PREFLIGHT_H
#define IDPMAKE_PREFLIGHT_H

struct argocd;
struct ctx;

struct preflight {
	const char *argocd_err;		/* why Argo CD cannot be used (argocd_open's error, or its answer), or NULL */
	int asked;			/* GET /api/version was asked */
	const char *late;		/* put off until the renders ran (preflight_late): the first step that
					 * would need Argo CD, or NULL */
	int down;			/* GET /api/version got no answer (Argo CD unreachable) */
};

/*
 * Does Argo CD answer, and accept the token?  Asked once (pf->asked); `a`
 * NULL: pf->argocd_err says why there is none.  0, or -1 (pf->argocd_err).
 */
int preflight_argocd(struct preflight *pf, struct argocd *a);

/*
 * The checks for the steps that will run (after --refresh decided what
 * drifted).  0; or 1 after printing every problem, one line each (the step
 * or the setting, the cause, the way out), and a last line saying nothing
 * was pushed.  mask (NULL: every selected step): only the steps whose
 * mask[i] is want, for up's bootstrap (bootstrap.h): its local steps
 * first (want 1), the others once they ran (want 0).  The kube context of
 * a cluster made this run (CLUSTER:kind) is not checked: it is not there.
 * When only a render's new output would make the run talk to Argo CD
 * (samerender.h: a render to run may give its old output), Argo CD is not
 * asked now: pf->late names the step, and preflight_late asks.
 */
int preflight_run(struct preflight *pf, struct ctx *c, struct argocd *a, const char *mask, int want);

/*
 * build_run's gate (build_opts.gate): the renders ran, and the push or a
 * step that talks to Argo CD is about to start.  What was put off until
 * now: Argo CD's answer (pf->late) and who owns what the run changes
 * (owner_check_late).  0; 1 after printing the problem or the collisions
 * (nothing may start); -1 when Argo CD could not say who owns what.
 */
int preflight_late(struct preflight *pf, struct ctx *c, struct argocd *a);

/*
 * plan: the refusals up would make before the push, on the steps plan
 * decided (dry run): the checks of preflight_run and owner_check, made now
 * (none put off), each printed as up prints it.  A check that needs a
 * server that does not answer is named as not checked (on stderr, and in
 * *unchecked for plan --json), never passed.  0; PLAN_REFUSED after
 * printing the refusals.
 */
#define PLAN_REFUSED 3
int preflight_plan(struct ctx *c, const char ***unchecked, size_t *nunchecked, size_t *nrefused);

#endif
