/*
 * remotesync.c - a sync step never recorded in this state, whose render
 * remotekeys.c reconstructed, proven done in Argo CD (remotekeys.h).
 *
 * What idpmake would send is built as argocd.c builds it (argospec.c, from
 * the bundle the reconstruction put in the cache); every field of it must
 * equal Argo CD's (subset: what Argo CD adds is not compared), and Argo CD
 * must report it Synced, Healthy unless wait: synced, at revisions proven
 * by their source's kind:
 *
 *     a folder of the GitOps repository   a commit whose folder is the tip's
 *     a Helm chart (chart: set)            the spec's targetRevision, an exact
 *                                          version (a range may have moved)
 *     a ref-only source of the GitOps      the tip idpmake fetched, when it
 *     repository                           names the branch (or a commit)
 *     another git repository               the commit its targetRevision names
 *                                          now (lsremote.c: a branch, a tag,
 *                                          HEAD; a range is not proven)
 *
 * A multi-source Application is proven source by source, its
 * status.sync.revisions by position.  Per kind of package:
 *
 *   Application (manifests, local renders): one GET of it.
 *   helm rendered by Argo CD: its chart source with the values inline, as
 *     argocd_helm_source makes it.
 *   argocd-app Application: the rendered file's fields (argocd_cnoe_app).
 *   argocd-app ApplicationSet: one GET of it, the same spec, no
 *     ErrorOccurred condition, and each Application its status lists
 *     (1 to GENERATED_MAX, owned by it: ownerReferences' uid) proven as
 *     above.  An ApplicationSet that lists none is not proven: its
 *     controller may not have run.
 *   fleet applicationset (argocd.fleet or sync.fleet): the package's
 *     ApplicationSet with the template argoappset.c writes, this cluster's
 *     list element as argoappset.c writes it, pinned to a commit whose
 *     folder is the tip's, and the generated Application Synced at that
 *     commit with what idpmake sends, targetRevision that commit.
 *
 * An ApplicationSet is read in its namespace (appsetNamespace): Argo CD
 * looks in its own otherwise.
 *
 * Anything short of that syncs: the cost of a wrong "not done" is one sync.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "git/gitdrift.h"
#include "git/lsremote.h"
#include "render/planner.h"
#include "git/remotekeys.h"
#include "graph/status.h"
#include "base/url.h"
#include "base/util.h"

#define GENERATED_MAX 64	/* Applications of one ApplicationSet read to prove it */

/* the spec and labels idpmake sends, in Argo CD's object */
static int same_object(json_t *ours, json_t *have)
{
	return argocd_json_subset(json_object_get(ours, "spec"), json_object_get(have, "spec")) &&
	       argocd_json_subset(jget(ours, "metadata.labels"), jget(have, "metadata.labels"));
}

static int is_commit(const char *s)
{
	return strlen(s) == 40 && strspn(s, "0123456789abcdef") == 40;
}

/* Synced, and Healthy unless the package waits for synced only */
static int status_ok(const struct step *s, json_t *app)
{
	return !strcmp(jstr(app, "status.sync.status"), "Synced") &&
	       (!s->pkg->sync.wait_healthy || !strcmp(jstr(app, "status.health.status"), "Healthy"));
}

/* one source at its synced revision, by its kind (the table above) */
static int source_at(const struct argocd *a, json_t *src, const char *rev)
{
	const char *path = jstr(src, "path"), *ver = jstr(src, "targetRevision"), *url = jstr(src, "repoURL"), *f;
	const char *branch = a->d->git.branch ? a->d->git.branch : "main";

	if (!json_is_object(src) || !*rev)
		return 0;
	if (*jstr(src, "chart"))
		return *ver && !ver[strcspn(ver, "*^~<>=|, xX")] && !strcmp(rev, ver);
	if (!is_commit(rev))
		return 0;
	if (strcmp(url, a->repo_url))
		return lsremote_names(url, ver, rev);	/* another repository: what the revision names now */
	if (!*path) {
		/* a ref-only source of the GitOps repository: its branch is the tip idpmake fetched */
		return (is_commit(ver) && !strcmp(ver, rev)) ||
		       ((!strcmp(ver, branch) || !strcmp(ver, aprintf("refs/heads/%s", branch))) &&
			!strcmp(rev, remotekeys_tip()));
	}
	if (!(f = norm_path(path)) || !*f)
		return 0;
	return remotekeys_folder_at(rev, f);
}

/* every source of Argo CD's Application at its synced revision */
static int revisions_ok(const struct argocd *a, json_t *app)
{
	json_t *srcs = jget(app, "spec.sources"), *revs = jget(app, "status.sync.revisions");
	size_t n = json_array_size(srcs);

	if (!n)
		return source_at(a, jget(app, "spec.source"), jstr(app, "status.sync.revision"));
	if (!json_is_array(revs) || json_array_size(revs) != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!json_is_string(json_array_get(revs, i)) ||
		    !source_at(a, json_array_get(srcs, i), json_string_value(json_array_get(revs, i))))
			return 0;
	return 1;
}

/* GET path: the object (a new reference) when 200, else NULL */
static json_t *get(struct call *c, const char *path)
{
	struct resp re = { .code = -1 };
	const char *err = NULL;
	json_t *j = NULL;

	if (request(c, "GET", path, NULL, &re, &err) == 0 && re.status == 200 && json_is_object(re.json))
		j = json_incref(re.json);
	resp_reset(&re);
	return j;
}

/* an Application idpmake sends (ours), as Argo CD has it */
static int prove_app(struct call *c, const struct step *s, json_t *ours, const char **rev)
{
	json_t *app = get(c, app_path(c, "", "refresh=normal"));
	int ok = app && status_ok(s, app) && same_object(ours, app) && revisions_ok(c->a, app);

	if (ok)
		*rev = astrdup(json_array_size(jget(app, "spec.sources")) ? "" : jstr(app, "status.sync.revision"));
	json_decref(app);
	return ok;
}

/* does an ApplicationSet report an error generating its Applications? */
static int set_failing(json_t *set)
{
	json_t *conds = jget(set, "status.conditions");

	for (size_t i = 0; i < json_array_size(conds); i++)
		if (!strcmp(jstr(json_array_get(conds, i), "type"), "ErrorOccurred") &&
		    strcmp(jstr(json_array_get(conds, i), "status"), "False"))
			return 1;
	return 0;
}

/* is app owned by the ApplicationSet whose uid is uid? */
static int owned(json_t *app, const char *uid)
{
	json_t *refs = jget(app, "metadata.ownerReferences");

	for (size_t i = 0; *uid && i < json_array_size(refs); i++)
		if (!strcmp(jstr(json_array_get(refs, i), "kind"), "ApplicationSet") &&
		    !strcmp(jstr(json_array_get(refs, i), "uid"), uid))
			return 1;
	return 0;
}

/* an argocd-app package's ApplicationSet (ours) and the Applications it generated */
static int prove_cnoe_set(struct call *c, const struct step *s, const char *name, json_t *ours)
{
	const char *set_ns = *jstr(ours, "metadata.namespace") ? jstr(ours, "metadata.namespace") : c->a->d->argocd.namespace;
	json_t *set = get(c, aprintf("/api/v1/applicationsets/%s?appsetNamespace=%s", url_escape(name), url_escape(set_ns)));
	json_t *res;
	size_t n;
	int ok = set && same_object(ours, set) && !set_failing(set);

	res = ok ? jget(set, "status.resources") : NULL;
	n = json_array_size(res);
	ok = ok && n >= 1 && n <= GENERATED_MAX;
	for (size_t i = 0; ok && i < n; i++) {
		json_t *r = json_array_get(res, i), *app;
		const char *ns = *jstr(r, "namespace") ? jstr(r, "namespace") : c->a->d->argocd.namespace;
		if (strcmp(jstr(r, "kind"), "Application") || !*jstr(r, "name")) {
			ok = 0;
			break;
		}
		/* the generated Application's project is the template's: not named in the query */
		app = get(c, aprintf("/api/v1/applications/%s?appNamespace=%s&refresh=normal", url_escape(jstr(r, "name")),
				     url_escape(ns)));
		ok = app && owned(app, jstr(set, "metadata.uid")) && status_ok(s, app) &&
		     revisions_ok(c->a, app);
		json_decref(app);
	}
	json_decref(set);
	return ok;
}

/* fleet applicationset: this cluster's element and its generated Application */
static int prove_fleet(struct call *c, const struct step *s, const char *name, json_t *ours, const char *f,
		       const char **rev)
{
	json_t *set = get(c, argocd_appset_path(c->a, s->pkg->name));
	json_t *tmpl = argocd_appset_template(ours), *els, *el = NULL, *app = NULL;
	const char *r = "";
	int ok = set && json_is_true(jget(set, "spec.goTemplate")) && argocd_json_subset(tmpl, jget(set, "spec.template")) &&
		 !set_failing(set);

	els = ok ? jget(json_array_get(jget(set, "spec.generators"), 0), "list.elements") : NULL;
	for (size_t i = 0; i < json_array_size(els); i++)
		if (!strcmp(jstr(json_array_get(els, i), "name"), name)) {
			ok = ok && !el;	/* named twice: not argoappset.c's */
			el = json_array_get(els, i);
		}
	if (el)
		r = jstr(el, "revision");
	ok = ok && el && !strcmp(jstr(el, "cluster"), s->cluster->name) &&
	     !strcmp(jstr(el, "server"), s->cluster->server ? s->cluster->server : "https://kubernetes.default.svc") &&
	     !strcmp(jstr(el, "namespace"), s->namespace) && !strcmp(jstr(el, "path"), s->gitpath) && is_commit(r) &&
	     remotekeys_folder_at(r, f);
	if (ok) {
		/* the generated Application: what idpmake sends, pinned to the element's commit */
		json_object_set_new(json_object_get(jget(ours, "spec"), "source"), "targetRevision", json_string(r));
		app = get(c, app_path(c, "", "refresh=normal"));
		ok = app && status_ok(s, app) && same_object(ours, app) && !strcmp(jstr(app, "status.sync.revision"), r);
	}
	if (ok)
		*rev = astrdup(r);
	json_decref(app);
	json_decref(tmpl);
	json_decref(set);
	return ok;
}

int remotekeys_sync(struct planner *pl, struct step *s, const struct record *rec)
{
	struct step *r = render_of(s);
	const struct distro *d = pl->g->d;
	int helm = argocd_helm_app(s), cnoe = s->pkg->app_file != NULL, set = 0, ok = 0;
	const char *name, *f, *err = NULL, *rev = "", *kind = "it";
	json_t *ours;
	struct call c;

	if (rec->have || !pl->argo || !remotekeys_proving(r) || s->drift || s->pkg->deploy_kubectl ||
	    !(name = argocd_app_name(d, s)) || !(f = norm_path(s->gitpath)))
		return 0;
	if (argocd_login_now(pl->argo, &err) < 0 || call_open(&c, pl->argo, name, NULL, 120) < 0)
		return 0;	/* not proven: it runs */
	/* what argocd_sync_step sends */
	ours = argocd_app_spec(d, s, pl->argo->repo_url);
	if ((helm && argocd_helm_source(pl->argo, s, ours, &err) < 0) ||
	    (cnoe && argocd_cnoe_app(pl->argo, s, ours, &set, &err) < 0)) {
		/* not proven */
	} else if (set) {
		kind = "its ApplicationSet and their Applications";
		ok = prove_cnoe_set(&c, s, name, ours);
	} else if ((d->argocd.fleet_appset || s->pkg->sync.appset) && !helm && !cnoe && !s->cluster->argo_name) {
		kind = "the ApplicationSet's element and its Application";
		ok = prove_fleet(&c, s, name, ours, f, &rev);
	} else {
		ok = prove_app(&c, s, ours, &rev);
	}
	/* the commit recorded: the one Argo CD synced, else the tip's (a chart's version is not one) */
	if (ok && state_step_ok(pl->st, s->id, s->key, r->output, NULL, is_commit(rev) ? rev : remotekeys_tip(), 0) < 0)
		ok = 0;
	if (ok) {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = aprintf("reconstructed: Argo CD reports %s Synced%s at %.*s", kind,
				 s->pkg->sync.wait_healthy ? " and Healthy" : "", *rev && !is_commit(rev) ? 64 : 7,
				 *rev ? rev : remotekeys_tip());
	} else if (status_verbose()) {
		fprintf(stderr, "idpmake: %s: not proven done in Argo CD: synced\n", s->id);
	}
	json_decref(ours);
	call_close(&c);
	return ok;
}
