/*
 * capiprune.c - a cluster made through Cluster API that the distro no
 * longer has (capiprune.h; spec/capi.md "Deletion").
 *
 * Found from the state: a CLUSTER:provision row with no such step in the
 * graph.  The order is the one that leaves nothing behind:
 *
 *   1. CLUSTER/PKG      each Application of the cluster, the last synced
 *                       first (so a cni, synced first, goes last), with
 *                       cascade, waiting until each is gone;
 *   2. CLUSTER:register deleted in Argo CD when idpmake registered it (its
 *                       annotations say so), so that no generator makes
 *                       Applications for a dying cluster;
 *   3. the Cluster      deleted alone through the Application that holds it
 *                       (Cluster API tears down the machines and the rest),
 *                       waited for (IDPMAKE_CAPI_DELETE_TIMEOUT seconds,
 *                       default 3600); then that Application, with cascade.
 *
 * Each finished step forgets its rows in the state, so a run interrupted
 * (or a step that times out) resumes at the first unfinished one.  The
 * folder MGMT/cluster-NAME stays in the repository until the Cluster is
 * gone (orphans.c skips it); the next push removes it.
 */
#include <stdlib.h>
#include <string.h>

#include "argo/argocd.h"
#include "graph/state.h"
#include "graph/status.h"
#include "run/capiprune.h"
#include "run/orphans.h"
#include "run/owner.h"
#include "base/util.h"

/* the Applications of cluster `name` the state synced, the last synced first */
static int by_time(const void *a, const void *b)
{
	const struct orphan_app *x = a, *y = b;
	long long tx = atoll(x->why + 2), ty = atoll(y->why + 2);
	if (x->why[0] != y->why[0])
		return y->why[0] - x->why[0];	/* "1 ..." (not a cni) first */
	return (ty > tx) - (ty < tx);
}

/* is package p one of the cni packages the provision recorded ("UID VERSION CNI,...")? */
static int was_cni(const char *commit, const char *p)
{
	const char *s = commit ? strchr(commit, ' ') : NULL;
	size_t n = strlen(p);

	if (!s || !(s = strchr(s + 1, ' ')))
		return 0;
	for (s++; *s; ) {
		const char *e = strchr(s, ',');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (l == n && !strncmp(s, p, n))
			return 1;
		s += l + (e != NULL);
	}
	return 0;
}

static int delete_apps(struct ctx *c, struct argocd *a, const char *name)
{
	struct orphan_app *apps, *mine = NULL;
	struct owned_app *owned = NULL;
	size_t napps = orphan_apps(c->d, c->g, c->st, &apps), n = 0;
	const char *err = NULL, *prov = state_step(c->st, aprintf("%s:provision", name)).commit;
	long nowned;

	for (size_t i = 0; i < napps; i++)
		if (!strcmp(apps[i].cluster, name)) {
			struct record rec = state_step(c->st, aprintf("%ssync", apps[i].prefix));
			mine = agrow(mine, n, sizeof(*mine));
			mine[n] = apps[i];
			/* sorted on: the cni packages last, the others the last synced first */
			mine[n++].why = aprintf("%d %lld", !was_cni(prov, apps[i].package), rec.at);
		}
	if (!n)
		return 0;
	qsort(mine, n, sizeof(*mine), by_time);
	if ((nowned = owner_apps(a, &owned, &err)) < 0) {
		error("--prune: cannot list this distro's Applications: %s", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		for (long k = 0; k < nowned; k++) {
			if (strcmp(owned[k].cluster, name) || strcmp(owned[k].package, mine[i].package))
				continue;
			if (argocd_delete_app(a, owned[k].name, &err) < 0) {
				error("--prune: cluster '%s': cannot delete Application '%s': %s", name, owned[k].name, err);
				return -1;
			}
			status_info("idpmake: deleted Application '%s' of cluster '%s' (gone from the distro)", owned[k].name,
				    name);
		}
		state_forget(c->st, mine[i].prefix);
	}
	return 0;
}

static long delete_timeout(void)
{
	const char *e = getenv("IDPMAKE_CAPI_DELETE_TIMEOUT");
	long t = e && *e ? atol(e) : 0;
	return t > 0 ? t : 3600;
}

int capi_prune(struct ctx *c, struct argocd *a)
{
	struct capi_gone *v;
	size_t n;
	int failed = 0;

	if (c->ntargets || c->labels.n)
		return 0;	/* a selection says nothing of the rest */
	n = capi_gone(c, &v);
	for (size_t i = 0; i < n; i++) {
		const char *name = v[i].name, *err = NULL;
		struct record reg;
		int r;
		if (!c->prune) {
			status_info("idpmake: cluster '%s', made through Cluster API, is gone from the distro; it stays "
				    "(up --prune --delete-clusters deletes it: its Applications, its registration, its Cluster)",
				    name);
			continue;
		}
		if (!c->delete_clusters) {
			error("--prune: cluster '%s' was made through Cluster API and is gone from the distro: not deleted "
			      "without --delete-clusters (its Applications, its registration and the cluster itself would go)",
			      name);
			failed++;
			continue;
		}
		if (!a) {
			error("--prune --delete-clusters: cluster '%s': no Argo CD to delete it through", name);
			failed++;
			continue;
		}
		status_info("idpmake: deleting cluster '%s' (made through Cluster API on '%s', gone from the distro)", name,
			    v[i].mgmt ? v[i].mgmt : "?");
		if (delete_apps(c, a, name) < 0) {
			failed++;
			continue;
		}
		reg = state_step(c->st, aprintf("%s:register", name));
		if (reg.have) {
			r = argocd_unregister_cluster(a, name, &err);
			if (r < 0) {
				error("--prune: cannot unregister cluster '%s': %s", name, err);
				failed++;
				continue;
			}
			status_info(r == 0 ? "idpmake: unregistered cluster '%s' from Argo CD" :
				    "idpmake: cluster '%s' is not (or no longer idpmake's) in Argo CD: left as it is", name);
			state_forget(c->st, aprintf("%s:register", name));
		}
		if (v[i].app) {
			if (argocd_capi_destroy(a, v[i].app, name, (int)delete_timeout(), &err) < 0) {
				error("--prune: cluster '%s': %s; run up --prune --delete-clusters again to go on waiting", name,
				      err);
				failed++;
				continue;
			}
			status_info("idpmake: the Cluster of '%s' is gone", name);
			if (argocd_delete_app(a, v[i].app, &err) < 0) {
				error("--prune: cannot delete Application '%s': %s", v[i].app, err);
				failed++;
				continue;
			}
			state_forget(c->st, aprintf("%s/cluster-%s:", v[i].mgmt, name));
		}
		state_forget(c->st, aprintf("%s:provision", name));
		status_info("idpmake: deleted cluster '%s'", name);
	}
	return failed ? 1 : 0;
}
