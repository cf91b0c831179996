/*
 * provision.c - when CLUSTER:provision runs, and what it records
 * (provision.h; the waiting itself is argo/argocapi.c).
 *
 *   key     H("provision", the Cluster sync's key, timeout, ready, delete-timeout)
 *   output  H("capi incarnation", the Cluster's uid): a Cluster made again
 *           (deleted out of band, or re-created) has another uid, so its
 *           registration and every package sync run again
 *   commit  "UID VERSION NAMESPACE MANAGEMENT PKG,..." (state): the version
 *           for the next run's skew check, where it was made (it cannot
 *           move), its packages in sync order (a deletion goes backwards)
 */
#include <stdio.h>
#include <string.h>

#include "argo/argocd.h"
#include "argo/capiowner.h"
#include "base/buf.h"
#include "distro/capi.h"
#include "graph/adopt.h"
#include "graph/state.h"
#include "run/provision.h"
#include "base/util.h"

static struct step *cluster_sync(const struct step *s)
{
	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i]->kind == STEP_SYNC && s->in[i]->pkg == s->cluster->create.capi->pkg)
			return s->in[i];
	return NULL;
}

static struct hash key_of(const struct step *s)
{
	struct hasher *h = hasher_new();
	const struct step *sync = cluster_sync(s);
	const struct capi *k = s->cluster->create.capi;

	hasher_adds(h, "provision");
	if (sync)
		hasher_addh(h, sync->key);
	hasher_add(h, &k->timeout, sizeof(k->timeout));
	hasher_add(h, &k->ready_available, sizeof(k->ready_available));
	if (k->delete_timeout != 3600)	/* recorded by the provision (the default keeps the keys of before) */
		hasher_add(h, &k->delete_timeout, sizeof(k->delete_timeout));
	return hasher_end(h);
}

/* NAME:ready (ready: available): again when the cluster was provisioned again (its provision's key or output) */
static void ready_decide(struct step *s, const struct record *rec)
{
	struct hasher *h = hasher_new();

	hasher_adds(h, "ready available");
	for (size_t i = 0; i < s->nin; i++)
		if (s->in[i]->kind == STEP_PROVISION) {
			if (s->in[i]->dirty && s->in[i]->state != S_DONE) {
				s->dirty = 1;
				s->reason = R_UPSTREAM;
				s->why = aprintf("once %s has provisioned the cluster", s->in[i]->id);
				(void)hasher_end(h);	/* freed */
				return;
			}
			hasher_addh(h, s->in[i]->key);
			hasher_addh(h, s->in[i]->output);
		}
	s->key = hasher_end(h);
	plan_compare(s, rec, "the cluster was provisioned again");
}

void provision_decide(struct planner *pl, struct step *s, const struct record *rec)
{
	const struct step *sync = cluster_sync(s);

	if (!pl->argocd_server) {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = "skipped: no argocd configured";
		return;
	}
	if (s->kind == STEP_READY) {
		ready_decide(s, rec);
		return;
	}
	/* plan: a cluster that was made is changed in place, its uid kept: what uses it waits on nothing
	 * (unless --refresh found its Cluster changed or gone: then it may be another cluster) */
	if (pl->dry_run && rec->ok && !hash_zero(rec->output) && !(sync && sync->reason == R_FORCED))
		s->output = rec->output;
	if (sync && sync->dirty && sync->state != S_DONE) {
		s->dirty = 1;
		s->reason = R_UPSTREAM;
		s->why = aprintf("once %s has synced the Cluster", sync->id);
		return;
	}
	s->key = key_of(s);
	if (sync && sync->dirty && sync->reason == R_FORCED) {
		/* --refresh found the Cluster changed or gone, and synced it again: what is there now? */
		s->dirty = 1;
		s->reason = R_FORCED;
		s->why = aprintf("%s synced the Cluster again (--refresh)", sync->id);
		return;
	}
	if (rec->ok && hash_eq(rec->key, s->key))
		s->output = rec->output;
	plan_compare(s, rec, "the cluster's Cluster changed");
}

int provision_makes(const struct step *m)
{
	return m->dirty && m->state != S_DONE && (m->kind != STEP_PROVISION || hash_zero(m->output));
}

int provision_run(struct planner *pl, struct step *s, const struct sync_ops *ops, struct hash *output,
		  const char **uid, const char **err)
{
	struct record rec = state_step(pl->st, s->id);
	const char *known = rec.commit && *rec.commit ? astrndup(rec.commit, strcspn(rec.commit, " ")) : NULL;
	struct hasher *h;

	*uid = NULL;
	if (!ops->provision)
		return *err = "this idpmake cannot talk to Argo CD", -1;
	if (s->kind == STEP_READY)	/* the Cluster's Available condition (argocapi.c) */
		return ops->provision(ops->ctx, s, NULL, uid, err);
	/* a cluster never provisioned (or made again) waits for its control plane; one that was, for the change */
	if (ops->provision(ops->ctx, s, known, uid, err) < 0)
		return -1;
	h = hasher_new();
	hasher_adds(h, "capi incarnation");
	hasher_adds(h, *uid);
	*output = hasher_end(h);
	{
		/* what the state keeps (provision.h): "UID VERSION NAMESPACE MANAGEMENT PKG,PKG,... DELETE-TIMEOUT" */
		const struct capi *k = s->cluster->create.capi;
		struct buf b = BUF_INIT;
		int any = 0;
		buf_addf(&b, "%s %s %s %s ", *uid, k->version ? k->version : "-", k->namespace, k->management);
		for (size_t i = 0; i < pl->g->nsteps; i++) {
			const struct step *y = pl->g->steps[i];
			if (y->kind == STEP_SYNC && y->cluster == s->cluster) {
				buf_addf(&b, "%s%s", any ? "," : "", y->pkg->name);
				any = 1;
			}
		}
		buf_addf(&b, "%s%d", any ? " " : "- ", k->delete_timeout);	/* read when the cluster is gone */
		*uid = astrdup(b.s);
		buf_release(&b);
	}
	return 0;
}

/* "v1.33.2, 3 workers" (or "2 worker pools" when a class sets their replicas), from the distro */
static const char *shape(const struct capi *k, const char *version)
{
	struct buf b = BUF_INIT;
	const char *out;
	int nodes = 0, known = 1;

	if (version && strcmp(version, "-"))
		buf_adds(&b, version);
	for (size_t i = 0; i < k->nworkers; i++) {
		if (k->workers[i].replicas < 0)
			known = 0;
		else
			nodes += k->workers[i].replicas;
	}
	if (k->nworkers && known)
		buf_addf(&b, "%s%d worker%s", b.len ? ", " : "", nodes, nodes == 1 ? "" : "s");
	else if (k->nworkers)
		buf_addf(&b, "%s%zu worker pool%s", b.len ? ", " : "", k->nworkers, k->nworkers == 1 ? "" : "s");
	out = b.len ? aprintf(" (%s)", b.s) : "";
	buf_release(&b);
	return out;
}

const char *provision_said(const struct step *s, const char *rec, const char *was)
{
	const struct capi *k = s->cluster->create.capi;
	const char *uid = provision_field(rec, 0), *old = provision_field(was, 0);
	const char *v = provision_field(rec, 1), *oldv = provision_field(was, 1);
	const char *how = !old || !*old ? "provisioned" : strcmp(old, uid) ? "made again (its uid changed)" : "converged";

	if (old && *old && !strcmp(old, uid) && v && oldv && strcmp(v, "-") && strcmp(oldv, "-") && strcmp(v, oldv))
		how = aprintf("upgraded from %s", oldv);

	return aprintf("Cluster %s on %s%s, uid %.8s", how, k->management, shape(k, v), uid);
}

const char *provision_field(const char *commit, int n)
{
	for (int i = 0; commit && i < n; i++)
		if ((commit = strchr(commit, ' ')))
			commit++;
	return commit ? astrndup(commit, strcspn(commit, " ")) : NULL;
}

const char *provision_moved(struct planner *pl, const struct step *s)
{
	const struct capi *k = s->cluster->create.capi;
	struct record rec = state_step(pl->st, s->id);
	const char *ns = provision_field(rec.commit, 2), *m = provision_field(rec.commit, 3);

	if (!ns || !m || !*ns || !*m)	/* a failed provision keeps where it was made too */
		return NULL;
	if (!strcmp(ns, k->namespace) && !strcmp(m, k->management))
		return NULL;
	return aprintf("%s:%d:%d: cluster '%s' was made in namespace %s on '%s'; Cluster API cannot move it to %s on "
		       "'%s': keep the namespace and management cluster, or remove the cluster (up --prune "
		       "--delete-clusters) and add it again under another name", k->loc.file, k->loc.line, k->loc.col,
		       s->cluster->name, ns, m, k->namespace, k->management);
}

/* vMAJOR.MINOR of a version: 0, or -1 */
static int minor_of(const char *v, int *major, int *minor)
{
	return v && sscanf(v, "v%d.%d", major, minor) == 2 ? 0 : -1;
}

const char *provision_skew(struct planner *pl, const struct step *s)
{
	const struct capi *k = s->cluster->create.capi;
	struct record rec = state_step(pl->st, s->id);
	const char *old = rec.commit ? strchr(rec.commit, ' ') : NULL;
	int om, on, nm, nn;

	if (!old || minor_of(old + 1, &om, &on) < 0 || minor_of(k->version, &nm, &nn) < 0)
		return NULL;
	old = provision_field(rec.commit, 1);
	if (nm != om)
		return aprintf("%s:%d:%d: create.version %s is another major than the synced %s: Cluster API moves one "
			       "minor at a time", k->version_loc.file, k->version_loc.line, k->version_loc.col, k->version,
			       old);
	if (nn > on + 1)
		return aprintf("%s:%d:%d: create.version %s is %d minors past the synced %s: Cluster API moves one minor "
			       "at a time; go to v%d.%d first", k->version_loc.file, k->version_loc.line, k->version_loc.col,
			       k->version, nn - on, old, om, on + 1);
	if (nn < on)
		return aprintf("%s:%d:%d: create.version %s is below the synced %s: Cluster API never goes down a minor",
			       k->version_loc.file, k->version_loc.line, k->version_loc.col, k->version, old);
	return NULL;
}

int provision_owner(const struct distro *d, const struct step *sync, int synced, const char **note, const char **err)
{
	const struct cluster *cl = sync->pkg->capi_of;
	const struct capi *k = cl->create.capi;
	const char *whose = NULL, *app = argocd_app_name(d, sync);
	int r;

	*note = NULL;
	if (!k || !k->mgmt)
		return 0;
	struct capi_mine m = { k->distro, k->home, app, d->argocd.namespace, synced, 0 };

	r = capiowner_whose(k->mgmt, k->namespace, cl->name, &m, &whose, NULL, err);
	if (r < 0) {
		*err = aprintf("cluster '%s': %s: not synced (a Cluster of another distro is never applied over)",
			       cl->name, *err);
		return -1;
	}
	if (!r)
		return 0;
	if (!capiowner_adopt()) {
		*err = capiowner_refusal(cl, k->namespace, k->management, whose, k->distro);
		return -1;
	}
	*note = aprintf("adopted (--adopt) the Cluster %s/%s of %s", k->namespace, cl->name, whose);
	adopt_note("Cluster API Cluster", aprintf("%s/%s", k->namespace, cl->name), whose, sync->id);
	return 0;
}
