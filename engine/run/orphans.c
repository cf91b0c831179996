/*
 * orphans.c - what a run removes of packages and clusters gone from the
 * distro.
 *
 * Both come from the state, the same record up decides on:
 *   - the folders: the state records, per remote and branch, each folder
 *     the repository holds (state_pushed_all).  One that no render step of
 *     the graph writes (selected or not) is removed by the run's push,
 *     whatever the targets: plan_push_changes takes them from
 *     orphan_folders.  Not while an Application of a removed package
 *     names it (its sync step is still in the state): Argo CD would
 *     compare that Application against a path the branch no longer has
 *     (util/app/path/path.go: "app path does not exist", a
 *     ComparisonError).  up --prune deletes such Applications before the
 *     push (cmd-up.c's up_gate), which then removes their folders.
 *   - the Applications: a CLUSTER/PACKAGE:sync step the state recorded
 *     and the graph no longer holds.  up --prune deletes them (cmd-up.c's
 *     prune_apps, from orphan_apps), up without it leaves them and says
 *     so; both only when the run selects the whole distro, since a
 *     selection says nothing of the rest.
 *   - the clusters: a CLUSTER:register step the state recorded as done
 *     and the graph no longer holds.  One the distro no longer names is
 *     unregistered by up --prune (prune_clusters), left without it; one
 *     still named without register: stays, and up forgets it registered it.
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argocd.h"
#include "run/ctx.h"
#include "distro/manifest.h"
#include "run/kindcluster.h"
#include "run/orphans.h"
#include "base/util.h"

/* does the path hold the components a then b, in that order? */
static int path_names(const char *path, const char *a, const char *b)
{
	const char *p = path;
	size_t la = strlen(a), lb = strlen(b);
	int seen_a = 0;

	while (*p) {
		const char *end = strchr(p, '/');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		if (!seen_a && len == la && !strncmp(p, a, la))
			seen_a = 1;
		else if (seen_a && len == lb && !strncmp(p, b, lb))
			return 1;
		if (!end)
			break;
		p = end + 1;
	}
	return 0;
}

/* CLUSTER/PACKAGE of a state's step id ending in `kind` (":render"), or 0 */
static int split_id(const char *id, const char *kind, const char **cluster, const char **package)
{
	const char *colon = strrchr(id, ':'), *slash = strchr(id, '/');

	if (!colon || strcmp(colon, kind) || !slash || slash > colon)
		return 0;
	*cluster = astrndup(id, (size_t)(slash - id));
	*package = astrndup(slash + 1, (size_t)(colon - slash - 1));
	return 1;
}

/* why the distro no longer writes the folder a render of cluster/package wrote */
static const char *gone_why(const struct distro *d, const char *cluster, const char *package)
{
	struct cluster *cl = find_cluster(d, cluster);
	struct package *pk = find_package(d, package);

	if (!cl)
		return "cluster no longer in the distro";
	if (!pk)
		return "package no longer in the distro";
	return aprintf("package no longer on cluster %s", cluster);
}

/* the graph's step ids of one kind, sorted: the state's ids are looked up in them */
static const char **graph_ids(const struct graph *g, enum step_kind kind, size_t *n)
{
	const char **v = amalloc((g->nsteps + 1) * sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->kind == kind)
			v[(*n)++] = g->steps[i]->id;
	qsort(v, *n, sizeof(*v), strptrcmp);
	return v;
}

/* the renders the state recalls and the graph no longer holds, as CLUSTER, PACKAGE pairs */
static const char **gone_renders(struct planner *pl, size_t *n)
{
	size_t nids, nrenders;
	const char **ids = state_step_ids(pl->st, &nids), **renders = graph_ids(pl->g, STEP_RENDER, &nrenders);
	const char **v = amalloc((2 * nids + 1) * sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < nids; i++)
		if (!bsearch(&ids[i], renders, nrenders, sizeof(*renders), strptrcmp) &&
		    split_id(ids[i], ":render", &v[2 * *n], &v[2 * *n + 1]))
			(*n)++;
	return v;
}

/* is a cluster made through Cluster API gone from the distro and not deleted yet (its provision row left)? */
static int capi_pending(struct planner *pl, int *known)
{
	size_t n;
	const char **ids;

	if (*known >= 0)	/* once per orphan_folders: the state changes between calls (capiprune.c) */
		return *known;
	ids = state_step_ids(pl->st, &n);
	*known = 0;
	for (size_t i = 0; i < n && !*known; i++) {
		const char *colon = strrchr(ids[i], ':');
		*known = colon && !strcmp(colon, ":provision") && !strchr(ids[i], '/') && !graph_find(pl->g, ids[i]);
	}
	return *known;
}

/* is CLUSTER a cluster made through Cluster API, gone from the distro and not deleted yet?  capi_prune deletes its
 * Applications, with --delete-clusters only */
static int capi_cluster_gone(struct planner *pl, const char *cluster)
{
	const char *id = aprintf("%s:provision", cluster);
	return state_step(pl->st, id).have && !graph_find(pl->g, id) && !find_cluster(pl->g->d, cluster);
}

/*
 * The Application of a removed package that names the folder at `path`,
 * which holds `output`: one whose sync step the state still has (it is in
 * Argo CD until pruned), whose CLUSTER and PACKAGE the path names (git.path),
 * or, when the path names no removed render (`by_output`), whose last sync
 * deployed what the folder holds (a folder that linked clusters share,
 * _shared/PACKAGE, names no cluster).  An Application whose
 * name a current package's took over is that one's (its sync moves it): none.
 */
static const struct orphan_app *folder_app(struct planner *pl, const char *path, struct hash output,
					   const struct orphan_app *apps, size_t napps, int by_output)
{
	/* by the names first: clusters that render alike have the same output in folders of their own */
	for (size_t i = 0; i < napps; i++)
		if (!apps[i].in_use && apps[i].app && path_names(path, apps[i].cluster, apps[i].package))
			return &apps[i];
	for (size_t i = 0; i < napps && by_output && !hash_zero(output); i++) {
		struct record sync = state_step(pl->st, aprintf("%s/%s:sync", apps[i].cluster, apps[i].package));
		struct record render = state_step(pl->st, aprintf("%s/%s:render", apps[i].cluster, apps[i].package));
		if (!apps[i].in_use && apps[i].app && (hash_eq(sync.output, output) || hash_eq(render.output, output)))
			return &apps[i];
	}
	return NULL;
}

size_t orphan_folders(struct planner *pl, struct orphan_folder **v)
{
	struct graph *g = pl->g;
	const struct pushed *all;
	const char *prefix = pushed_key(pl, "");
	const char **paths = amalloc((g->nsteps + 1) * sizeof(*paths)), **gone = NULL;
	size_t nall, npaths = 0, ngone = 0, n = 0, plen = strlen(prefix), napps = (size_t)-1;
	int pending = -1;
	struct orphan_app *apps = NULL;
	const struct orphan_app *app;

	*v = NULL;
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->kind == STEP_RENDER)
			paths[npaths++] = g->steps[i]->gitpath;
	qsort(paths, npaths, sizeof(*paths), strptrcmp);
	all = state_pushed_all(pl->st, &nall);
	for (size_t i = 0; i < nall; i++) {
		const char *path = all[i].path + plen;
		struct orphan_folder o = { path, all[i].path, NULL, "no package of the distro writes it", NULL, 0 };
		if (strncmp(all[i].path, prefix, plen) || bsearch(&path, paths, npaths, sizeof(*paths), strptrcmp))
			continue;
		/* who wrote it: a render of CLUSTER/PACKAGE whose names the path holds (git.path) */
		if (!gone)
			gone = gone_renders(pl, &ngone);
		for (size_t k = 0; k < ngone; k++)
			if (path_names(path, gone[2 * k], gone[2 * k + 1])) {
				o.target = aprintf("%s/%s", gone[2 * k], gone[2 * k + 1]);
				o.why = gone_why(g->d, gone[2 * k], gone[2 * k + 1]);
				/* a created cluster's Cluster: its folder stays until the Cluster is gone (capiprune.c) */
				if (!strncmp(gone[2 * k + 1], "cluster-", 8) &&
				    state_step(pl->st, aprintf("%s:provision", gone[2 * k + 1] + 8)).have)
					o.why = NULL;
				break;
			}
		if (!o.why)
			continue;
		if (!o.target && capi_pending(pl, &pending)) {
			/* a folder of no known render while a created cluster gone from the distro is not deleted
			 * yet: it may be the shared folder its Applications still sync (capiprune.c) */
			continue;
		}
		/* an Application of a removed package still names it: kept until that Application is deleted (with
		 * Argo CD only: without one, idpmake made none, and nothing could prune it) */
		if (pl->argocd_server && napps == (size_t)-1)
			napps = orphan_apps(g->d, g, pl->st, &apps);
		if (pl->argocd_server && (app = folder_app(pl, path, all[i].output, apps, napps, !o.target))) {
			o.app = app->app;
			o.kept = !pl->prune_first || capi_cluster_gone(pl, app->cluster);
		}
		*v = agrow(*v, n, sizeof(**v));
		(*v)[n++] = o;
	}
	return n;
}

size_t orphan_apps(const struct distro *d, const struct graph *g, struct state *st, struct orphan_app **v)
{
	size_t nids, nsyncs, n = 0;
	const char **ids, **syncs;

	*v = NULL;
	syncs = graph_ids(g, STEP_SYNC, &nsyncs);
	ids = state_step_ids(st, &nids);
	for (size_t i = 0; i < nids; i++) {
		const char *id = ids[i];
		struct cluster *cl = amalloc(sizeof(*cl));
		struct package *pk = amalloc(sizeof(*pk));
		struct step s = { 0 };
		struct orphan_app o = { 0 };
		if (!split_id(id, ":sync", &o.cluster, &o.package) || bsearch(&id, syncs, nsyncs, sizeof(*syncs), strptrcmp))
			continue;
		cl->name = o.cluster;
		pk->name = o.package;
		o.why = gone_why(d, o.cluster, o.package);
		s.cluster = find_cluster(d, o.cluster) ? find_cluster(d, o.cluster) : cl;
		s.pkg = pk;
		s.namespace = pk->name;
		o.app = argocd_app_name(d, &s);
		for (size_t k = 0; o.app && k < g->nsteps; k++) {
			const struct step *cur = g->steps[k];
			const char *name;
			if (cur->kind == STEP_SYNC && !cur->pkg->deploy_kubectl && (name = argocd_app_name(d, cur)) &&
			    !strcmp(name, o.app))
				o.in_use = aprintf("%s/%s", cur->cluster->name, cur->pkg->name);
		}
		o.prefix = aprintf("%s/%s:", o.cluster, o.package);
		*v = agrow(*v, n, sizeof(**v));
		(*v)[n++] = o;
	}
	return n;
}

size_t orphan_clusters(const struct distro *d, const struct graph *g, struct state *st, struct orphan_cluster **v)
{
	size_t nids, nregs, n = 0;
	const char **ids = state_step_ids(st, &nids), **regs = graph_ids(g, STEP_REGISTER, &nregs);

	*v = NULL;
	for (size_t i = 0; i < nids; i++) {
		const char *id = ids[i], *colon = strrchr(id, ':');
		struct record rec;
		if (!colon || strcmp(colon, ":register") || strchr(id, '/') || !strcmp(id, "repository:register") ||
		    bsearch(&id, regs, nregs, sizeof(*regs), strptrcmp))
			continue;
		rec = state_step(st, id);
		if (!rec.ok && hash_zero(rec.key))
			continue;	/* never registered */
		*v = agrow(*v, n, sizeof(**v));
		(*v)[n].name = astrndup(id, (size_t)(colon - id));
		(*v)[n].id = id;
		(*v)[n].still_named = find_cluster(d, (*v)[n].name) != NULL;
		n++;
	}
	return n;
}

size_t capi_gone(struct ctx *c, struct capi_gone **v)
{
	size_t nids, n = 0, napps = (size_t)-1;
	const char **ids = state_step_ids(c->st, &nids);
	struct orphan_app *apps = NULL;

	*v = NULL;
	for (size_t i = 0; i < nids; i++) {
		const char *id = ids[i], *colon = strrchr(id, ':');
		struct capi_gone x = { 0 };
		if (!colon || strcmp(colon, ":provision") || strchr(id, '/') || graph_find(c->g, id))
			continue;
		x.name = astrndup(id, (size_t)(colon - id));
		if (find_cluster(c->d, x.name))
			continue;	/* still in the distro (made another way now): not gone, never deleted here */
		if (napps == (size_t)-1)
			napps = orphan_apps(c->d, c->g, c->st, &apps);
		for (size_t k = 0; k < napps; k++)
			if (!strcmp(apps[k].package, aprintf("cluster-%s", x.name))) {
				x.mgmt = apps[k].cluster;
				x.app = apps[k].app;
			}
		*v = agrow(*v, n, sizeof(**v));
		(*v)[n++] = x;
	}
	return n;
}

int capi_gone_holds(const struct capi_gone *v, size_t n, const char *cluster, const char *package)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(cluster, v[i].name) || (v[i].mgmt && !strcmp(cluster, v[i].mgmt) &&
						    !strcmp(package, aprintf("cluster-%s", v[i].name))))
			return 1;
	return 0;
}

/*
 * The kind clusters this state made that the distro no longer makes, as up
 * (the whole distro selected) acts on them (kindcluster_prune): kept while
 * the distro uses them; else left, deleted with --prune --delete-clusters,
 * refused with --prune alone.  On f, and as json's "kind_clusters".
 */
static void kind_show(struct ctx *c, FILE *f, json_t *json, struct orphan_counts *cnt)
{
	struct kind_orphan *ko;
	size_t n = kindcluster_orphans(&c->pl, &ko);
	const char *act = !c->prune ? "leave" : c->delete_clusters ? "delete" : "refuse";
	json_t *jk = json ? json_array() : NULL;

	for (size_t i = 0; i < n; i++) {
		const char *cl = astrndup(ko[i].id, strlen(ko[i].id) - 5);	/* CLUSTER:kind */
		const char *why = ko[i].in_use ? aprintf("no longer made by it, still used: %s", ko[i].in_use) :
				  !c->prune ? "gone from the distro; up --prune --delete-clusters deletes it" :
				  c->delete_clusters ? "gone from the distro: kind delete cluster" :
				  "gone from the distro; --prune refuses: add --delete-clusters";
		if (f)
			fprintf(f, "%-6s kind cluster %s (%s: %s)\n", ko[i].in_use ? "keep" : act, ko[i].kind, ko[i].id, why);
		if (jk)
			json_array_append_new(jk, json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", ko[i].kind, "cluster", cl,
							    "action", ko[i].in_use ? "keep" : act, "reason", why,
							    "step", ko[i].id));
		if (!ko[i].in_use)
			*(c->prune && c->delete_clusters ? &cnt->kind_del : &cnt->kind_leave) += 1;
	}
	if (jk)
		json_object_set_new(json, "kind_clusters", jk);
}

struct orphan_counts orphans_show(struct ctx *c, int apps, FILE *f, json_t *json)
{
	struct orphan_counts cnt = { 0 };
	struct orphan_folder *fv;
	struct orphan_app *av = NULL;
	struct orphan_cluster *cv = NULL;
	struct capi_gone *gone;
	size_t nf = 0, na = 0, nc = 0, ngone;
	json_t *jf = NULL, *ja = NULL, *jc = NULL;

	/* the push removes them; a selection without the push (none today) removes nothing */
	if (c->g->push && c->g->push->selected)
		nf = orphan_folders(&c->pl, &fv);
	if (apps) {
		na = orphan_apps(c->d, c->g, c->st, &av);
		nc = orphan_clusters(c->d, c->g, c->st, &cv);
	}
	if (json) {
		jf = json_array();
		ja = json_array();
		jc = json_array();
	}
	for (size_t i = 0; i < nf; i++) {
		const char *why = fv[i].why;
		if (fv[i].kept)
			why = aprintf("%s; Application %s still names it: up --prune deletes it, then the folder", why, fv[i].app);
		else if (fv[i].app)
			why = aprintf("%s; once Application %s is deleted", why, fv[i].app);
		if (f)
			fprintf(f, "%-6s %s/ (%s)\n", fv[i].kept ? "keep" : "remove", fv[i].folder, why);
		if (json)
			json_array_append_new(jf, json_pack("{s:s, s:s?, s:s, s:s, s:s?}", "folder", fv[i].folder, "target",
							    fv[i].target, "action", fv[i].kept ? "keep" : "remove",
							    "reason", fv[i].why, "application", fv[i].app));
		*(fv[i].kept ? &cnt.kept : &cnt.remove) += 1;
	}
	ngone = capi_gone(c, &gone);	/* once: each call reads the state's steps */
	for (size_t i = 0; i < na; i++) {
		if (capi_gone_holds(gone, ngone, av[i].cluster, av[i].package)) {
			av[i].in_use = "";	/* a created cluster's: below */
			continue;
		}
		if (av[i].in_use) {
			/* up --prune deletes what the labels say is the removed package's: never this name */
			if (f)
				fprintf(f, "%-6s %s (Application name of removed %s/%s, now %s's: not deleted)\n", "keep",
					av[i].app, av[i].cluster, av[i].package, av[i].in_use);
			if (json)
				json_array_append_new(ja, json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", av[i].app, "cluster",
								    av[i].cluster, "package", av[i].package, "action", "keep",
								    "reason", aprintf("the name is now %s's", av[i].in_use)));
			continue;
		}
		if (f && c->prune)
			fprintf(f, "%-6s %s (Application of %s/%s: %s)\n", "delete", av[i].app, av[i].cluster,
				av[i].package, av[i].why);
		else if (f)
			fprintf(f, "%-6s %s (Application of %s/%s, left in Argo CD; up --prune deletes it)\n", "leave",
				av[i].app, av[i].cluster, av[i].package);
		if (json)
			json_array_append_new(ja, json_pack("{s:s, s:s, s:s, s:s, s:s}", "name", av[i].app, "cluster",
							    av[i].cluster, "package", av[i].package, "action",
							    c->prune ? "delete" : "leave", "reason", av[i].why));
	}
	for (size_t i = 0; i < nc; i++) {
		if (cv[i].still_named || capi_gone_holds(gone, ngone, cv[i].name, ""))
			continue;	/* stays registered: up only forgets it registered it; or a created cluster's */
		if (f && c->prune)
			fprintf(f, "%-6s %s (cluster idpmake registered in Argo CD, gone from the distro)\n", "unregister",
				cv[i].name);
		else if (f)
			fprintf(f, "%-6s %s (cluster idpmake registered, left in Argo CD; up --prune unregisters it)\n",
				"leave", cv[i].name);
		if (json)
			json_array_append_new(jc, json_pack("{s:s, s:s, s:s}", "name", cv[i].name, "action",
							    c->prune ? "unregister" : "leave", "reason",
							    "cluster no longer in the distro"));
		if (c->prune)
			cnt.unregister++;
		else
			cnt.keep++;
	}
	if (apps) {
		struct capi_gone *gv;
		size_t ng = capi_gone(c, &gv);
		const char *act = !c->prune ? "leave" : c->delete_clusters ? "delete" : "refuse";
		for (size_t i = 0; i < ng; i++) {
			if (f)
				fprintf(f, "%-6s cluster %s (made through Cluster API on %s, gone from the distro; %s)\n", act,
					gv[i].name, gv[i].mgmt ? gv[i].mgmt : "?",
					!c->prune ? "up --prune --delete-clusters deletes it" :
					c->delete_clusters ? "its Applications, its registration, then its Cluster" :
					"--prune refuses: add --delete-clusters");
			if (json)
				json_array_append_new(jc, json_pack("{s:s, s:s, s:s}", "name", gv[i].name, "action", act,
								    "reason", "cluster made through Cluster API, gone from the distro"));
		}
	}
	if (json) {
		json_object_set_new(json, "removals", jf);
		json_object_set_new(json, "applications", ja);
		json_object_set_new(json, "clusters", jc);
	}
	if (!c->ntargets && !c->labels.n)
		kind_show(c, f, json, &cnt);
	for (size_t i = 0; i < na; i++)
		*(c->prune ? &cnt.del : &cnt.leave) += !av[i].in_use;	/* "" in_use: a created cluster's */
	return cnt;
}

static const char *count(const char *s, int n, const char *one, const char *many, const char *what)
{
	return n ? aprintf("%s, %d %s %s", s, n, n == 1 ? one : many, what) : s;
}

const char *orphans_summary(struct orphan_counts n)
{
	const char *s = "";

	s = count(s, n.remove, "folder", "folders", "to remove");
	s = count(s, n.kept, "folder", "folders", "kept until up --prune");
	s = count(s, n.del, "Application", "Applications", "to delete");
	s = count(s, n.leave, "Application", "Applications", "left behind");
	s = count(s, n.unregister, "cluster", "clusters", "to unregister");
	s = count(s, n.keep, "cluster", "clusters", "left registered");
	s = count(s, n.kind_del, "kind cluster", "kind clusters", "to delete");
	s = count(s, n.kind_leave, "kind cluster", "kind clusters", "left");
	return *s ? aprintf(";%s", s + 1) : s;
}
