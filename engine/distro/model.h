/*
 * model.h - the data model of a loaded distro (distro.md): its rules,
 * packages, clusters, profiles and waves, as the loader (manifest.c and the
 * files it calls) fills them in and everything above reads them; the
 * lookups over it are in model.c.  The step graph built from it is graph.h.
 */
#ifndef IDPMAKE_MODEL_H
#define IDPMAKE_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "base/hash.h"
#include "base/util.h"

struct share;
struct capi;

/* a renderer: built-in (manifests, kustomize, helm, argocd-app) or a rule file */
struct rule {
	const char *name;		/* what `type:` names */
	const char *description;
	struct strlist command;		/* argv; ${src}, ${out}, vars expanded */
	struct strlist version;		/* argv whose output joins every key */
	struct strlist inputs;		/* globs under the source, hashed */
	const char *definition;		/* canonical text of the rule, hashed */
	int builtin;			/* RENDER_* for built-ins, 0 for rule files */
	struct loc loc;
};

enum { RENDER_MANIFESTS = 1, RENDER_KUSTOMIZE, RENDER_HELM, RENDER_ARGOCD_APP,
       RENDER_CAPI /* a created cluster's Cluster (capi.h): its text, never a rule users name */ };

enum source_kind { SRC_NONE, SRC_PATH, SRC_GIT, SRC_CHART };

enum hook_when { WHEN_CHANGED, WHEN_ONCE, WHEN_ALWAYS };

struct hook {
	const char *name;		/* DNS-1123 label, unique per package and phase */
	const char *run;		/* /bin/sh -c argument; no variables expanded */
	struct strlist inputs;		/* files whose content joins the key */
	enum hook_when when;
	int timeout;			/* seconds; 0: none */
	const char *dir;		/* folder of the file that defined it: the cwd */
	struct strlist env;		/* variables passed on from idpmake's environment (credentials) */
	struct strlist vars;		/* `vars:` the distro variables it reads beyond what it names (hookvars.h) */
	int has_vars;			/* `vars:` was given (an empty list: none beyond those named) */
	struct loc loc;
};

struct rewrite {
	const char *match;		/* PCRE2 pattern */
	const char *replace;		/* replacement, ${var} expanded */
	struct loc loc;
};

struct package {
	const char *name;		/* DNS-1123 label, the map key */
	const char *type;		/* as written: manifests, kustomize, helm, ... */
	struct rule *rule;		/* the renderer `type` names */
	enum source_kind src;
	const char *path;		/* SRC_PATH: folder relative to the distro */
	struct {
		const char *url, *ref, *path;
		struct loc loc;
	} git;				/* SRC_GIT */
	struct {
		const char *repo, *name, *version;
	} chart;			/* SRC_CHART */
	int render_local;		/* helm: `render: local` */
	int deploy_kubectl;		/* `deploy: kubectl`: its sync step is kubectl apply --server-side (kubectl.c) */
	struct strlist values;		/* values files, merged in order */
	struct kvlist set;		/* dotted keys set after values */
	const char *namespace;		/* default: the package name */
	struct loc namespace_loc;	/* where namespace was written */
	struct loc path_loc;		/* where path was written (SRC_PATH) */
	struct strlist needs;		/* PKG or CLUSTER/PKG */
	struct kvlist labels;
	struct rewrite *rewrite;
	size_t nrewrite;
	struct {
		int wait_healthy;	/* wait: healthy (1, default) or synced (0) */
		int timeout;		/* seconds, default 300 */
		int prune;
		struct strlist options;	/* syncOptions */
		int automated;		/* Argo CD's automated sync, pinned to the synced commit */
		int self_heal;		/* automated.selfHeal */
		int appset;		/* fleet: applicationset for this package */
	} sync;
	struct hook *pre, *post;
	size_t npre, npost;
	const char *dir;		/* folder of the distro that defined the package */
	const char *group;		/* argocd-app: the package this Application came from, or NULL */
	const char *app_file;		/* argocd-app: the Application file this package is */
	const char *spec;		/* canonical text of the package's fields, hashed */
	struct cluster *capi_of;	/* cluster-NAME: the Cluster of created cluster NAME (capi.h), or NULL */
	int capi_spec;			/* some created cluster's create.spec: a template, on no cluster itself */
	struct loc loc;
};

enum cluster_mode { MODE_LINKED, MODE_CLONED };

struct cluster {
	const char *name;
	const char *server;		/* destination.server, or NULL */
	const char *argo_name;		/* destination.name, or NULL */
	struct strlist profiles;	/* empty: every package */
	struct kvlist vars;		/* over the distro's vars */
	struct kvlist labels;		/* select it in waves, -l and profiles */
	enum cluster_mode mode;		/* linked (follows the distro) or cloned */
	struct {
		int set;		/* `register:` given: a CLUSTER:register step */
		const char *token_env;	/* bearer token from this variable (never read into the state) */
		const char *ca_file;	/* the cluster's CA, or NULL */
		int insecure;		/* skip the cluster's TLS verification (warned) */
		const char *kubeconfig, *context;	/* or server, CA and credential from there */
		struct loc loc;
	} reg;
	struct wave *wave;		/* the wave it rolls out in (fleet.c) */
	const char *kube_context;	/* deploy: kubectl goes to this kube context (kubectl.h), or NULL */
	/* create: a cluster idpmake makes itself (create.c); for now a local kind cluster */
	struct {
		const char *kind;	/* create.kind.name: the kind cluster (context kind-NAME), or NULL */
		const char *image;	/* create.kind.image: the node image, or NULL (kind's default) */
		int host_port;		/* create.kind.host-port: the host port to the node's 443 (8443) */
		struct capi *capi;	/* or made through Cluster API on a management cluster (capi.h), or NULL */
		struct loc loc;
	} create;
	struct loc loc;
};

/* a wave of the rollout (fleet.md "Waves"): clusters that go together */
struct wave {
	const char *name;
	struct strlist clusters;	/* name globs */
	struct kvlist selector;		/* labels, all must match */
	int max_parallel;		/* clusters syncing at once; 0: all */
	int bake;			/* seconds Healthy before the wave is done */
	int max_failed;			/* failed clusters tolerated ... */
	int max_failed_pct;		/* ... as a percentage of the wave (1) or a count (0) */
	struct hook *check;		/* run like a hook when the wave is healthy, or NULL */
	size_t nclusters;		/* clusters in it, after assignment */
	int implicit;			/* the `rest` wave of unmatched clusters, or the one wave without `rollout` */
	struct loc loc;
};

struct profile {
	const char *name;
	struct strlist packages;
	struct loc loc;
};

/* a Secret of a cluster of the distro, read with kubectl when it is needed (argocd.login, git.credentials) */
struct secretref {
	const char *ns, *name;		/* NAMESPACE/NAME; name NULL: none */
	const char *cluster;		/* the cluster it is read from; default in-cluster */
	struct loc loc;			/* where it (or its cluster) was written */
};

struct distro {
	const char *file;		/* path of distro.yaml as given */
	const char *dir;		/* its folder */
	const char *name;
	const char *description;
	struct kvlist vars;
	struct kvlist urls;		/* urls: what the platform serves, NAME: URL (${vars}), said after a bootstrap */
	struct {
		const char *remote;	/* NULL: STATE/gitops.git */
		struct loc remote_loc;	/* where remote was written; file NULL: the default */
		const char *branch;	/* default main */
		const char *path;	/* default ${cluster}/${package} */
		struct loc path_loc;	/* where path was written */
		const char *author_name, *author_email;
		const char *ca_file;	/* private CA for https remotes */
		const char *pin_cert;	/* set by tlscert_trust: idpmake's own certificate, for this remote */
		struct {
			struct secretref ref;	/* ref.name NULL: none (IDPMAKE_GIT_TOKEN, or nothing) */
			const char *user_key, *password_key;	/* default username, password */
		} credentials;		/* git.credentials: the remote's user and password (run/gitcreds.c) */
	} git;
	struct {
		int named;		/* the distro names argocd.server or argocd.repo-url (repourl.h) */
		struct loc loc;		/* where the block was written */
		const char *server;	/* NULL: the environment's (argocd_server), or no Argo CD */
		const char *repo_url;	/* argocd.repo-url: where Argo CD reads the GitOps repository; NULL: the remote */
		const char *namespace;	/* default argocd */
		const char *project;	/* default default */
		const char *app_name;	/* default ${cluster}-${package} */
		struct loc app_name_loc;	/* where app-name was written; file NULL: the default */
		const char *token_file;
		const char *ca_file;
		int insecure;
		int repo_registered;	/* argocd.repository: registered (no repository step) */
		int fleet_appset;	/* argocd.fleet: applicationset */
		const char *grpc_web_root_path;	/* argocd.grpc-web-root-path: the API under this path, or NULL */
		struct {
			struct secretref ref;	/* the Secret that holds the password; ref.name NULL: no login */
			const char *key, *user;	/* default password, admin */
		} login;		/* argocd.login: the token from POST /api/v1/session (argo/argologin.c) */
	} argocd;
	struct {
		struct strlist hosts;	/* tls.hosts, ${vars} unexpanded; none: no tls step (create.c) */
		struct loc loc;
	} tls;
	struct cluster *clusters;
	size_t nclusters;
	struct profile *profiles;
	size_t nprofiles;
	struct wave *waves;		/* rollout.waves in order, then `rest` if needed; >= 1 */
	size_t nwaves;
	int rollout;			/* rollout.waves given: the graph has a step per wave */
	struct rule **rules;		/* built-ins first, then rule files */
	size_t nrules;
	struct package *packages;	/* in the order written (parents first) */
	size_t npackages;
};

/* model.c */
int package_is(const struct package *p, const char *name);	/* its name, or its group's */
struct package *find_package(const struct distro *d, const char *name);
struct cluster *find_cluster(const struct distro *d, const char *name);
/* does cluster c get package p (its profiles; every package when it names none)? */
int cluster_has(const struct distro *d, const struct cluster *c, const struct package *p);

#endif
