/* kubectl.h - `deploy: kubectl` packages: their sync step applies the render with kubectl */
#ifndef IDPMAKE_KUBECTL_H
#define IDPMAKE_KUBECTL_H

#include <jansson.h>

#include "graph/graph.h"

/*
 * Where a cluster's `deploy: kubectl` packages go (issue 19 #3): the
 * kubeconfig and the kube context, read with libyaml as kubectl reads them.
 *   kubeconfig: register.kubeconfig, else $KUBECONFIG (a ':' list, the first
 *               file naming a thing wins), else ~/.kube/config;
 *   context:    --kube-context > the cluster's kube-context > register.context
 *               > the kubeconfig's current-context (named, never implied).
 * The context's server must be the cluster's `server` (unless it names none
 * or https://kubernetes.default.svc, the cluster Argo CD runs in).
 */
struct kube_target {
	const char *kubeconfig;		/* the file(s) read, for messages; NULL: there is none */
	const char *kubeconfig_arg;	/* what --kubeconfig is given, or NULL (kubectl's own default) */
	const char *context;		/* NULL: no kubeconfig, kubectl's in-cluster configuration */
	const char *from;		/* --kube-context, kube-context, register.context, current-context */
	const char *server;		/* the context's cluster's server, or NULL */
};

/* --kube-context NAME for every kubectl cluster of the run (NULL: none) */
void kubectl_set_context(const char *name);
/* the run's distro (its field manager, idpmake/NAME) and up --adopt (kubeowner.h) */
void kubectl_set_owner(const char *distro, int adopt);
/*
 * KUBECONFIG for a hook of cluster cl, so that its kubectl (with no
 * --context) goes where the cluster's packages go: "DIR/kube/CLUSTER.kubeconfig:FILES",
 * the first file naming the context as current (no credential in it), the
 * others those kubectl_target read.  NULL with *err NULL when the cluster
 * names no context (create.kind, kube-context, register.context,
 * --kube-context): the hook gets KUBECONFIG as idpmake has it.  NULL with
 * *err: the context cannot be used, and the hook must not run.
 */
const char *kubectl_hook_kubeconfig(const struct cluster *cl, const char *dir, const char **err);
/* --kube-context, or NULL */
const char *kubectl_context_flag(void);
/* a cluster idpmake creates (create.kind) with --kube-context naming another context: why that is refused, or NULL */
const char *kubectl_created_conflict(const struct cluster *cl);
/* resolve (once a run) and check where cluster cl's kubectl packages go: the target, or NULL with *err */
const struct kube_target *kubectl_target(const struct cluster *cl, const char **err);

/*
 * The pre-flight's check (preflight.c) that cluster cl's kube context
 * answers and takes its credential: `kubectl [--kubeconfig F] --context C
 * get --raw /api`, which needs an authenticated caller.  NULL, or the
 * problem (arena, one line: the cluster, the context and server, kubectl's
 * last line of error, the way out).  A cluster whose target is refused
 * (kubectl_target) is NULL here: its steps say why.
 */
const char *kubectl_check(const struct cluster *cl, int timeout);

/*
 * `kubectl [--kubeconfig F] --context C ARGS... --output=json` on cluster
 * cl (its kube target), its answer parsed; NULL with *err (kubectl's last
 * line of error, never its answer).  The answer may hold Secrets: its text
 * is zeroed, and kubectl_json_wipe zeroes the parsed strings.
 */
json_t *kubectl_get_json(const struct cluster *cl, const char *const *args, const char **err);
void kubectl_json_wipe(json_t *v);

/*
 * The value of `key` in Secret ns/name on cluster cl, read with `kubectl
 * get secret -o json` through the cluster's kube target (as its packages'):
 * base64-decoded, malloc'd, for the caller to zero and free; never logged.
 * NULL with *err (kubectl's message; never the Secret's text).
 */
char *kubectl_secret_value(const struct cluster *cl, const char *ns, const char *name, const char *key,
			   const char **err);
/* the Secret's metadata.resourceVersion (digits, arena), or NULL with *err; its data is read and wiped */
const char *kubectl_secret_rv(const struct cluster *cl, const char *ns, const char *name, const char **err);
/* the same for several keys of one read (keys NULL-ended, values as many): 0, or -1 with *err and none */
int kubectl_secret_values(const struct cluster *cl, const char *ns, const char *name, const char *const *keys,
			  char **values, const char **err);

/*
 * validate --live (capidry.c): `kubectl apply --server-side --dry-run=server
 * [--namespace NS] -f DIR` on cluster cl, so that its CRD schemas and
 * webhooks judge the objects and nothing is kept (NS: where those without
 * a namespace go, as Argo CD's destination namespace; NULL: none): 0, or -1
 * with *err (kubectl's last line)
 */
int kubectl_dry_run(const struct cluster *cl, const char *dir, const char *ns, const char **err);

/* the key of a kubectl package's sync step, from its render's output */
struct hash kubectl_key(const struct step *s, struct hash output);
/*
 * apply the unpacked render in `dir` (NULL: could not unpack) with kubectl apply --server-side: 0, or -1 with
 * *err; on 0, *err is set only to a note, what up --adopt took over (one line), for the step's line
 */
int kubectl_apply(const struct step *s, const char *dir, const char **err);

#endif
