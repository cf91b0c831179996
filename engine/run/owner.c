/*
 * owner.c - who owns what idpmake makes in Argo CD (owner.h).
 *
 * The check before a run (owner_check):
 *
 *   the selected steps that would create or update something in Argo CD
 *     sync of a package     its Application (and the package's ApplicationSet
 *                           under argocd.fleet or sync.fleet: applicationset;
 *                           an argocd-app package's file may be either)
 *     CLUSTER:register      the cluster, by server
 *        |
 *        v  none: no request at all
 *   one list per kind that has some (GET /api/v1/applications?appNamespace=NS,
 *   /api/v1/applicationsets, /api/v1/clusters); no selector, so that an object
 *   idpmake did not make is seen too; up --refresh's check of the clusters
 *   (register.c) asked first and shares the list of clusters
 *        |
 *        v
 *   each one Argo CD has: whose is it?
 *     label (cluster: annotation) idpmake.io/distro  == this distro's name  ours, when
 *       annotations idpmake.io/gitops-remote and     == where this distro pushes
 *       idpmake.io/gitops-path                          (or absent: made before they
 *                                                   were recorded; the next sync
 *                                                   adds them)
 *       either one differs                          a same-named distro's,
 *                                                   pushing elsewhere
 *     another name                                  another distro's
 *     absent (Application, ApplicationSet)          not made by idpmake
 *     absent (cluster)                              registered by hand: as before,
 *                                                   registered over
 *        |
 *        v
 *   collisions: all printed, exit 1, before any step runs (nothing pushed);
 *   --adopt: each said, and taken over.
 *
 * When the run would change nothing in Argo CD if no render changed its
 * output (samerender.h), nothing is asked before it runs: the renders run,
 * and just before the push or the first step that talks to Argo CD
 * (build_opts.gate, preflight_late) owner_check_late asks, on the renders'
 * real outputs; a render that kept its output asks nothing at all.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/argohome.h"
#include "argo/argolist.h"
#include "graph/adopt.h"
#include "run/ctx.h"
#include "distro/manifest.h"
#include "run/owner.h"
#include "run/plan.h"
#include "run/samerender.h"
#include "graph/state.h"
#include "base/gitcred.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"

/* ---- validate: one name, one step ---------------------------------------- */

/* ---- up: before anything runs --------------------------------------------- */

enum want_kind { W_APP = AK_APP, W_APPSET = AK_APPSET, W_CLUSTER = AK_CLUSTER, W_REPO = AK_REPO, NKINDS = AK_N };
static const char *const kind_word[] = { "Application", "ApplicationSet", "cluster", "repository" };
static const char *const adopt_word[] = { "Application", "ApplicationSet", "cluster registration", "repository registration" };

/* argo_home_differs, its Argo CD text cleaned for the terminal (clean: the token masked, escapes shown) */
static const char *home_differs(const struct argocd *a, json_t *ann)
{
	const char *h = argo_home_differs(a, ann);
	return h ? clean(a, h, strlen(h)) : NULL;
}

struct want {
	enum want_kind kind;
	const char *name;		/* the object's name; a cluster's server */
	const struct step *s;
	int either;			/* an argocd-app package's whose file cannot be read now: it may be either kind */
};

static const char *owner_label(json_t *o, const char *where, const char *key)
{
	json_t *v = json_object_get(json_object_get(o, where), key);
	return json_is_string(v) ? json_string_value(v) : NULL;
}

/* the step's sync would create or update its Application: decided now when its render is known */
static int will_sync(struct ctx *c, struct step *s)
{
	struct step *r = render_of(s);

	if (r && (r->state == S_FAILED || r->state == S_NOT_RUN))
		return 0;	/* owner_check_late: its render failed, it does not run */
	if (r && r->dirty && r->state != S_DONE)
		return 1;	/* to render: its Application is sent unless the output stays the same */
	plan_decide(&c->pl, s);
	return s->dirty;
}

/*
 * An argocd-app package's file: W_APP or W_APPSET as its kind says (what
 * its sync sends, argospec.c), or -1 when it cannot be read now: then
 * either kind may be the one.  Parsed quietly, as manifest.c read it.
 */
static int app_file_kind(const struct package *p)
{
	struct ypool *yp;
	struct ynode **docs, *kind;
	size_t nd, len;
	char *text = read_file(p->app_file, &len);
	int k = -1, before = loc_errors;

	if (!text)
		return -1;
	yp = ypool_new();
	loc_quiet++;
	if (yaml_parse(yp, p->app_file, text, len, &docs, &nd) == 0 && nd && docs[0]->type == Y_MAP &&
	    (kind = yget(docs[0], "kind")))
		k = ystr_eq(kind, "ApplicationSet") ? W_APPSET : ystr_eq(kind, "Application") ? W_APP : -1;
	loc_quiet--;
	loc_errors = before;
	ypool_free(yp);
	free(text);
	return k;
}

static size_t wants(struct ctx *c, struct want **v)
{
	struct graph *g = c->g;
	size_t n = 0;

	*v = amalloc((3 * g->nsteps + 1) * sizeof(**v));
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected)
			continue;
		if (s->kind == STEP_PROVISION) {
			/* a created cluster's incarnation, in the keys of its syncs below (steps[] is in order) */
			plan_decide(&c->pl, s);
			continue;
		}
		if (s->kind == STEP_REGISTER && s->cluster && s->cluster->server) {
			plan_decide(&c->pl, s);
			if (s->dirty)
				(*v)[n++] = (struct want){ W_CLUSTER, s->cluster->server, s, 0 };
		}
		if (s->kind == STEP_REGISTER && !s->cluster && gitcred_given()) {
			/* repository:register with a token: it would register over what Argo CD has */
			plan_decide(&c->pl, s);
			if (s->dirty)
				(*v)[n++] = (struct want){ W_REPO, argocd_repo_url(c->d, c->statedir), s, 0 };
		}
		if (s->kind != STEP_SYNC || s->pkg->deploy_kubectl || !will_sync(c, s))
			continue;
		const char *name = argocd_app_name(c->d, s);
		int helm = argocd_helm_app(s), cnoe = s->pkg->app_file != NULL;
		if (!name)
			continue;	/* said; its sync fails */
		if (cnoe) {
			/* the kind its file is: an unrelated object of the other kind with its name is no collision */
			int k = app_file_kind(s->pkg);
			if (k != W_APPSET)
				(*v)[n++] = (struct want){ W_APP, name, s, k < 0 };
			if (k != W_APP)
				(*v)[n++] = (struct want){ W_APPSET, name, s, k < 0 };
			continue;
		}
		(*v)[n++] = (struct want){ W_APP, name, s, 0 };
		if ((c->d->argocd.fleet_appset || s->pkg->sync.appset) && !helm && !s->cluster->argo_name)
			(*v)[n++] = (struct want){ W_APPSET, s->pkg->name, s, 0 };
	}
	return n;
}

/* the item of `items` named `name` (a cluster: by server), or NULL */
static json_t *find(json_t *items, enum want_kind k, const char *name)
{
	size_t i;
	json_t *it;

	json_array_foreach(items, i, it) {
		const char *have = k == W_CLUSTER ? jstr(it, "server") : k == W_REPO ? jstr(it, "repo") : jstr(it, "metadata.name");
		if (k == W_REPO ? !strcmp(owner_remote(have), owner_remote(name)) : !strcmp(have, name))
			return it;
	}
	return NULL;
}

static const char *repo_owner(const struct ctx *c, struct argocd *a, const struct want *w, json_t *it)
{
	const char *name = jstr(it, "name");
	struct record rec;

	if (!strncmp(name, "idpmake/", 8)) {
		if (!strcmp(name, owner_repo_name(c->d)))
			return NULL;
		return aprintf("distro '%s'", clean(a, name + 8, strlen(name + 8)));
	}
	rec = state_step(c->pl.st, w->s->id);
	if (rec.have && rec.ok)
		return NULL;	/* registered by this distro with an older idpmake: named on this registration */
	return "someone outside idpmake (its credentials were given by hand, e.g. argocd repo add: no idpmake/ name on it)";
}

/*
 * An Application with no remote annotation (made before idpmake marked it)
 * is its name's distro's when it pulls from this distro's GitOps remote: a
 * same-named distro pushing elsewhere neither updates nor (--prune)
 * deletes the other one's.  1 when it does.
 */
static int pulls_from_home(const struct argocd *a, json_t *app)
{
	json_t *spec = json_object_get(app, "spec"), *srcs = json_object_get(spec, "sources"), *src;
	const char *home = owner_remote(a->repo_url);
	size_t i;

	src = json_object_get(spec, "source");
	if (json_is_string(json_object_get(src, "repoURL")) &&
	    !strcmp(owner_remote(json_string_value(json_object_get(src, "repoURL"))), home))
		return 1;
	json_array_foreach(srcs, i, src) {
		if (json_is_string(json_object_get(src, "repoURL")) &&
		    !strcmp(owner_remote(json_string_value(json_object_get(src, "repoURL"))), home))
			return 1;
	}
	return 0;
}

/* whose is it: NULL when this distro's, else the words for its owner */
static const char *owner_of(const struct ctx *c, struct argocd *a, const struct want *w, json_t *it, int *same_name)
{
	const char *mine = c->d->name ? c->d->name : "";
	const char *who = w->kind == W_CLUSTER ? owner_label(it, "annotations", "idpmake.io/distro")
					       : owner_label(json_object_get(it, "metadata"), "labels", "idpmake.io/distro");

	const char *home;

	if (w->kind == W_REPO)
		return repo_owner(c, a, w, it);
	if (!who && w->kind == W_CLUSTER) {
		/* no mark: registered by hand (argocd cluster add), or by this distro with an idpmake that marked nothing */
		struct record rec = state_step(c->pl.st, w->s->id);
		if (rec.have && rec.ok)
			return NULL;
		return "someone outside idpmake (registered by hand, e.g. argocd cluster add: no idpmake.io/distro "
		       "annotation on it)";
	}
	if (!who)
		return "nobody: idpmake did not make it (no idpmake.io/distro label)";
	/* the same name pushing elsewhere (another remote, or another path of it) is another distro */
	if (!strcmp(who, mine)) {
		*same_name = 1;
		json_t *ann = w->kind == W_CLUSTER ? json_object_get(it, "annotations")
						   : json_object_get(json_object_get(it, "metadata"), "annotations");
		if ((home = home_differs(a, ann)))
			return aprintf("distro '%s' %s", clean(a, who, strlen(who)), home);
		/* unmarked (an older idpmake): an Application that should pull from here but does not is elsewhere's */
		if (w->kind == W_APP && !json_is_string(json_object_get(ann, OWNER_REMOTE)) && !argocd_helm_app(w->s) &&
		    !w->s->pkg->app_file && !pulls_from_home(a, it)) {
			const char *from = url_masked(jstr(it, "spec.source.repoURL"), "***");
			return aprintf("distro '%s' pulling from %s (made before idpmake marked the remote)",
				       clean(a, who, strlen(who)), *from ? clean(a, from, strlen(from)) : "another repository");
		}
		return NULL;
	}
	/* Argo CD's text, hostile: an annotation may hold control characters and any length */
	return aprintf("distro '%s'", clean(a, who, strlen(who)));
}

static int late;	/* owner_check put the check off until the renders ran */
static const char **predicting;	/* owner_predict: plan's, and why Argo CD could not be read goes here */

/* Argo CD could not say: up's step error, or plan's "not checked" */
static void unread(const struct step *s, const char *err)
{
	if (predicting)
		*predicting = aprintf("who owns the Applications and clusters this run would change (%s)", err);
	else
		error("%s: %s (asking Argo CD who owns what this run would change); nothing was pushed", s->id, err);
}

static int check(struct ctx *c, struct argocd *a, struct want *v, size_t n)
{
	json_t *items[NKINDS] = { NULL };
	const char *err = NULL;
	int collisions = 0, apps = 0, clusters = 0, repos = 0, same = 0, ret = 0;

	if (!n) {
		argo_list_forget();
		return 0;	/* nothing to create or update: no request */
	}
	if (argocd_login_now(a, &err) < 0) {	/* argocd.login, when a request is to be made */
		unread(v[0].s, aprintf("argocd: %s", err));
		return -1;
	}
	for (size_t i = 0; i < n && !ret; i++) {
		enum want_kind k = v[i].kind;
		if (!items[k] && !(items[k] = json_incref(argo_list_once(a, (enum argo_kind)k, &err)))) {
			/* said as the step's failure would be: the first step that needed the answer */
			unread(v[i].s, err);
			ret = -1;
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		json_t *it = find(items[v[i].kind], v[i].kind, v[i].name);
		const char *who, *what;
		int same_name = 0;
		if (!it || !(who = owner_of(c, a, &v[i], it, &same_name)))
			continue;
		what = v[i].kind == W_CLUSTER ? aprintf("cluster '%s' (%s)", v[i].s->cluster->name, v[i].name)
		     : v[i].kind == W_REPO ? aprintf("repository %s", url_masked(v[i].name, "***"))
					      : aprintf("%s '%s'%s", kind_word[v[i].kind], v[i].name,
							v[i].either ? " (the package's file, unreadable now, may be either kind)" : "");
		if (c->adopt && !predicting) {
			status_info("idpmake: %s: adopting %s, which belongs to %s (--adopt)", v[i].s->id, what, who);
			adopt_note(adopt_word[v[i].kind], v[i].kind == W_CLUSTER ? v[i].s->cluster->name :
				   v[i].kind == W_REPO ? url_masked(v[i].name, "***") : v[i].name, who, v[i].s->id);
			continue;
		}
		fprintf(stderr, "idpmake: %s: %s in Argo CD belongs to %s, not to distro '%s'%s\n", v[i].s->id, what, who,
			c->d->name ? c->d->name : "",
			!same_name ? "" : aprintf(" pushing to %s at path %s", owner_remote(a->repo_url), argo_home_path(c->d)));
		collisions++;
		*(v[i].kind == W_CLUSTER ? &clusters : v[i].kind == W_REPO ? &repos : &apps) += 1;
		same += same_name;
	}
	if (collisions) {
		if (predicting)
			fprintf(stderr, "idpmake: plan: up would refuse before the push: %d object%s in Argo CD %s not "
				"this distro's\n", collisions, collisions == 1 ? "" : "s", collisions == 1 ? "is" : "are");
		else
			fprintf(stderr, "idpmake: up refused before the push: %d object%s in Argo CD %s not this distro's; "
				"nothing was pushed, synced or registered\n", collisions, collisions == 1 ? "" : "s",
				collisions == 1 ? "is" : "are");
		if (apps)
			fprintf(stderr, "hint: give this distro Application names of its own (argocd.app-name, e.g. "
				"\"%s-${cluster}-${package}\"), or take them over on purpose: idpmake up --adopt\n",
				c->d->name && *c->d->name ? c->d->name : "NAME");
		if (same)
			fprintf(stderr, "hint: a distro is its name with the GitOps remote and path it pushes to: another "
				"distro named '%s' pushes elsewhere; if this is it, moved on purpose, take its objects over "
				"once: idpmake up --adopt\n", c->d->name ? c->d->name : "");
		if (repos)
			fprintf(stderr, "hint: Argo CD holds credentials for the repository that idpmake did not give it for "
				"this distro: leave them (argocd: {repository: registered} in the distro, or run without "
				"IDPMAKE_GIT_TOKEN), or register over them on purpose: idpmake up --adopt\n");
		if (clusters)
			fprintf(stderr, "hint: a cluster is registered once in Argo CD: leave its registration to the distro "
				"that owns it (drop register: here), or take it over on purpose: idpmake up --adopt\n");
		ret = predicting ? collisions : 1;
	}
out:
	for (int k = 0; k < NKINDS; k++)
		json_decref(items[k]);
	argo_list_forget();	/* from here on steps change Argo CD */
	return ret;
}

int owner_check(struct ctx *c, struct argocd *a)
{
	struct samerender sr;
	struct want *v;
	size_t anyway, n;

	/* what the run changes in Argo CD even if no render changes its output (samerender.h) */
	samerender_begin(&c->pl, &sr);
	anyway = wants(c, &v);
	samerender_end(&c->pl, &sr);
	n = wants(c, &v);
	if ((late = !anyway && n))
		return 0;	/* only a render's new output would: asked before the push */
	return check(c, a, v, n);
}

int owner_predict(struct ctx *c, struct argocd *a, const char **unchecked)
{
	struct want *v;
	size_t n = wants(c, &v);
	int r;

	*unchecked = NULL;
	predicting = unchecked;
	r = check(c, a, v, n);
	predicting = NULL;
	return r;
}

int owner_check_late(struct ctx *c, struct argocd *a)
{
	struct want *v;
	size_t n;

	if (!late)
		return 0;
	late = 0;
	n = wants(c, &v);
	return check(c, a, v, n);
}

/* ---- up --prune ------------------------------------------------------------ */

/* the ApplicationSet that controls an Application (its ownerReferences), or NULL */
static const char *generated_by(json_t *md)
{
	json_t *refs = json_object_get(md, "ownerReferences"), *ref;
	size_t i;

	json_array_foreach(refs, i, ref)
		if (!strcmp(jstr(ref, "kind"), "ApplicationSet") && json_is_true(json_object_get(ref, "controller")) &&
		    *jstr(ref, "name"))
			return astrdup(jstr(ref, "name"));
	return NULL;
}

long owner_apps(struct argocd *a, struct owned_app **v, const char **err)
{
	const struct distro *d = a->d;
	const char *sel = aprintf("idpmake.io/distro=%s", d->name ? d->name : "");
	json_t *items = argo_list(a, aprintf("/api/v1/applications?appNamespace=%s&selector=%s", url_escape(d->argocd.namespace),
					url_escape(sel)), "this distro's Applications", err), *it;
	size_t i, n = 0;

	*v = NULL;
	if (!items)
		return -1;
	*v = amalloc((json_array_size(items) + 1) * sizeof(**v));
	json_array_foreach(items, i, it) {
		json_t *md = json_object_get(it, "metadata");
		const char *who = owner_label(md, "labels", "idpmake.io/distro"), *cl = owner_label(md, "labels", "idpmake.io/cluster"),
			   *pk = owner_label(md, "labels", "idpmake.io/package");
		if (!who || strcmp(who, d->name ? d->name : ""))
			continue;	/* a server that ignored the selector: the labels decide */
		if (argo_home_differs(a, json_object_get(md, "annotations")))
			continue;	/* a same-named distro's, pushing elsewhere */
		if (!json_is_string(json_object_get(json_object_get(md, "annotations"), OWNER_REMOTE)) && !pulls_from_home(a, it))
			continue;	/* unmarked, and not pulling from here: not proven this distro's */
		(*v)[n++] = (struct owned_app){ astrdup(jstr(it, "metadata.name")), astrdup(cl ? cl : ""),
						astrdup(pk ? pk : ""), generated_by(md) };
	}
	json_decref(items);
	return (long)n;
}
