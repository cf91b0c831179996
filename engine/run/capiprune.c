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
 *                       waited for (create.delete-timeout as its provision
 *                       recorded it, default 3600; IDPMAKE_CAPI_DELETE_TIMEOUT
 *                       over both); then that Application, with cascade.
 *
 * Each finished step forgets its rows in the state, so a run interrupted
 * (or a step that times out) resumes at the first unfinished one.  The
 * folder MGMT/cluster-NAME stays in the repository until the Cluster is
 * gone (orphans.c skips it); the next push removes it.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argocd.h"
#include "argo/capiowner.h"
#include "distro/capi.h"
#include "argo/kubectl.h"
#include "graph/state.h"
#include "graph/status.h"
#include "run/capiprune.h"
#include "run/orphans.h"
#include "run/owner.h"
#include "run/provision.h"
#include "base/util.h"

/* the Applications of cluster `name` the state synced, the last synced first */
static int by_time(const void *a, const void *b)
{
	const struct orphan_app *x = a, *y = b;
	int c = strncmp(y->why, x->why, 6);	/* the higher first */
	long long tx = atoll(x->why + 7), ty = atoll(y->why + 7);
	return c ? c : (ty > tx) - (ty < tx);
}

/* package p's place in the sync order the provision recorded (capiprune deletes backwards), or -1 */
static int sync_rank(const char *commit, const char *p)
{
	const char *s = provision_field(commit, 4);
	size_t n = strlen(p);
	int rank = 0;

	while (s && *s) {
		const char *e = strchr(s, ',');
		size_t l = e ? (size_t)(e - s) : strlen(s);
		if (l == n && !strncmp(s, p, n))
			return rank;
		rank++;
		s += l + (e != NULL);
	}
	return -1;
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
			/* sorted on: backwards through the sync order (the cni last); one not in it first, last synced first */
			{
				int r = sync_rank(prov, apps[i].package);
				mine[n++].why = aprintf("%06d %lld", r < 0 ? 999999 : r, rec.at);
			}
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
			/* one an ApplicationSet generated goes by its element, or the set makes it again (argoappset.c) */
			if ((owned[k].appset ? argocd_appset_drop(a, owned[k].appset, owned[k].name, &err)
					     : argocd_delete_app(a, owned[k].name, &err)) < 0) {
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

/*
 * The Application that held the Cluster is gone (deleted by hand, or by a
 * run killed before it forgot it): ask the management cluster itself.
 * NULL when the Cluster is gone; else why idpmake will not forget it.
 */
static const char *cluster_still_there(struct ctx *c, const char *name, const char *mgmt, const char *app_why)
{
	const char *lead = app_why ? app_why : "its Application is gone";
	const char *commit = state_step(c->st, aprintf("%s:provision", name)).commit;
	const char *ns = provision_field(commit, 2), *err = NULL;
	const struct cluster *m = mgmt ? find_cluster(c->d, mgmt) : NULL;
	const char *args[] = { "get", "clusters.cluster.x-k8s.io", "-n", ns, name, NULL };
	json_t *got;

	if (!ns || !*ns || !m)
		return app_why ? aprintf("%s, and idpmake cannot ask the management cluster%s%s whether its Cluster is: not "
					 "deleted; run again once Argo CD shows it", lead, m ? " " : "",
					 m ? m->name : " (not in the distro)")
			       : aprintf("%s, and idpmake cannot ask the management cluster%s%s whether its Cluster is: "
					 "delete it there, then run `idpmake forget %s:provision`", lead, m ? " " : "",
					 m ? m->name : " (not in the distro)", name);
	if ((got = kubectl_get_json(m, args, &err))) {
		json_decref(got);
		return app_why ? aprintf("%s, yet the Cluster %s/%s is on '%s': not deleted; run again once Argo CD shows "
					 "it (its cache may be behind)", lead, ns, name, mgmt)
			       : aprintf("%s but its Cluster %s/%s is still on '%s': delete it there (kubectl delete "
					 "clusters.cluster.x-k8s.io -n %s %s), then run again", lead, ns, name, mgmt, ns, name);
	}
	if (err && strstr(err, aprintf("clusters.cluster.x-k8s.io \"%s\" not found", name)))
		return NULL;	/* exactly the Cluster's NotFound, not a missing context nor an unserved path */
	return aprintf("%s, and the management cluster '%s' cannot say whether its Cluster is: %s", lead, mgmt,
		       err ? err : "?");
}

/*
 * Is the Cluster of `name` on its management cluster another's (capiowner.h)?
 * Why it is not deleted then, else NULL: a second distro that declared the
 * same name never deletes the first one's cluster, --adopt or not.
 */
static const char *not_ours(struct ctx *c, const char *name, const char *mgmt, const char *app)
{
	const char *commit = state_step(c->st, aprintf("%s:provision", name)).commit;
	const char *ns = provision_field(commit, 2), *whose = NULL, *err = NULL;
	const struct cluster *m = mgmt ? find_cluster(c->d, mgmt) : NULL;
	int r;

	if (!ns || !*ns || !m)
		return NULL;	/* cannot be asked: cluster_still_there and Argo CD's tree decide, as before */
	/* its home: this distro's (the cluster is gone from it; its home is not) */
	struct capi_mine mine = { c->d->name, capi_home(c->d), app, c->d->argocd.namespace, 1, 0 };

	r = capiowner_whose(m, ns, name, &mine, &whose, NULL, &err);
	if (r < 0)
		return aprintf("%s: not deleted; run again once the management cluster answers", err);
	if (r > 0)
		return aprintf("its Cluster %s/%s on '%s' belongs to %s, not to distro '%s': not deleted; this distro "
			       "forgets it with `idpmake forget %s:provision`", ns, name, mgmt, whose,
			       c->d->name ? c->d->name : "", name);
	return NULL;
}

/* seconds in s (1 .. 604800, more is 604800; blanks around), or 0 when s is not such a number */
static long seconds(const char *s)
{
	char *end;
	long t;

	if (!s || !*s)
		return 0;
	errno = 0;
	t = strtol(s, &end, 10);
	end += strspn(end, " \t\n");
	if (*end || t <= 0)
		return 0;
	return errno == ERANGE || t > 604800 ? 604800 : t;
}

/* IDPMAKE_CAPI_DELETE_TIMEOUT, else the create.delete-timeout its provision recorded, else 3600 */
static long delete_timeout(const char *commit)
{
	const char *e = getenv("IDPMAKE_CAPI_DELETE_TIMEOUT");
	long t = seconds(e);

	if (e && *e && !t)
		warn("IDPMAKE_CAPI_DELETE_TIMEOUT is not seconds from 1 to 604800: ignored");
	if (!t)
		t = seconds(provision_field(commit, 5));
	return t ? t : 3600;
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
		if ((err = not_ours(c, name, v[i].mgmt, v[i].app))) {
			error("--prune: cluster '%s': %s", name, err);
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
		if (!v[i].app) {
			/* no record of the Application that holds its Cluster (a run killed while it synced): ask */
			size_t nids;
			const char **ids, *tail = aprintf("/cluster-%s:class", name);
			if ((err = cluster_still_there(c, name, provision_field(state_step(c->st, aprintf("%s:provision",
											 name)).commit, 3), NULL))) {
				error("--prune: cluster '%s': %s", name, err);
				failed++;
				continue;
			}
			/* and the class revision that first sync recorded (classplan.c) goes with it */
			ids = state_step_ids(c->st, &nids);
			for (size_t k = 0; k < nids; k++)
				if (strlen(ids[k]) > strlen(tail) && !strcmp(ids[k] + strlen(ids[k]) - strlen(tail), tail))
					state_forget(c->st, ids[k]);
		} else {
			int d = argocd_capi_destroy(a, v[i].app, name,
						    (int)delete_timeout(state_step(c->st, aprintf("%s:provision", name)).commit),
						    &err);
			if (d < 0) {
				error("--prune: cluster '%s': %s; run up --prune --delete-clusters again to go on waiting", name,
				      err);
				failed++;
				continue;
			}
			if (d > 0 && (err = cluster_still_there(c, name, v[i].mgmt, d == 2 ? aprintf("Argo CD's resource "
					"tree of Application '%s' shows no Cluster '%s'", v[i].app, name) : NULL))) {
				error("--prune: cluster '%s': %s", name, err);
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
