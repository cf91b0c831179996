/*
 * owner.h - who owns what idpmake makes in Argo CD.
 *
 * Everything idpmake creates in Argo CD belongs to one distro: an
 * Application or ApplicationSet carries the label idpmake.io/distro (its
 * `name`), a registered cluster the annotation idpmake.io/distro; each
 * also carries where the distro pushes (annotations idpmake.io/gitops-remote
 * and idpmake.io/gitops-path): the same name elsewhere is another owner,
 * and an object without them (made by an older idpmake) is its name's.
 *
 *   - validate: two steps that expand to one Application name are an
 *     error, located at argocd.app-name (or the package, for the default).
 *   - up, before anything runs: the Applications, ApplicationSets and
 *     clusters this run would create or update are looked up, one list
 *     request per kind and only when some would be (a run with nothing to
 *     do asks Argo CD nothing); one another distro owns, or an Application
 *     or ApplicationSet idpmake did not make, stops the run before the
 *     push, each named with its owner and the ways out, unless --adopt.
 *   - up --prune: the Applications this distro's labels prove are the
 *     removed package's, never one whose name a current step uses.
 */
#ifndef IDPMAKE_OWNER_H
#define IDPMAKE_OWNER_H

#include <jansson.h>
#include <stddef.h>

#include "graph.h"

struct ctx;
struct argocd;

/*
 * Where the distro pushes, recorded beside its name on what it makes in
 * Argo CD: two distros with one name and different remotes or paths are
 * two owners.  Annotations (a URL may pass a label value's 63 characters).
 */
extern const char OWNER_REMOTE[];	/* idpmake.io/gitops-remote: owner_remote(the repository URL) */
extern const char OWNER_PATH[];		/* idpmake.io/gitops-path: git.path as written (its template) */

/* `url` as owners are compared: no user info, scheme and host in lower case, no default port, no trailing '/' or ".git" */
const char *owner_remote(const char *url);
/* the annotations above for this distro pushing to repo_url (a new object) */
json_t *owner_annotations(const struct distro *d, const char *repo_url);

/* annotations (a cluster's, an object's metadata's) that say nothing or this distro's remote and path */
int owner_same_home(const struct argocd *a, json_t *annotations);

/* the name repository:register gives the repository in Argo CD, which has no labels: "idpmake/DISTRO" */
const char *owner_repo_name(const struct distro *d);

/* graph_build, once its sync steps exist: a located error for each Application name two of them share */
void owner_check_names(const struct graph *g);

/*
 * up, after plan_renders and before build_run: 0 when nothing collides
 * (or nothing would be created or updated: no request); 1 after printing
 * every collision (nothing may run); -1 after printing why Argo CD could
 * not be read.
 */
int owner_check(struct ctx *c, struct argocd *a);

/*
 * up --refresh, before owner_check: the servers of the clusters Argo CD
 * has, or (repos) the URLs of its repositories: their number, or -1 with
 * *err; from the one list of each the run asks for, which owner_check
 * reuses, then forgets.
 */
int owner_listed(struct argocd *a, int repos, const char ***out, const char **err);

/* an Application of this distro, as its labels say */
struct owned_app {
	const char *name;
	const char *cluster, *package;	/* its idpmake.io/cluster and idpmake.io/package labels ("" when absent) */
};
/* this distro's Applications (one list request by label selector): their number, or -1 with *err */
long owner_apps(struct argocd *a, struct owned_app **v, const char **err);

#endif
