/* hook.h - pre and post hooks: /bin/sh -c RUN with the package's environment */
#ifndef IDPMAKE_HOOK_H
#define IDPMAKE_HOOK_H

#include "graph/graph.h"

/*
 * Run hook step s.  `commit` is the GitOps commit holding the package,
 * `rendered` the folder of its rendered objects.  Output goes to s->log.
 * When the cluster names its kube context (create.kind, kube-context, ...),
 * the hook's KUBECONFIG starts with a file in statedir naming it current
 * (kubectl_hook_kubeconfig), so its kubectl goes where the packages go.
 * 0, or -1 with the cause in *err.  Safe from worker threads.
 */
int hook_run(const struct distro *d, struct step *s, const char *statedir, const char *commit,
	     const char *rendered, const char **err);

/*
 * Run s->hook->run (/bin/sh -c, in the hook's folder, with its timeout)
 * with the environment env, into s->log; `what` names it in *err ("hook",
 * "check").  Shared by hooks and wave checks (rollout.c).
 */
struct strvec;
int hook_spawn(struct step *s, const struct strvec *env, const char *what, const char **err);

#endif
