/*
 * targets.h - what a run acts on (issue 19 #3): the GitOps remote and
 * branch, the Argo CD server, the context and why it is in use, and for
 * `deploy: kubectl` the kubeconfig and kube context of each cluster.
 * `up` and `plan` print it as one line before anything changes:
 *
 *     acting on gitops https://git.example.com/gitops.git branch main (distro),
 *       argocd argocd.example.com (context prod), context prod (--context),
 *       kubectl in-cluster: context kind-idp (current-context) in /home/u/.kube/config
 *
 * (one line: wrapped here).  A server and its credential come from the same
 * place: targets_check refuses a run whose parts disagree (context.h).
 */
#ifndef IDPMAKE_TARGETS_H
#define IDPMAKE_TARGETS_H

#include <stdio.h>

struct ctx;
struct distro;

/*
 * After the context is applied (ctx_load): for up and plan, refuse an
 * ARGOCD_SERVER or ARGOCD_OPTS --server other than the server the distro
 * or a context names (argoserver.c), and an argocd block whose GitOps
 * repository is the state's own (repourl.h); for every command, refuse
 * them against a context chosen for the run, and IDPMAKE_GIT_TOKEN for a
 * remote the context supplied; take the git token from the context's
 * git-token-env.  0, or 2 after the message.
 */
int targets_check(struct ctx *c);
/*
 * Print the line (to f: stderr, flushed, before anything else of the run),
 * resolving and checking the kube targets of the selected kubectl syncs:
 * 0, or -1 after the line and then why one is refused (issue 33 #4).
 */
int targets_print(struct ctx *c, FILE *f);
/* plan's summary: " (no argocd configured: N Argo CD steps are skipped)", or "" */
const char *targets_skipped_note(const struct ctx *c);


#endif
