/* hookkube.h - the kube context a hook's kubectl gets: its cluster's own (issue 33 #2) */
#ifndef IDPMAKE_HOOKKUBE_H
#define IDPMAKE_HOOKKUBE_H

#include "distro/model.h"

/*
 * A hook runs `kubectl` with no --context; KUBECONFIG decides where it goes.
 * It gets its cluster's context, known from (first that applies):
 *   create.kind         kind-NAME, the cluster idpmake makes
 *   create.management   the cluster Cluster API made: a kubeconfig written
 *                       from its Secret NAME-kubeconfig (as its registration
 *                       reads it), context NAME, alone in KUBECONFIG
 *   --kube-context, kube-context, register.context
 *                       KUBECONFIG=STATE/kube/CLUSTER.kubeconfig:FILES, the
 *                       first file naming the context current (no
 *                       credential in it: kubectl_hook_kubeconfig)
 * With none of these the hook keeps KUBECONFIG as idpmake has it (the
 * current-context the 'acting on' line names, targets.c).
 *
 * The created cluster's Secret is checked as its registration checks it
 * (argocapireg.c): an https server that is its Cluster's
 * spec.controlPlaneEndpoint, the Cluster this distro's, a CA, no
 * insecure-skip-tls-verify.  Only its server, CA and client certificate
 * and key or token are copied (no exec plugin, file or proxy from the
 * Secret), into a file 0600 in a folder of its own (0700, under $TMPDIR or
 * /tmp), never logged, and removed by hook_kube_done once the hook has
 * ended (a second SIGINT or a SIGKILL during the hook leaves it there).
 */
struct hook_kube {
	const char *kubeconfig;	/* KUBECONFIG for the hook, or NULL: unchanged */
	const char *context;	/* the context it names current (the hook's line), or NULL */
	const char *from;	/* where that context comes from: "kube-context", "Secret NS/NAME-kubeconfig", ... */
	const char *private_dir;	/* the created cluster's credential's folder, removed by hook_kube_done */
};

/* fill *hk for a hook of cluster cl (statedir absolute): 0, or -1 with *err (the hook must not run) */
int hook_kube_prepare(const struct cluster *cl, const char *statedir, struct hook_kube *hk, const char **err);
/* remove what hook_kube_prepare wrote with a credential in it (safe to call on any *hk) */
void hook_kube_done(struct hook_kube *hk);

#endif
