/*
 * argocd.h - the Argo CD client (engine.md "Argo CD"), over libcurl and
 * jansson, following ../shared/argocd/API.md.
 *
 * A sync step: create or update the package's Application
 * (POST /api/v1/applications?upsert=true), sync it to the pushed commit
 * (POST .../sync), then poll GET .../NAME until the operation is done by
 * the rule of `argocd app wait` (API.md 5.8), the application is Synced and,
 * unless `sync: {wait: synced}`, Healthy.
 *
 * Where the settings come from, as the argocd CLI reads them (API.md 3.4):
 *   server  ARGOCD_OPTS --server > ARGOCD_SERVER > distro argocd.server;
 *           host[:port] (https, or http with --plaintext; :443 appended when
 *           there is no port, unless --grpc-web) or a full http(s):// URL;
 *           --grpc-web-root-path P puts /P before every path
 *   token   ARGOCD_OPTS --auth-token > ARGOCD_AUTH_TOKEN > argocd.token-file
 *   TLS     --insecure or argocd.insecure: no verification; --server-crt or
 *           argocd.ca-file: the CA bundle
 *   also    -H/--header "K: V" extra headers; other flags are accepted and ignored
 *
 * Secrets: the token is only ever put in the Authorization header.  It is
 * never in a message, a log, the state or -v output (which shows
 * "Authorization: Bearer ***"); a server message that quoted it is masked.
 *
 * Environment for tests: IDPMAKE_ARGOCD_POLL_MS (poll interval, default
 * 500), IDPMAKE_ARGOCD_BACKOFF_MS (first retry delay, default 200).
 */
#ifndef IDPMAKE_ARGOCD_H
#define IDPMAKE_ARGOCD_H

#include <jansson.h>

#include "graph/graph.h"

struct argocd;

/*
 * Read the settings above and check them; NULL with *err when Argo CD is
 * not configured (no server) or misconfigured (no token, a bad ARGOCD_OPTS).
 * `statedir` locates the default GitOps repository and the rendered bundles.
 * Call from the main thread before any worker starts (curl_global_init).
 */
struct argocd *argocd_open(const struct distro *d, const char *statedir, int verbose, const char **err);
/* argocd_open, then, for argocd.login, the login (argologin.c): what every command opens Argo CD with */
struct argocd *argocd_connect(const struct distro *d, const char *statedir, int verbose, const char **err);
/* argocd_open's (and argocd_connect's) *err when no token is given at all: the very pointer */
extern const char argocd_no_token[];
/*
 * up opens Argo CD with argocd_open and logs in (argocd.login) only when a
 * request is to be made (the pre-flight's, or an empty state's proof of a
 * sync): a run with nothing to sync sends no password.  0, or -1 with *err.
 */
int argocd_login_now(struct argocd *a, const char **err);
void argocd_close(struct argocd *a);

/*
 * The GitOps repository's clone (gitops.h), for telling an Application
 * Synced at a revision newer than the one pushed (it descends from it) from
 * one at an older or an unknown revision (not done).  Without it, only the
 * pushed revision itself counts as done.
 */
struct gitops_opts;
void argocd_set_git(struct argocd *a, const struct gitops_opts *o);

/*
 * The sync step (build.h's struct sync_ops, ctx = the struct argocd): 0, or
 * -1 with *err (one line, no secret).  Thread-safe; writes the requests it
 * made to s->log when that is set.
 */
int argocd_sync_step(void *ctx, struct step *s, const char *commit, const char **err);
/*
 * A wave's bake (build.h's verify): is the sync step's Application still
 * Synced at the commit (a newer push too, for the packages synced at their
 * own revision) and, unless `wait: synced`, Healthy?  One GET, with
 * ?refresh=normal when `refresh` (the bake's last look; its polls do not).
 */
int argocd_verify_step(void *ctx, struct step *s, const char *commit, int refresh, const char **err);
/*
 * A wave's bake on the run's watch stream (build.h's watch; argowatch.c):
 * waits up to max_ms for a state of one of the n steps' Applications that
 * verify must judge (the first one seen; then one no longer Synced, or
 * Healthy when the package waits for it, or with another revision or spec
 * than the last one judged); 1 with
 * *which, 0 when none came, -1 when there is no stream (the bake polls).
 * A step whose Application the stream does not carry comes back every
 * poll interval.  *state starts NULL; a call with n = 0 frees it.
 */
int argocd_bake_watch(void *ctx, struct step *const *steps, size_t n, void **state, long max_ms, size_t *which);
/* IDPMAKE_ARGOCD_POLL_MS: how often waits and bakes poll */
long argocd_poll_ms(const struct argocd *a);

/*
 * The application's status.sync.status and status.health.status (malloc'd,
 * "" when absent), after a refresh=normal when `refresh`.  0; 1 when the
 * application does not exist (both set to NULL); -1 with *err.
 */
int argocd_app_status(struct argocd *a, const char *app, int refresh, char **sync_status, char **health,
		      const char **err);

/*
 * Delete an application with cascade=true (its resources go too) and wait
 * until it is gone (at most 300 s).  0 (also when it did not exist), or -1 with *err.
 */
int argocd_delete_app(struct argocd *a, const char *app, const char **err);
/*
 * argoappset.c, for up --prune: Application `app`, generated by this
 * distro's ApplicationSet `set`, goes by its element leaving the set's list
 * generator (the set itself deleted when no element is left), so Argo CD's
 * ApplicationSet controller deletes it and does not make it again; waits
 * until it is gone.  0, or -1 with *err.
 */
/* argoappset.c: the lock of a read-modify-write of an ApplicationSet's generator (on: 1, off: 0) */
void argocd_appset_lock(int on);
int argocd_appset_drop(struct argocd *a, const char *set, const char *app, const char **err);

/* the expanded argocd.app-name of a package on a cluster (arena), NULL after a located error */
const char *argocd_app_name(const struct distro *d, const struct step *s);

/*
 * The repository URL Applications use: argocd.repo-url, else git.remote
 * without any user or password in it (Argo CD has its own repository
 * credentials), or file://REALPATH-OF-STATE/gitops.git for the embedded
 * default (arena).
 */
const char *argocd_repo_url(const struct distro *d, const char *statedir);

/*
 * The Application object idpmake sends for a sync step (a new reference),
 * for keys and for the request.  For a helm package rendered by Argo CD the
 * source is the chart's, without helm.values: the sync takes the whole
 * source from the rendered application file, whose content the key covers
 * through the render's output hash.
 */
json_t *argocd_app_spec(const struct distro *d, const struct step *s, const char *repo_url);
/*
 * The annotation that tells Argo CD which folders an Application's
 * manifests come from: a commit that changes none of them moves its cached
 * manifests to the new commit instead of generating them again (Argo CD's
 * high_availability.md, "Webhook and Manifest Paths Annotation").  Set to
 * "/FOLDER" on every Application whose source is its GitOps folder; not on
 * a helm package Argo CD renders (its source is the chart) nor on an
 * argocd-app package's Application, relayed as written.
 */
extern const char ARGOCD_GENERATE_PATHS[];

/*
 * Registration (argoreg.c, fleet.md "Clusters").  The register step
 * (build.h's struct sync_ops .reg): CLUSTER:register upserts the cluster
 * with its credential (register.token-env, or register.kubeconfig and
 * context), then sets its labels and annotations with PUT updatedFields;
 * repository:register upserts the GitOps repository with
 * IDPMAKE_GIT_USERNAME / IDPMAKE_GIT_TOKEN (no token: nothing to do).  0, or
 * -1 with *err (no credential in it).  Thread-safe.
 */
int argocd_register_step(void *ctx, struct step *s, const char **err);
/*
 * What up registers with (argocapireg.c): argocd_register_step, but for a
 * cluster made through Cluster API, whose credential comes from its
 * NAME-kubeconfig Secret on the management cluster (create.credential).
 */
int argocd_register_any(void *ctx, struct step *s, const char **err);
/*
 * Does Argo CD know the cluster named only by `name` (build.h's struct
 * sync_ops .lookup)?  0 yes; 1 no, with *err naming it; -1 could not tell,
 * with *err.  The request goes to LOG (may be NULL); the answer is kept for
 * the run (the cluster's syncs ask no more).  Thread-safe.
 */
int argocd_cluster_lookup(void *ctx, const struct cluster *cl, const char *log, const char **err);
/*
 * What a cluster's registration says besides its labels (server, name,
 * where the credential comes from; never the credential): recorded as the
 * CLUSTER:register step's output, so that a later run whose only change is
 * the labels makes only the PUT (argocd_register_labels_only, before the run).
 */
struct hash argocd_cluster_connection(const struct distro *d, const struct cluster *cl);
void argocd_register_labels_only(const struct cluster *cl);
/*
 * The pre-flight (preflight.c): can the register step s run?  For a
 * cluster, its credential as the step reads it (register.token-env set;
 * the kubeconfig readable, with the context, its cluster and a user with a
 * credential; register.ca-file readable), nothing kept; for the repository,
 * may IDPMAKE_GIT_TOKEN go to Argo CD (`a`, or NULL when it cannot be used).
 * No request.  0, or -1 with *err (no credential in it).
 */
int argocd_register_check(struct argocd *a, const struct step *s, const char **err);

/*
 * A cluster Cluster API makes (capi.h; argocapi.c): its Cluster's status as
 * Argo CD's resource API shows it (hostile input; arena strings).
 */
struct capi_status {
	const char *uid;		/* metadata.uid (its incarnation), or NULL when absent or not a uid */
	const char *phase;		/* status.phase, or "" */
	long long generation, observed;	/* metadata.generation, status.observedGeneration (-1: none) */
	int initialized;		/* the control plane is initialized (either API version) */
	int available;			/* Available True (v1beta2), or Ready True (v1beta1) */
	int converged;			/* generation observed, topology reconciled, machines up to date */
	int reconcile_failed;		/* TopologyReconciled False: ReconcileFailed or ClusterClassNotReconciled */
	int deleting;			/* metadata.deletionTimestamp is set */
	const char *fatal;		/* a failureReason or a condition of severity Error (v1beta1), or NULL */
	const char *why;		/* the conditions that are not True, one line */
};
int capi_status_parse(const char *text, size_t len, struct capi_status *st);
/*
 * CLUSTER:provision: wait until the Cluster has converged, or, when it is
 * not the one of uid `known` (NULL: none was provisioned; or it was made
 * again), until its control plane is initialized; 0 with *uid (its
 * metadata.uid), or -1 with *err.
 */
int argocd_provision_step(void *ctx, struct step *s, const char *known, const char **uid, const char **err);
/*
 * up --prune --delete-clusters: delete the Cluster `name` that Application
 * `app` holds (its namespace and version from the resource tree), alone,
 * and wait up to `timeout` seconds until it is gone.  0 once it is gone, 1
 * when there is no such Application, 2 when its tree shows no such Cluster
 * (whether the Cluster is gone is then for the caller to find out, from the
 * management cluster), or -1 with *err (naming its conditions when it times
 * out).
 */
int argocd_capi_destroy(struct argocd *a, const char *app, const char *name, int timeout, const char **err);
/*
 * --refresh (register.c): the string `field` of each item of GET
 * /api/v1/WHAT (clusters: "server"; repositories: "repo"), in the arena.
 * Their number, or -1 with *err.
 */
int argocd_list_field(struct argocd *a, const char *what, const char *field, const char ***out, const char **err);
/*
 * up --prune: delete the cluster idpmake registered under `name`.  0 deleted;
 * 1 Argo CD no longer has it; 2 Argo CD has a cluster of that name that
 * does not carry idpmake's mark (annotation idpmake.io/cluster), left alone;
 * 3 its annotation idpmake.io/distro names another distro, left alone;
 * -1 with *err.
 */
int argocd_unregister_cluster(struct argocd *a, const char *name, const char **err);

/* the server ARGOCD_OPTS names with --server (arena), or NULL */
const char *argocd_opts_server(void);
/* the environment's server: ARGOCD_OPTS --server, else ARGOCD_SERVER (*from says which), or NULL */
const char *argocd_env_server(const char **from);
/*
 * The Argo CD server in force (argoserver.c): the distro's (a context's),
 * else the environment's, or NULL (push-only).
 */
const char *argocd_server(const struct distro *d);
/* does the distro ignore the environment's server (no argocd.server nor repo-url, a local remote)? */
int argocd_env_ignored(const struct distro *d);
/* the distro (a context) names a server and the environment another: why that is refused (arena), or NULL */
const char *argocd_server_conflict(const struct distro *d);
/* one Argo CD server? (scheme, case and a trailing '/' aside) */
int same_server(const char *a, const char *b);
/* where the Argo CD server in force comes from: ARGOCD_OPTS --server, ARGOCD_SERVER, context 'x', distro */
const char *argocd_server_from(const struct distro *d);
/* the client's reading of an answer (status, body) to a GET of `app` (arena); for the fuzz target */
const char *argocd_answer(struct argocd *a, const char *app, long status, const char *body, size_t len);

#endif
