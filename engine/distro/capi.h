/* capi.h - clusters.NAME.create through Cluster API (capi.c; the contract is spec/capi.md) */
#ifndef IDPMAKE_CAPI_H
#define IDPMAKE_CAPI_H

#include "distro/model.h"
#include "base/yaml.h"

enum capi_credential { CRED_SERVICE_ACCOUNT, CRED_KUBECONFIG, CRED_AWS, CRED_EXTERNAL };

struct capi_worker {
	const char *name, *class;
	int replicas;			/* -1: the class's default */
	struct loc loc;
};

/*
 * A cluster that Cluster API makes on a management cluster of the same
 * distro:
 *
 *   create:
 *     management: mgmt
 *     namespace: fleet                  # default: the cluster's name
 *     class: {package: capi-classes, name: quick-start}
 *     # spec: capi-eks                  # or a package of raw CAPI manifests, ${cluster} = NAME
 *     version: ${k8s}                   # required with class; with spec, checked for skew
 *     api: v1beta2                      # | v1beta1
 *     control-plane: {replicas: 3}
 *     workers: {md-0: {class: default-worker, replicas: 3}}
 *     vars: {region: "${region}"}       # topology variables, as JSON values
 *     cni: [calico]
 *     credential: service-account       # | kubeconfig | aws | external
 *     ready: initialized                # | available
 *     timeout: 2400
 *     delete-timeout: 3600
 *
 * The loader (capi_finish) renders its `Cluster` into the text of a
 * package cluster-NAME that goes to the management cluster only (the
 * step MGMT/cluster-NAME:render, then its sync, never automated), and
 * gives the cluster `destination.name: NAME` for its Applications. With
 * `spec:`, cluster-NAME is that package's copy, rendered by its own
 * renderer with the created cluster's variables (vars.c), and its render
 * must hold the Cluster NAME (render/capicheck.c).
 */
struct capi {
	const char *management;		/* the management cluster's name, as written */
	struct cluster *mgmt;		/* ... resolved by capi_finish */
	const char *namespace;		/* where its CAPI objects live */
	const char *class_pkg, *class_name;	/* class: (the topology idpmake renders), or */
	const char *spec_pkg;		/* spec: the package of raw CAPI manifests */
	const char *version;		/* spec.topology.version, expanded; NULL: spec: without version */
	const char *api;		/* v1beta2 | v1beta1 */
	int cp_replicas;		/* -1: the class's default */
	struct capi_worker *workers;
	size_t nworkers;
	const struct ynode *vars;	/* the topology variables as written (a map), or NULL */
	struct strlist cni;		/* packages synced first on it */
	enum capi_credential credential;
	const char *aws_role, *aws_cluster;	/* credential: aws: awsAuthConfig {roleARN, clusterName (default NAME)} */
	int ready_available;		/* ready: available: a step NAME:ready after the cni, before the rest */
	int timeout;			/* seconds: provisioning and upgrades */
	int delete_timeout;		/* seconds up --prune --delete-clusters waits for its Cluster to go (recorded) */
	struct package *pkg;		/* cluster-NAME, on mgmt */
	const char *distro;		/* the distro's name (the label idpmake.io/distro) */
	const char *home;		/* where it pushes, hashed (the annotation idpmake.io/home, capi_home) */
	const char *text;		/* the rendered Cluster (YAML) */
	struct loc loc, management_loc, version_loc, spec_loc;
};

/* read the Cluster API form of `create` (n a map with `management`); the caller has checked the kind form is absent */
void conv_capi(struct cluster *c, const struct ynode *n);
/* once every cluster and package is loaded: resolve, check, and add the packages cluster-NAME */
void capi_finish(struct distro *d);
/*
 * Where distro d pushes (git.remote as owners compare it, git.branch,
 * git.path as written), as 16 hex digits: the annotation idpmake.io/home on each
 * Cluster it creates, so that a same-named distro pushing elsewhere is
 * another owner (argo/capiowner.c).
 */
const char *capi_home(const struct distro *d);
/* once a context has filled in the remote (context.c): each created cluster's home again, and its Cluster's render */
void capi_rehome(struct distro *d);
/* the created cluster whose Cluster package p is, or NULL */
struct cluster *capi_cluster_of(const struct package *p);
/* is p one of the cni packages of created cluster c? */
int capi_is_cni(const struct cluster *c, const struct package *p);

#endif
