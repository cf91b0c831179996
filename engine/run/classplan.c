/*
 * classplan.c - planning a class package's revisions (classplan.h,
 * render/capiclass.c, spec/capi.md "Upgrades and linked classes").
 *
 * The state has a row MGMT/cluster-NAME:class for each Cluster synced on
 * MGMT, naming the class (NAME-<h8>, or a class from before revisions)
 * that Cluster may name live: before its sync both the old and the new,
 * after a success the new one alone, so that a failed sync, or a run
 * killed between two writes, keeps too much, never too little.  A Cluster
 * synced before these rows existed gets one from its sync's recorded
 * render.  The class render keeps every revision those rows name; while
 * a created cluster of the class has neither (not synced yet, or a state
 * rebuilt without them), every revision its folder holds (CAPI_KEEP_ALL).
 *
 * What it keeps is not in its key: the key is the package's content (and
 * its management cluster: no other cluster's render is shared with it),
 * and a render up to date by its key still runs when its last output holds
 * a revision no row names any more, so that the folder loses it in the
 * first run where no synced Cluster names it, and no other run.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/util.h"
#include "distro/capi.h"
#include "git/lazycache.h"
#include "git/remotekeys.h"
#include "render/bundle.h"
#include "render/capicheck.h"
#include "render/capiclass.h"
#include "run/classplan.h"

/* the state's rows MGMT/cluster-NAME:class and MGMT/PKG:class-package, read once a plan */
static void class_ids(struct planner *pl)
{
	size_t nids;
	const char **ids;

	if (pl->class_ids_read++)
		return;
	ids = state_step_ids(pl->st, &nids);
	pl->class_ids = amalloc((nids + 1) * sizeof(*pl->class_ids));
	for (size_t i = 0; i < nids; i++) {
		const char *colon = strrchr(ids[i], ':');
		if (colon && (!strcmp(colon, ":class") || !strcmp(colon, CAPI_CLASS_PACKAGE_ROW)))
			pl->class_ids[pl->nclass_ids++] = ids[i];
	}
}

static int has_id(struct planner *pl, const char *id)
{
	class_ids(pl);
	return bsearch(&id, pl->class_ids, pl->nclass_ids, sizeof(*pl->class_ids), strptrcmp) != NULL;
}

/* the class a Cluster synced before the rows existed names: from its sync's recorded render, or NULL */
static const char *synced_class(struct planner *pl, const char *mgmt, const char *name)
{
	struct record r = state_step(pl->st, aprintf("%s/cluster-%s:sync", mgmt, name));
	struct step *render = graph_find(pl->g, aprintf("%s/cluster-%s:render", mgmt, name));

	if (!r.have || hash_zero(r.output))
		return NULL;
	if (render && access(bundle_path(pl->statedir, r.output), R_OK) < 0)
		(void)lazycache_held(pl, render, r.output);	/* not in the cache (a rebuilt state): from its folder */
	return capi_cluster_class(pl->statedir, r.output);
}

/* the classes the Clusters synced on s's cluster may name live, space-separated, sorted, each once */
static const char *class_keep(struct planner *pl, const struct step *s)
{
	const struct distro *d = pl->g->d;
	const char *prefix = aprintf("%s/cluster-", s->cluster->name), **v = NULL;
	size_t n = 0;
	struct buf b = BUF_INIT;
	const char *ret;
	int unknown = 0;

	class_ids(pl);
	for (size_t i = 0; i < pl->nclass_ids + d->nclusters; i++) {
		const char *row = NULL;
		int soft = 0;
		if (i < pl->nclass_ids) {
			const char *id = pl->class_ids[i];
			size_t len = strlen(id);
			struct record r;
			if (strncmp(id, prefix, strlen(prefix)) || len < 6 || strcmp(id + len - 6, ":class"))
				continue;
			r = state_step(pl->st, id);
			row = r.have ? r.commit : NULL;
			if (row && *row == '@') {
				/* "@PKG CLASS...": a Cluster of another class package names its classes softly here
				 * (kept when this folder has them: a Cluster moved between packages whose sync failed),
				 * never an error when it does not */
				size_t plen = strcspn(row + 1, " ");
				soft = plen != strlen(s->pkg->name) || strncmp(row + 1, s->pkg->name, plen);
				row += 1 + plen;
			}
		} else {
			/* a Cluster of this class synced before the rows existed */
			const struct cluster *c = &d->clusters[i - pl->nclass_ids];
			const struct capi *k = c->create.capi;
			if (!k || k->mgmt != s->cluster || !k->class_pkg || !package_is(s->pkg, k->class_pkg) ||
			    has_id(pl, aprintf("%s%s:class", prefix, c->name)))
				continue;
			row = synced_class(pl, s->cluster->name, c->name);
			if (!row)
				unknown = 1;	/* not synced here yet, or a state that lost it: keep them all */
		}
		while (row && *row) {
			size_t len;
			row += strspn(row, " ");
			len = strcspn(row, " ");
			if (len) {
				v = agrow(v, n, sizeof(*v));
				v[n++] = soft ? aprintf("?%.*s", (int)len, row) : astrndup(row, len);
			}
			row += len + (row[len] == ' ');
		}
	}
	if (unknown)
		return CAPI_KEEP_ALL;
	if (n)
		qsort(v, n, sizeof(*v), strptrcmp);
	for (size_t i = 0; i < n; i++)
		if (!i || strcmp(v[i], v[i - 1]))
			buf_addf(&b, "%s%s", b.len ? " " : "", v[i]);
	ret = astrdup(b.len ? b.s : "");
	buf_release(&b);
	return ret;
}

void classplan_inputs(struct planner *pl, struct step *s, struct inputs *in)
{
	if (!s->capi_class && s->pkg->rule->builtin != RENDER_CAPI &&
	    has_id(pl, aprintf("%s/%s%s", s->cluster->name, s->pkg->name, CAPI_CLASS_PACKAGE_ROW)))
		/* no created cluster of the distro names it any more: it stays one while its render is on
		 * that cluster (a Cluster being deleted names a revision; its layout does not flip back) */
		s->capi_class = 1;
	if (!s->capi_class)
		return;
	s->class_keep = class_keep(pl, s);
	/* its earlier revisions are its own folder's: never another cluster's render (share.c) */
	inputs_add(in, "class revisions of", hash_bytes(s->cluster->name, strlen(s->cluster->name)));
}

/* is revision h one that keep names (NAME-<h>)? */
static int names(const char *keep, const char *h)
{
	if (keep && !strcmp(keep, CAPI_KEEP_ALL))
		return 1;
	while (keep && *keep) {
		size_t n = strcspn(keep, " ");
		const char *rev = capi_class_revision_of(*keep == '?' ? astrndup(keep + 1, n - 1) : astrndup(keep, n));
		if (rev && !strcmp(rev, h))
			return 1;
		keep += n + (keep[n] == ' ');
	}
	return 0;
}

void classplan_from(struct planner *pl, struct step *s, const struct record *rec)
{
	struct pushed pu;

	if (!s->capi_class)
		return;
	/* the earlier revisions come from its last output, else (forgotten) from what its folder holds */
	s->class_from = rec->have ? rec->output : (struct hash){ 0, 0 };
	s->class_from_known = !hash_zero(s->class_from);
	if (!s->class_from_known && state_pushed(pl->st, pushed_key(pl, s->gitpath), &pu) == 1) {
		s->class_from = pu.output;
		s->class_from_known = 1;
	}
}

/* has the state seen a Cluster of s's class package on s's cluster (a row, or a provision of one of its clusters)? */
static int seen_clusters(struct planner *pl, const struct step *s)
{
	const struct distro *d = pl->g->d;
	const char *prefix = aprintf("%s/cluster-", s->cluster->name);

	class_ids(pl);
	for (size_t i = 0; i < pl->nclass_ids; i++)
		if (!strncmp(pl->class_ids[i], prefix, strlen(prefix)))
			return 1;
	for (size_t i = 0; i < d->nclusters; i++) {
		const struct capi *k = d->clusters[i].create.capi;
		if (k && k->mgmt == s->cluster && k->class_pkg && package_is(s->pkg, k->class_pkg) &&
		    state_step(pl->st, aprintf("%s:provision", d->clusters[i].name)).have)
			return 1;
	}
	return 0;
}

void classplan_sources(struct planner *pl)
{
	const char *tip = remotekeys_tip();

	for (size_t i = 0; i < pl->g->nsteps; i++) {
		struct step *s = pl->g->steps[i];
		struct hash h;
		if (s->kind != STEP_RENDER || !s->capi_class || !s->selected || !s->dirty || s->class_from_known)
			continue;
		/* a state without its render (rebuilt, its key changed): what the remote's folder holds */
		if (tip && *tip && lazycache_folder(pl->statedir, tip, s->gitpath, &h) >= 0) {
			s->class_from = h;
			s->class_from_known = 1;
		} else if (remotekeys_read() && !(tip && *tip)) {
			s->class_from_known = 1;	/* a remote with no commit: no folder, nothing live from it */
		} else if (!remotekeys_read() && !seen_clusters(pl, s)) {
			/* the remote not read (up --overwrite, --plan, a bootstrap's remote still to be made), and no
			 * Cluster of the class ever seen here: a first run, with nothing to keep */
			s->class_from_known = 1;
		}
	}
}

int classplan_stale(struct planner *pl, struct step *s, const struct record *rec)
{
	struct bundle b;
	const char *cur, *gone = NULL;

	if (!s->capi_class || hash_zero(rec->output) || bundle_read(bundle_path(pl->statedir, rec->output), &b) < 0)
		return 0;
	cur = capi_class_current(&b);
	for (size_t i = 0; i < b.n && !gone; i++) {
		const char *e = b.v[i].name, *slash = strchr(e, '/');
		const char *h = slash && slash - e == 8 ? astrndup(e, 8) : NULL;
		if (h && (!cur || strcmp(h, cur)) && !names(s->class_keep, h))
			gone = h;
	}
	bundle_free(&b);
	if (!gone)
		return 0;
	s->reason = R_FORCED;
	s->why = aprintf("class revision %s is named by no synced Cluster any more: its folder goes", gone);
	return 1;
}

int classplan_cluster_sync(struct planner *pl, const struct step *sync, int done)
{
	const struct step *r = sync->render;
	const char *id = aprintf("%s/%s:class", sync->cluster->name, sync->pkg->name), *now, *before, *row;
	struct record rec;

	const char *pkg = sync->pkg->capi_of ? sync->pkg->capi_of->create.capi->class_pkg : NULL;

	if (!r || !pkg)
		return 0;
	if (access(bundle_path(pl->statedir, r->output), R_OK) < 0)
		(void)lazycache_held(pl, (struct step *)r, r->output);	/* not in the cache: from its folder */
	if (!(now = capi_cluster_class(pl->statedir, r->output)))
		return done ? 0 : -1;	/* what it will name is not known: not synced (build.c) */
	rec = state_step(pl->st, id);
	before = rec.have && rec.commit ? rec.commit : synced_class(pl, sync->cluster->name, sync->pkg->name + 8);
	if (before && *before == '@')
		before += 1 + strcspn(before + 1, " ");	/* its package: this Cluster's class package now */
	if (before)
		before += strspn(before, " ");
	if (done || !before || !*before || !strcmp(before, now))
		row = aprintf("@%s %s", pkg, now);
	else if (strstr(aprintf(" %s ", before), aprintf(" %s ", now)))
		row = aprintf("@%s %s", pkg, before);	/* widened already (a sync that failed before) */
	else
		row = aprintf("@%s %s %s", pkg, before, now);
	if (rec.have && rec.commit && !strcmp(rec.commit, row))
		return 0;
	return state_step_ok(pl->st, id, (struct hash){ 0, 0 }, (struct hash){ 0, 0 }, NULL, row, 0) < 0 ? -1 : 0;
}
