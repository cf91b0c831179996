/* cmd-up.c - `up` (run what changed) and `promote`; `plan` is cmd-plan.c */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argocd.h"
#include "base/buf.h"
#include "run/bootstrap.h"
#include "run/build.h"
#include "cmd/cmd.h"
#include "base/intr.h"
#include "git/gitops.h"
#include "graph/adopt.h"
#include "distro/manifest.h"
#include "run/kindcluster.h"
#include "run/capiprune.h"
#include "run/orphans.h"
#include "run/owner.h"
#include "run/plan.h"
#include "run/preflight.h"
#include "run/register.h"
#include "git/remotekeys.h"
#include "run/rollout.h"
#include "review/savedplan.h"
#include "render/share.h"
#include "graph/state.h"
#include "run/targets.h"
#include "run/tlscert.h"
#include "base/util.h"

/* the target that names a render step's package */
static const char *target_of(const struct step *s)
{
	return aprintf("%s/%s", s->cluster->name, s->pkg->name);
}

/*
 * Changes made outside idpmake in the selected packages' folders: the
 * folder, each commit that made them and its author, and what up does
 * about them.
 */
int show_drift(struct ctx *c, int fetch, FILE *f, json_t *json)
{
	struct gitops_opts go = ctx_gitops(c);
	struct folder *fo;
	size_t n = share_folders(c->g, &fo);	/* a _shared folder once, however many clusters it serves */
	const char **folders = amalloc((n + 1) * sizeof(*folders));
	struct gitops_drift *v;
	struct buf targets = BUF_INIT;
	int nd;

	for (size_t k = 0; k < n; k++)
		folders[k] = fo[k].gitpath;
	if ((nd = n ? gitops_drift(&go, fetch, folders, n, &v) : 0) <= 0)
		return n ? nd : 0;
	for (int i = 0; i < nd; i++) {
		const char *target = v[i].folder, *what = v[i].removed ? "removed" : "changed", *on = "";
		json_t *o, *commits, *clusters;
		const struct folder *fi = NULL;
		for (size_t k = 0; k < n && !fi; k++)
			if (!strcmp(fo[k].gitpath, v[i].folder))
				fi = &fo[k];
		if (fi) {
			target = target_of(fi->steps[0]);	/* --overwrite of any of its targets writes it */
			on = share_folder_clusters(fi);
		}
		buf_addf(&targets, " %s", target);
		if (!json) {
			if (!v[i].ncommits)
				fprintf(f, "drift  %s%s: %s outside idpmake\n", v[i].folder, on, what);
			for (size_t k = 0; k < v[i].ncommits; k++)
				fprintf(f, "drift  %s%s: %s outside idpmake by %.7s %s \"%s\"\n", v[i].folder, on, what,
					v[i].commits[k].id, v[i].commits[k].author, v[i].commits[k].summary);
			continue;
		}
		o = json_object();
		commits = json_array();
		clusters = json_array();
		json_object_set_new(o, "folder", json_string(v[i].folder));
		json_object_set_new(o, "target", json_string(target));
		for (size_t k = 0; fi && k < fi->n; k++)
			json_array_append_new(clusters, json_string(fi->steps[k]->cluster->name));
		json_object_set_new(o, "clusters", clusters);
		json_object_set_new(o, "removed", json_boolean(v[i].removed));
		for (size_t k = 0; k < v[i].ncommits; k++)
			json_array_append_new(commits, json_pack("{s:s, s:s, s:s}", "id", v[i].commits[k].id,
								 "author", v[i].commits[k].author,
								 "summary", v[i].commits[k].summary));
		json_object_set_new(o, "commits", commits);
		json_array_append_new(json, o);
	}
	if (!json)
		fprintf(f, "idpmake: %d folder%s changed outside idpmake; up will not write over %s: revert the change%s"
			" in the GitOps repository, or replace %s with the render: idpmake up --overwrite%s\n",
			nd, nd == 1 ? "" : "s", nd == 1 ? "it" : "them", nd == 1 ? "" : "s", nd == 1 ? "it" : "them",
			targets.s);
	buf_release(&targets);
	return nd;
}

/*
 * An argocd-app package's Application is relayed as written (argospec.c):
 * without manifest-generate-paths, Argo CD generates its manifests again
 * on every commit to the GitOps repository.  Said once per package whose
 * sync would run.
 */
void relayed_note(const struct ctx *c)
{
	const struct package *said[64];
	size_t n = 0;

	if (!c->pl.argocd_server)
		return;
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		size_t k = 0;
		if (s->kind != STEP_SYNC || !s->selected || !s->dirty || !s->pkg->app_file || s->pkg->deploy_kubectl)
			continue;
		while (k < n && said[k] != s->pkg)
			k++;
		if (k < n)
			continue;
		if (n == sizeof(said) / sizeof(said[0])) {
			printf("note   and more argocd-app packages, likewise\n");
			return;
		}
		said[n++] = s->pkg;
		printf("note   %s: an argocd-app package's Application is relayed as written, without "
		       "argocd.argoproj.io/manifest-generate-paths: Argo CD generates its manifests again on every "
		       "commit to the GitOps repository\n", s->pkg->name);
	}
}

/* does a target of the command line name the package of render step s? */
static int named(const struct ctx *c, const struct step *s)
{
	for (size_t t = 0; t < c->ntargets; t++) {
		const char *slash = strchr(c->targets[t], '/');
		const char *pk = slash ? slash + 1 : c->targets[t];
		if (slash && strncmp(s->cluster->name, c->targets[t], (size_t)(slash - c->targets[t])))
			continue;
		if (slash && s->cluster->name[slash - c->targets[t]])
			continue;
		if (!*pk || package_is(s->pkg, pk))
			return 1;
	}
	return 0;
}

/*
 * Tell the push which target names each folder, and which folders
 * --overwrite replaces: those are pushed even when the state says the
 * repository holds their render.
 */
static void set_owners(struct ctx *c)
{
	struct folder *fo;
	size_t n = share_folders(c->g, &fo);	/* selected steps: only those can be --overwrite's */
	struct gitops_owner *v = amalloc((c->g->nsteps + 1) * sizeof(*v));
	size_t nv = 0;

	for (size_t k = 0; k < n; k++) {
		/* a _shared folder is one folder: any of its clusters' targets names it */
		int ow = 0;
		for (size_t j = 0; j < fo[k].n && c->overwrite && !ow; j++)
			ow = named(c, fo[k].steps[j]);
		v[nv++] = (struct gitops_owner){ fo[k].gitpath, target_of(fo[k].steps[0]), ow };
		if (ow)
			state_pushed_drop(c->st, pushed_key(&c->pl, fo[k].gitpath));
	}
	/* the folders of steps not selected, for their names in a conflict */
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		if (s->kind == STEP_RENDER && !s->selected)
			v[nv++] = (struct gitops_owner){ s->gitpath, target_of(s), 0 };
	}
	gitops_set_owners(v, nv);
}

/*
 * --refresh: ask Argo CD (with a refresh) how each Application stands; one
 * that is OutOfSync, missing or Degraded is synced again even though its
 * key did not change.
 */
static int named(const struct ctx *c, const struct step *s);

/* has s's folder changed outside idpmake (v: gitops_drift's), and is it not --overwrite's to replace? */
static int git_drifted(const struct ctx *c, const struct step *s, const struct gitops_drift *v, int nd)
{
	for (int i = 0; i < nd; i++)
		if (s->gitpath && !strcmp(v[i].folder, s->gitpath))
			return !(c->overwrite && s->render && named(c, s->render));
	return 0;
}

void find_drift(struct ctx *c, struct argocd *a)
{
	struct gitops_opts go = ctx_gitops(c);
	struct folder *fo;
	size_t n = share_folders(c->g, &fo);
	const char **folders = amalloc((n + 1) * sizeof(*folders));
	struct gitops_drift *v = NULL;
	int nd;

	/* the registrations: a cluster or the repository Argo CD lost registers again (register.c) */
	register_refresh(&c->pl, a);
	/* the GitOps repository too: an Application whose folder someone edited is OutOfSync for that */
	for (size_t k = 0; k < n; k++)
		folders[k] = fo[k].gitpath;
	if ((nd = n ? gitops_drift(&go, 1, folders, n, &v) : 0) < 0)
		nd = 0;
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		struct record rec;
		char *sync = NULL, *health = NULL;
		const char *err = NULL;
		int r;
		if (s->kind != STEP_SYNC || !s->selected || s->pkg->deploy_kubectl)
			continue;	/* deploy: kubectl has no Application */
		rec = state_step(c->st, s->id);
		if (!rec.have || !rec.ok)
			continue;	/* it runs anyway */
		if (git_drifted(c, s, v, nd)) {
			/* syncing it again would deploy the edit, and wait for a Synced that never comes */
			fprintf(stderr, "idpmake: --refresh: %s: not synced again: %s was changed outside idpmake "
				"(revert the change in the GitOps repository, or idpmake up --overwrite %s/%s)\n",
				s->id, s->gitpath, s->cluster->name, s->pkg->name);
			continue;
		}
		r = argocd_app_status(a, argocd_app_name(c->d, s), 1, &sync, &health, &err);
		if (r < 0)
			warn("--refresh: %s: %s", s->id, err);
		else if (r == 1)
			s->drift = "drift: the Application is missing";
		else if (sync && strcmp(sync, "Synced"))
			s->drift = aprintf("drift: Argo CD reports %s", term_safe(sync));
		else if (health && (!strcmp(health, "Degraded") || !strcmp(health, "Missing")))
			s->drift = aprintf("drift: Argo CD reports %s", health);
		if (s->drift && c->verbose)
			fprintf(stderr, "idpmake: %s: %s\n", s->id, s->drift);
		free(sync);
		free(health);
	}
}

/* the sync step of the distro whose Application is named `name`, as CLUSTER/PACKAGE, or NULL */
static const char *app_user(const struct ctx *c, const char *name)
{
	for (size_t i = 0; i < c->g->nsteps; i++) {
		const struct step *s = c->g->steps[i];
		const char *mine;
		if (s->kind == STEP_SYNC && !s->pkg->deploy_kubectl && (mine = argocd_app_name(c->d, s)) && !strcmp(mine, name))
			return target_of(s);
	}
	return NULL;
}

/*
 * Applications of packages no longer in the distro (their sync steps are
 * in the state, not in the graph): deleted with --prune, else reported.
 */
static int prune_apps(struct ctx *c, struct argocd *a)
{
	struct orphan_app *v;
	struct owned_app *owned = NULL;
	long nowned = 0;
	size_t n, ngone;
	struct capi_gone *cgone;
	int failed = 0;

	if (c->ntargets || c->labels.n)
		return 0;	/* a selection says nothing of the rest */
	n = orphan_apps(c->d, c->g, c->st, &v);	/* orphans.c: plan lists the same */
	if (n && c->prune) {
		/* what to delete: what this distro's labels say is the removed package's (owner.c) */
		const char *err = NULL;
		if ((nowned = owner_apps(a, &owned, &err)) < 0) {
			error("--prune: cannot list this distro's Applications: %s", err);
			return 1;
		}
	}
	ngone = capi_gone(c, &cgone);	/* once: each call reads the state's steps */
	for (size_t i = 0; i < n; i++) {
		int gone = 0, bad = 0;
		if (capi_gone_holds(cgone, ngone, v[i].cluster, v[i].package))
			continue;	/* a created cluster's: deleted in order, or not at all (capiprune.c) */
		if (!c->prune && v[i].in_use) {
			state_forget(c->st, v[i].prefix);	/* its Application is the current step's */
			continue;
		}
		if (!c->prune) {
			status_info("idpmake: package %s/%s is gone from the distro; its Application '%s' remains (--prune deletes it), "
				    "and so does the folder it names in the GitOps repository",
				    v[i].cluster, v[i].package, v[i].app);
			continue;
		}
		for (long k = 0; k < nowned; k++) {
			const char *err = NULL, *user;
			if (strcmp(owned[k].cluster, v[i].cluster) || strcmp(owned[k].package, v[i].package))
				continue;
			if ((user = app_user(c, owned[k].name))) {
				status_info("idpmake: Application '%s' of removed package %s/%s is now %s's: not deleted",
					    owned[k].name, v[i].cluster, v[i].package, user);
				continue;
			}
			if (owned[k].appset) {
				/* generated: its element goes, or the ApplicationSet makes it again (argoappset.c) */
				if (argocd_appset_drop(a, owned[k].appset, owned[k].name, &err) < 0) {
					error("--prune: cannot remove Application '%s' from ApplicationSet '%s': %s",
					      owned[k].name, owned[k].appset, err);
					bad++;
					continue;
				}
				status_info("idpmake: deleted Application '%s' of removed package %s/%s (its element removed "
					    "from ApplicationSet '%s')", owned[k].name, v[i].cluster, v[i].package,
					    owned[k].appset);
				gone++;
				continue;
			}
			if (argocd_delete_app(a, owned[k].name, &err) < 0) {
				error("--prune: cannot delete Application '%s': %s", owned[k].name, err);
				bad++;
				continue;
			}
			status_info("idpmake: deleted Application '%s' of removed package %s/%s", owned[k].name, v[i].cluster,
				    v[i].package);
			gone++;
		}
		if (!gone && !bad && v[i].in_use)
			status_info("idpmake: Application '%s' of removed package %s/%s is now %s's: not deleted", v[i].app,
				    v[i].cluster, v[i].package, v[i].in_use);
		else if (!gone && !bad)
			status_info("idpmake: removed package %s/%s has no Application of this distro in Argo CD (labels "
				    "idpmake.io/distro, cluster, package): nothing to delete", v[i].cluster, v[i].package);
		if (bad)
			failed++;
		else
			state_forget(c->st, v[i].prefix);
	}
	return failed ? 1 : 0;
}

/*
 * Clusters idpmake registered (a CLUSTER:register step recorded in the
 * state) that the distro no longer names: unregistered with --prune, else
 * reported.  A cluster still named without `register:` stays in Argo CD
 * (its Applications still point at it) and idpmake forgets it registered it.
 */
static int prune_clusters(struct ctx *c, struct argocd *a)
{
	struct orphan_cluster *v;
	size_t n, ngone;
	struct capi_gone *cgone;
	int failed = 0;

	if (c->ntargets || c->labels.n)
		return 0;	/* a selection says nothing of the rest */
	n = orphan_clusters(c->d, c->g, c->st, &v);	/* orphans.c: plan lists the same */
	ngone = capi_gone(c, &cgone);
	for (size_t i = 0; i < n; i++) {
		const char *name = v[i].name, *err = NULL;
		int r;
		if (capi_gone_holds(cgone, ngone, name, ""))
			continue;	/* unregistered in its order (capiprune.c) */
		if (v[i].still_named) {
			status_info("idpmake: cluster %s no longer has register:; it stays in Argo CD, and idpmake no longer "
				    "manages its registration", name);
			state_forget(c->st, v[i].id);
			continue;
		}
		if (!c->prune) {
			status_info("idpmake: cluster %s is gone from the distro; idpmake registered it in Argo CD, where it "
				    "remains (--prune unregisters it)", name);
			continue;
		}
		r = argocd_unregister_cluster(a, name, &err);
		if (r < 0) {
			error("--prune: cannot unregister cluster '%s': %s", name, err);
			failed++;
			continue;
		}
		if (r == 0)
			status_info("idpmake: unregistered cluster '%s' from Argo CD (gone from the distro)", name);
		else if (r == 1)
			status_info("idpmake: cluster '%s' is gone from the distro and already from Argo CD", name);
		else if (r == 3)
			status_info("idpmake: cluster '%s' in Argo CD is registered by another distro now (annotation "
				    "idpmake.io/distro): left alone", name);
		else
			status_info("idpmake: cluster '%s' in Argo CD is not the one idpmake registered (no idpmake.io/cluster "
				    "annotation): left alone", name);
		state_forget(c->st, v[i].id);
	}
	return failed ? 1 : 0;
}

/* register.insecure: said on every run, once per cluster */
void warn_insecure(const struct distro *d)
{
	for (size_t i = 0; i < d->nclusters; i++)
		if (d->clusters[i].reg.set && d->clusters[i].reg.insecure)
			warn("cluster '%s' registers with insecure: true: Argo CD will not verify %s's TLS certificate",
			     d->clusters[i].name, d->clusters[i].server ? d->clusters[i].server : "the cluster");
}

/*
 * CLUSTER:register steps: before the run, a cluster registered before with
 * the same server, name and credential source gets only its labels PUT;
 * after it, that fingerprint is recorded as the step's output (never the
 * credential, nor a hash of it).
 */
static void register_hints(struct ctx *c, int after)
{
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		struct hash conn;
		struct record rec;
		if (s->kind != STEP_REGISTER || !s->cluster || !s->selected || s->cluster->create.capi)
			continue;
		conn = argocd_cluster_connection(c->d, s->cluster);
		if (after) {
			if (s->dirty && s->state == S_DONE && state_step_ok(c->st, s->id, s->key, conn, NULL, NULL, s->ms) < 0)
				warn("%s: the state could not record the cluster's connection (see above): the next up "
				     "registers it in full again", s->id);
			continue;
		}
		rec = state_step(c->st, s->id);
		if (rec.have && !hash_zero(rec.key) && hash_eq(rec.output, conn))
			argocd_register_labels_only(s->cluster);
	}
}

/* Argo CD for the run, logged in when argocd.login asks; NULL when not usable, pf->argocd_err saying why */
static struct argocd *connect_argocd(struct ctx *c, struct preflight *pf)
{
	struct argocd *a;
	struct gitops_opts go;
	const char *err;

	if (!c->pl.argocd_server || !ctx_needs_argocd(c))
		return NULL;	/* --prune without argocd: a usage error found by ctx_load */
	/* not usable: a problem for the pre-flight when a step that needs it runs (preflight.c); the
	 * login (argocd.login) is the pre-flight's too, so that a run with nothing to sync sends none */
	if (!(a = argocd_open(c->d, c->statedir, c->verbose, &err))) {
		pf->argocd_err = aprintf("argocd: %s", err);
		return NULL;
	}
	go = ctx_gitops(c);
	argocd_set_git(a, &go);
	build_sync = (struct sync_ops){
		.sync = argocd_sync_step, .verify = argocd_verify_step, .watch = argocd_bake_watch, .reg = argocd_register_any,
		.provision = argocd_provision_step,
		.lookup = argocd_cluster_lookup, .poll_ms = argocd_poll_ms(a), .ctx = a
	};
	return a;
}

/* build_run's gate: what up put off until the renders ran (preflight_late) */
struct late_gate {
	struct preflight *pf;
	struct ctx *c;
	struct argocd *a;
	int r;				/* its answer: nonzero, nothing more started */
	int pruned;			/* up --prune: prune_apps ran, before the push */
	int prune_r;			/* and failed (1) */
};

/*
 * Before the push, or the first step that talks to Argo CD: what was put
 * off until the renders ran; then, with --prune, the Applications of
 * removed packages are deleted (each waited for until it is gone), so
 * that the push removes their folders and no Application is ever left
 * naming a path the branch no longer has (orphans.h).  One that could not
 * be deleted keeps its folder: the push recomputes its changes.
 */
static int up_gate(void *arg)
{
	struct late_gate *g = arg;

	if ((g->r = preflight_late(g->pf, g->c, g->a)))
		return g->r;
	if (g->c->pl.prune_first && g->a) {
		g->prune_r = prune_apps(g->c, g->a);
		g->pruned = 1;
	}
	g->c->pl.prune_first = 0;	/* the push keeps what is still named (without Argo CD: all) */
	return 0;
}

/* promote CLUSTER: a cluster that is not cloned has nothing to promote (it follows the distro) */
static int promote_check(const struct ctx *c)
{
	const char *t = c->targets[0];
	size_t n = strcspn(t, "/");

	for (size_t i = 0; i < c->d->nclusters; i++) {
		const struct cluster *cl = &c->d->clusters[i];
		if (strlen(cl->name) == n && !strncmp(cl->name, t, n) && cl->mode != MODE_CLONED) {
			error("promote: cluster '%s' is linked: it follows the distro, so up brings it to the current "
			      "render and there is nothing to promote (promote is for a cluster with mode: cloned)",
			      cl->name);
			return 2;
		}
	}
	return 0;
}

int cmd_up(struct ctx *c)
{
	struct build_opts o = { c->jobs, c->keep_going, "up", 0, NULL, NULL };
	struct summary sum;
	long long run;
	int r;

	/* from here on SIGINT and SIGTERM stop the run cleanly (intr.h) */
	intr_install();
	if (c->plan_file && (r = savedplan_targets(c)))
		return r;
	if ((r = ctx_load(c, 0)))
		return r;
	if (c->promote && (r = promote_check(c)))
		return r;
	struct argocd *a = NULL;
	struct preflight pf = { NULL, 0, NULL, 0 };
	struct summary boot = { 0 };
	const char *err;
	char *local;
	int booting = 0;

	if (c->overwrite && !c->ntargets) {
		fprintf(stderr, "idpmake: --overwrite needs targets: the packages whose folders to write over\n");
		return 2;
	}
	/* what it acts on, before it changes anything; a kube context at another server stops it here */
	if (targets_print(c, stderr) < 0)
		return 1;

	if ((err = kindcluster_missing_tool(&c->pl))) {
		error("%s", err);
		return 2;
	}
	kindcluster_set_adopt(c->adopt);
	a = connect_argocd(c, &pf);
	warn_insecure(c->d);
	if (state_lock(c->st, c->wait) < 0)
		return 1;
	set_owners(c);
	if ((run = state_run_begin(c->st, "up")) < 0) {	/* the state cannot record: do nothing */
		if (a)
			argocd_close(a);
		return 1;
	}
	if (a)
		register_hints(c, 0);
	o.run = run;
	/*
	 * an empty or lost state: reconstructed from the GitOps repository and Argo CD (remotekeys.h);
	 * not while git.credentials cannot be read yet (remotekeys.c): the cluster that holds them (in a
	 * bootstrap, the remote too) is still to be made.  What is not reconstructed runs, as ever
	 */
	struct gitops_opts go = ctx_gitops(c);
	if (!c->overwrite && !c->plan_file) {
		c->pl.reconstruct = &go;
		c->pl.argo = a;
	}
	if (plan_renders(&c->pl) < 0) {
		if (pf.argocd_err)
			error("%s", pf.argocd_err);	/* the settings' error too: the pre-flight does not get to say it */
		remotekeys_end();
		state_run_end(c->st, run, 2, interrupted() ? "interrupted while planning" : "planning failed", NULL);
		return interrupted() ? intr_exit_status() : 1;
	}
	/* up --plan: this run is the plan, or nothing is pushed or synced (savedplan.c) */
	if (c->plan_file && (r = savedplan_check(c))) {
		state_run_end(c->st, run, r, r == 2 ? "refused: not the saved plan" : "rendering the plan failed", NULL);
		if (a)
			argocd_close(a);
		return r;
	}
	/* from nothing: the cluster and the deploy: kubectl packages first, then the rest (bootstrap.h) */
	local = bootstrap_local(c);
	if ((booting = bootstrap_pending(c, local))) {
		status_info("bootstrap: first the steps that need neither Argo CD nor the GitOps remote");
		if ((r = preflight_run(&pf, c, a, local, 1))) {
			remotekeys_end();
			state_run_end(c->st, run, r, "pre-flight failed: nothing pushed", NULL);
			if (a)
				argocd_close(a);
			return r;
		}
		r = bootstrap_run(c, &o, &boot, local);
		if (r || build_interrupted) {
			remotekeys_end();
			status_summary(&boot);
			state_run_end(c->st, run, r ? r : 1, "bootstrap failed: nothing pushed", NULL);
			if (a)
				argocd_close(a);
			return interrupted() ? intr_exit_status() : r ? r : 1;
		}
		/* what the bootstrap made may serve Argo CD and be its CA (the credentials are read when the push needs them) */
		if (tlscert_trust(c->d, c->statedir) && a) {
			argocd_close(a);
			a = NULL;
		}
		if (!a && (a = connect_argocd(c, &pf)))
			pf.argocd_err = NULL;
		c->pl.argo = c->pl.reconstruct ? a : NULL;
	}
	/* --refresh asks Argo CD only when it answers; then, before anything runs, what the run needs */
	if (c->refresh && a && preflight_argocd(&pf, a) == 0)
		find_drift(c, a);
	if ((r = preflight_run(&pf, c, a, booting ? local : NULL, 0))) {
		remotekeys_end();
		if (booting)
			status_summary(&boot);	/* what the bootstrap did */
		state_run_end(c->st, run, r, booting ? "pre-flight failed after the bootstrap: nothing pushed"
						     : "pre-flight failed: nothing pushed", NULL);
		if (a)
			argocd_close(a);
		return interrupted() ? intr_exit_status() : r;
	}
	/* what another distro owns in Argo CD: refused before anything runs (owner.c) */
	if (a && (r = owner_check(c, a))) {
		remotekeys_end();
		state_run_end(c->st, run, 1, r > 0 ? "refused: another distro owns what this run would change"
						    : "refused: Argo CD could not say who owns what this run would change", NULL);
		argocd_close(a);
		return 1;
	}
	/* what was put off until the renders ran, asked before the push (preflight_late) */
	struct late_gate late = { &pf, c, a, 0, 0, 0 };
	o.gate = up_gate;
	o.gate_arg = &late;
	r = build_run(&c->pl, &o, &sum);
	if (booting)
		bootstrap_summary(&sum, &boot);
	remotekeys_end();
	if (a && !late.r)
		register_hints(c, 1);
	/* created clusters gone from the distro: deleted only after a run that went well, as kind's below */
	if (!r && !build_interrupted && capi_prune(c, a))
		r = 1;
	/* the Applications of removed packages: with --prune deleted before the push (up_gate), else here; left
	 * without --prune, their folders with them (orphans.h) */
	if (late.pruned ? late.prune_r : a && !build_interrupted && !late.r && prune_apps(c, a))
		r = r ? r : 1;
	if (a && !build_interrupted && !late.r && prune_clusters(c, a) && !r)
		r = 1;
	/* the kind clusters it made that the distro no longer makes: said, or with --delete-clusters deleted
	 * (only after a run that went well: a cluster goes last, if at all) */
	if (!r && !build_interrupted && !c->ntargets && !c->labels.n &&
	    kindcluster_prune(&c->pl, c->prune, c->delete_clusters))
		r = 1;
	adopt_summary(c->json);	/* up --adopt: what it took over, by kind (adopt.h) */
	status_summary(&sum);
	{
		/* as the terminal said it: a step an interrupt stopped is stopped, not failed */
		int stopped = interrupted() ? status_stopped() : 0;
		char *text = aprintf("%s%d rendered, %s, %d synced, %d hooks, %s%d failed, %d up to date",
				     interrupted() ? "interrupted: " : "", sum.rendered,
				     sum.commit ? aprintf("pushed %.12s", sum.commit) : "nothing pushed", sum.synced,
				     sum.hooks, stopped ? aprintf("%d stopped, ", stopped) : "", sum.failed - stopped,
				     sum.up_to_date);
		if (late.r)
			text = aprintf("%s; %s", late.r > 0 ? "refused before the push" :
					       "refused: Argo CD could not say who owns what this run would change", text);
		state_run_end(c->st, run, interrupted() ? intr_exit_status() : r, text, sum.commit);
	}
	if (booting && !r && !interrupted())
		bootstrap_said(c, c->json ? stderr : stdout);
	if (a)
		argocd_close(a);
	if (interrupted()) {
		if (c->json)	/* else status_summary said it, in one line */
			fprintf(stderr, "idpmake: interrupted; the steps that finished are recorded, run up again to finish\n");
		return intr_exit_status();
	}
	return r;
}

/* promote CLUSTER [PACKAGE...]: up, with the cloned cluster's renders moving to the current distro */
int cmd_promote(struct ctx *c)
{
	char **t;
	const char *cl;

	if (!c->ntargets || strchr(c->targets[0], '/')) {
		fprintf(stderr, "usage: idpmake promote CLUSTER [PACKAGE...]\n");
		return 2;
	}
	cl = c->targets[0];
	t = amalloc((c->ntargets + 1) * sizeof(*t));
	if (c->ntargets == 1) {
		t[0] = aprintf("%s/", cl);
		c->ntargets = 1;
	} else {
		for (size_t i = 1; i < c->ntargets; i++)
			t[i - 1] = aprintf("%s/%s", cl, c->targets[i]);
		c->ntargets--;
	}
	c->targets = t;
	c->promote = 1;
	return cmd_up(c);
}
