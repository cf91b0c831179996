/*
 * argoapi.h - what argocd.c (the Application, sync, waiting) and argoapi.c
 * (settings, HTTP, error shapes) share.  Private to those two files (and
 * livediff.c, which reads managed-resources through request(), and
 * preflight.c, which asks GET /api/version); the interface is argocd.h.
 */
#ifndef IDPMAKE_ARGOAPI_H
#define IDPMAKE_ARGOAPI_H

#include <curl/curl.h>
#include <jansson.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/pem.h"
#include "git/gitops.h"
#include "graph/graph.h"

#ifndef IDPMAKE_VERSION
#define IDPMAKE_VERSION "dev"
#endif

#define BODY_CAP (16u << 20)		/* bytes of a response body kept */
#define RETRIES 5			/* retries of one request (invariant 2) */
#define REQUEST_TIMEOUT_MS 60000L	/* one request, capped by the step's deadline */
#define DELETE_TIMEOUT 300		/* seconds argocd_delete_app waits for the app to go */
#define DEFAULT_TIMEOUT 300		/* seconds, when a package says 0 */


struct watch;

struct argocd {
	const struct distro *d;
	const char *statedir;
	const char *base;		/* scheme://host:port[/root-path], no trailing '/' */
	char *auth;			/* "Authorization: Bearer TOKEN" (malloc'd; never shown) */
	int need_login;			/* argocd.login gives the token (argologin.c) */
	const char *login_err;		/* its login failed: why (tried once a run) */
	const char *password;		/* during the login: masked by clean() as the token is */
	const char *token;		/* points into auth, for masking */
	const char **headers;		/* -H "K: V" from ARGOCD_OPTS */
	size_t nheaders;
	int insecure;			/* no TLS verification */
	const char *cainfo;		/* CA bundle, or NULL */
	const char *repo_url;		/* the GitOps repository, as Applications name it */
	int verbose;
	long poll_ms, backoff_ms;
	int token_jwt;			/* the token has Argo CD's a.b.c shape */
	struct gitops_opts git;		/* the GitOps clone, to tell a newer revision from a stale one */
	int have_git;
	struct watch *watch;		/* the run's watch stream (argowatch.c), once a wait asked for it */
	void (*watch_end)(struct argocd *a);	/* argowatch.c's watch_stop, set with watch: argocd_close ends it */
	int watch_off;			/* IDPMAKE_ARGOCD_WATCH=0, or given up: waits poll */
};

/* one conversation: a step's (or a call's) curl handle, log and deadline */
struct resp;

struct call {
	struct argocd *a;
	CURL *curl;
	FILE *log;			/* the step's log, or NULL */
	double deadline;		/* now_s() value; 0: none */
	int out_of_time;		/* a request gave up because the deadline would pass before its next try */
	const char *app;		/* the application's name */
	int (*settled)(const struct resp *r);	/* a 5xx answer this says is final is not retried */
	int once;			/* never retried: the request carries a password (argologin.c) */
};

struct resp {
	long status;			/* HTTP status */
	struct buf body;		/* up to BODY_CAP bytes */
	int over;			/* the body was longer */
	json_t *json;			/* the body parsed, or NULL */
	int code;			/* the gRPC code of an error body, or -1 */
	const char *message;		/* the message of an error body (masked, arena), or the text */
};

const char *api_error(struct call *c, const char *doing, struct resp *r);
const char *app_path(struct call *c, const char *suffix, const char *query);
/* the call's Application as Argo CD's RBAC names it (security.RBACName): PROJECT/NAME in argocd, else PROJECT/NS/NAME */
const char *app_rbac_object(struct call *c);
void call_close(struct call *c);
int call_open(struct call *c, struct argocd *a, const char *app, const char *log, int timeout);
const char *clean(const struct argocd *a, const char *s, size_t n);
json_t *jget(json_t *o, const char *path);
const char *jstr(json_t *o, const char *path);
int nap(long ms);
void note(struct call *c, int show, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/*
 * argoreg.c: is the cluster named only by `name` known to Argo CD?  Asked
 * once per run and cluster (the first sync asks, the others wait for its
 * answer): 0, or -1 with *err naming the cluster.
 */
int argocd_cluster_known(struct call *c, const struct cluster *cl, const char **err);
/*
 * argoappset.c: a package synced through one ApplicationSet (fleet.md
 * "ApplicationSets"): set this cluster's element of the package's list
 * generator to the folder and commit, so the generated Application `name`
 * moves, and wait until Argo CD has generated it.  0, or -1 with *err.
 */
int argocd_appset_element(struct call *c, const struct step *s, const char *name, json_t *app, const char *commit,
			  const char **err);
/* argoappset.c: the ApplicationSet's template for the Application `app` (new reference) */
json_t *argocd_appset_template(const json_t *app);
/* argoappset.c: the path of ApplicationSet `name` in argocd.namespace (appsetNamespace) */
const char *argocd_appset_path(const struct argocd *a, const char *name);
/* argoappset.c: is every field of `want` in `have`, equal?  An absent field equals an empty one */
int argocd_json_subset(const json_t *want, const json_t *have);
int request(struct call *c, const char *method, const char *path, json_t *body, struct resp *r, const char **err);

/* kubecred.c: a kubeconfig's credential for one context (NULL: its current one) */
struct kubecred {
	const char *server;
	int insecure;
	char *ca, *cert, *key;		/* base64 (malloc'd), or NULL */
	char *token;			/* malloc'd, or NULL */
};
/* parse text (`path` names it in messages; dir NULL: it may name no file, as a Secret's); 0, or -1 with *err */
int kubecred_parse(const char *path, const char *dir, const char *text, size_t len, const char *context,
		   struct kubecred *k, const char **err);
void kubecred_free(struct kubecred *k);	/* zeroes what it frees */
/* argocapireg.c: a created cluster's server as its Secret gives it: an https URL of a host (no user info, no
 * control byte, bounded) */
int kube_server_ok(const char *s);
/* argocapireg.c: created cluster cl's Cluster is this distro's (or up --adopt: *adopting names whose it was)
 * and `server`, its kubeconfig Secret's, is its spec.controlPlaneEndpoint; 0, or -1 with *err ending in
 * `refused` ("not registered") */
int capi_secret_server_check(const struct cluster *cl, const char *server, const char *refused, const char **adopting,
			     const char **err);
/* kubecred.c: the credential of cl's register.kubeconfig at register.context; 0, or -1 with *err */
int kubecred_read(const struct cluster *cl, struct kubecred *k, const char **err);
/* kubecred.c: a PEM file's content in base64 (malloc'd), or NULL with *err; its content is never in a message */
char *kubecred_file_base64(const char *path, const char *what, enum pem_want want, const char **err);
/*
 * argoreg.c: upsert a cluster idpmake created (argocapireg.c) at `server` with
 * config `cfg` (its secrets also in sv[n], masked in messages): 0; 1 when
 * Argo CD could not reach it yet (*err says so); -1 with *err.  Before
 * any credential of it goes anywhere, argocd_created_entry: 0 when Argo CD
 * has nothing at `server`, or cl's entry of this distro (or unmarked);
 * -1 with *err when it has that server under another name, or as another
 * distro's (unless up --adopt), or cannot say
 */
/* capientry.c: Argo CD's entries of a created cluster (see there) */
int argocd_created_entry(struct call *c, const struct cluster *cl, const char *server, const char **err);
const char *argocd_created_over(struct call *c, const struct cluster *cl, const char *server, json_t *have);
int argocd_stale_entry(struct call *c, const struct cluster *cl, const char *server, const char **old, const char **err);
int argocd_drop_stale(struct call *c, const struct cluster *cl, const char *old, const char *server, const char **err);
int argocd_register_created(struct call *c, const struct cluster *cl, const char *server, json_t *cfg,
			    const char *const *sv, size_t n, const char **err);
/*
 * argoreg.c: PUT the labels of a cluster someone else registered (credential:
 * external; `entry` Argo CD's answer for it: refused when another distro's), nothing else: its labels now (have, an object or NULL) less
 * `drop` (the keys idpmake set before that the distro no longer has), with
 * the distro's over them; no request when they are so already.  0 or -1.
 */
int argocd_cluster_labels(struct call *c, const struct cluster *cl, const char *server, json_t *entry,
			  const json_t *have, const struct strlist *drop, const char **err);

/* is t a token a header may carry (no byte <= ' ', no DEL)? */
int argocd_token_ok(const char *t);
/* the token every request sends (copied; the old one zeroed) */
void argocd_set_token(struct argocd *a, const char *t);

/*
 * A curl handle made ready for Argo CD (after curl_easy_reset): the URL, the
 * Accept header line, the token, ARGOCD_OPTS' headers, TLS, no redirects;
 * h: header lines already added (freed by the caller with the result).
 */
struct curl_slist *argocd_curl_setup(struct argocd *a, CURL *k, const char *url, const char *accept, char *ebuf,
				     struct curl_slist *h);

/*
 * argowatch.c: the run's Applications through one watch stream
 * (GET /api/v1/stream/applications, issue 26) instead of a GET per
 * Application per poll.  watch_wait: the newest Application `name` with a
 * resourceVersion above *rv (a new reference in *app; *rv set to it): 1;
 * 0 when max_ms passed first; -1 when there is no stream (off, refused,
 * dropped for good, or a proxy that buffers it: warned once), and the
 * caller polls.  watch_stop ends it (argocd_close).
 */
int watch_wait(struct argocd *a, const char *name, long long *rv, long max_ms, json_t **app);
void watch_stop(struct argocd *a);
/* the resourceVersion of an Application (0 when it has none) */
long long app_rv(json_t *app);
void resp_reset(struct resp *r);
/* r->json, and code and message for a status that is not 200, from r->body */
void resp_decode(struct argocd *a, struct resp *r, const char *ctype);	/* ctype: the Content-Type, or NULL */
long long rfc3339(const char *s);

/* argocd.c, for argoverify.c: an operation Argo CD's auto-sync started; GET the Application (0 with
 * *app, or -1 with *err); the call's deadline passed; the commit a sync waits for (pushed_commit)
 * and whether `rev` reached it */
int app_automated(json_t *st);
int app_get(struct call *c, int refresh, json_t **app, const char **err);
int call_past(struct call *c);
const char *pushed_commit(const struct step *s, const char *commit);
int rev_reached(const struct argocd *a, const struct step *s, const char *rev, const char *want);

/* argospec.c: the Application's parts that depend on the package's renderer */
int argocd_helm_app(const struct step *s);	/* a helm chart Argo CD renders */
/* the chart as the Application's Helm source, values inline; 0, or -1 with *err */
int argocd_helm_source(struct argocd *a, struct step *s, json_t *app, const char **err);
/* an argocd-app package: its rendered Application (or ApplicationSet: *set) as app; 0, or -1 */
int argocd_cnoe_app(struct argocd *a, struct step *s, json_t *app, int *set, const char **err);

#endif
