/* hook.h - pre and post hooks: /bin/sh -c RUN with the package's environment */
#ifndef IDPMAKE_HOOK_H
#define IDPMAKE_HOOK_H

#include "graph/graph.h"

/*
 * Run hook step s.  `commit` is the GitOps commit holding the package,
 * `rendered` the folder of its rendered objects.  Output goes to s->log.
 * When the cluster's kube context is known (create.kind, a created
 * cluster's kubeconfig Secret, kube-context, register.context,
 * --kube-context), the hook's KUBECONFIG names it current (hookkube.h), so
 * its kubectl goes to its cluster, and *note says which ("context C
 * (FROM)", for the hook's line; else NULL).  0, or -1 with the cause in
 * *err.  Safe from worker threads.
 */
int hook_run(const struct distro *d, struct step *s, const char *statedir, const char *commit,
	     const char *rendered, const char **note, const char **err);

/*
 * Run s->hook->run (/bin/sh -c, in the hook's folder, with its timeout)
 * with the environment env, into s->log; `what` names it in *err ("hook",
 * "check").  Shared by hooks and wave checks (rollout.c).
 */
struct strvec;
int hook_spawn(struct step *s, const struct strvec *env, const char *what, const char **err);

/* the environment variable a distro variable reaches a hook as: IDPMAKE_VAR_<NAME>, upper case, '-' and '.' as '_' */
const char *hook_var_env(const char *var);

#endif
