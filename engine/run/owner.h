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

#include "graph/graph.h"

struct ctx;
struct argocd;


/*
 * up, after plan_renders and before build_run: 0 when nothing collides
 * (or nothing would be created or updated: no request); 1 after printing
 * every collision (nothing may run); -1 after printing why Argo CD could
 * not be read.
 */
int owner_check(struct ctx *c, struct argocd *a);
/*
 * When every object owner_check would ask about waits on a render's new
 * output (none would be changed if no render changed its output), it asks
 * nothing and returns 0; owner_check_late then checks, on the renders'
 * outputs, before the push or the first step that talks to Argo CD
 * (preflight_late).  Its returns are owner_check's; 0 when nothing was put off.
 */
int owner_check_late(struct ctx *c, struct argocd *a);
/*
 * plan (preflight_plan): owner_check on the steps plan decided, none put
 * off, --adopt not taken; the collisions printed as up prints them.  0, the
 * number of collisions, or -1 with *unchecked saying what could not be asked.
 */
int owner_predict(struct ctx *c, struct argocd *a, const char **unchecked);


/* an Application of this distro, as its labels say */
struct owned_app {
	const char *name;
	const char *cluster, *package;	/* its idpmake.io/cluster and idpmake.io/package labels ("" when absent) */
	const char *appset;		/* the ApplicationSet that generated it (ownerReferences), or NULL */
};
/* this distro's Applications (one list request by label selector): their number, or -1 with *err */
long owner_apps(struct argocd *a, struct owned_app **v, const char **err);

#endif
