/*
 * argoverify.c - one Application outside its sync (argocd.h): is a sync
 * step's Application still where its sync left it (the wave's bake, up
 * --refresh: argocd_verify_step), its status, and its deletion (--prune).
 * It uses argocd.c's readings of an Application (argoapi.h); argocd.c
 * never calls it.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/buf.h"
#include "base/intr.h"
#include "graph/status.h"
#include "render/bundle.h"
#include "git/gitops.h"
#include "distro/manifest.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"

/* API.md 5.8: the operation finished and the controller compared after it */
/*
 * The gate's view of an Application (argocd_verify_step): it must be the
 * one the sync sent, source and destination, not only Synced somewhere.
 * Its expected spec is built as the sync builds it (pin, helm source from
 * the render, argocd-app's own Application); NULL with *err, or *set for
 * an argocd-app ApplicationSet (its Applications are Argo CD's).
 */
static json_t *expected_app(struct argocd *a, struct step *s, const char *commit, int *set, const char **err)
{
	json_t *app = argocd_app_spec(a->d, s, a->repo_url);
	const char *pin = NULL;
	int helm = argocd_helm_app(s), cnoe = s->pkg->app_file != NULL;

	*set = 0;
	if (s->pkg->sync.automated && !helm && !cnoe && (s->folder_commit || (commit && *commit)))
		pin = s->folder_commit ? s->folder_commit : commit;
	if (pin)
		json_object_set_new(json_object_get(json_object_get(app, "spec"), "source"), "targetRevision",
				    json_string(pin));
	if ((helm && argocd_helm_source(a, s, app, err) < 0) || (cnoe && argocd_cnoe_app(a, s, app, set, err) < 0)) {
		json_decref(app);
		return NULL;
	}
	return app;
}

/* a fixed revision: a commit, or a chart version that names one release (no range, no wildcard) */
static int exact_rev(const char *r)
{
	return *r && !strpbrk(r, "*^~<>=| xX") && strcmp(r, "HEAD");
}

/*
 * Does the live Application's source `got` (spec.source or one of
 * spec.sources) say what `want` says, and is its synced revision `rev` the
 * one wanted?  NULL, or what differs (arena).
 */
static const char *source_differs(const struct argocd *a, const struct step *s, json_t *want, json_t *got,
				  const char *rev, const char *pushed, int follows, const char *what)
{
	static const char *const fields[] = { "repoURL", "path", "chart", "helm.values", "targetRevision", NULL };
	const char *tr = jstr(want, "targetRevision");

	for (const char *const *f = fields; *f; f++) {
		const char *w = jstr(want, *f), *g = jstr(got, *f);
		if (!strcmp(*f, "targetRevision") && follows)
			continue;	/* an ApplicationSet's element moves it (argoappset.c): the revision tells */
		if (!strcmp(*f, "targetRevision") && pushed && !strcmp(w, pushed) && *g && rev_reached(a, s, g, w))
			continue;	/* pinned: to the commit, or to one it comes after with the same folder */
		if (strcmp(w, g))
			return aprintf("its %s.%s is '%.80s', not '%.80s' as idpmake sent it", what, *f, g, w);
	}
	/* the revision Argo CD compared with */
	if (!strcmp(jstr(want, "repoURL"), a->repo_url) && !*jstr(want, "chart")) {
		if (!rev_reached(a, s, rev, pushed))
			return aprintf("its %s is Synced at %.12s, not at %.12s or a later commit with the same %s/", what,
				       *rev ? rev : "?", pushed ? pushed : "?", s->gitpath);
	} else if (exact_rev(tr) && (*jstr(want, "chart") || strlen(tr) == 40) && strcmp(rev, tr)) {
		return aprintf("its %s is Synced at %.40s, not at %.40s", what, *rev ? rev : "?", tr);
	}
	return NULL;
}

/* the live Application against the expected one: NULL, or what differs (arena) */
static const char *spec_differs(const struct argocd *a, const struct step *s, json_t *want, json_t *live,
				const char *pushed)
{
	const struct distro *d = a->d;
	json_t *ws = jget(want, "spec.sources"), *ls = jget(live, "spec.sources");
	const char *why;
	int follows = (d->argocd.fleet_appset || s->pkg->sync.appset) && !argocd_helm_app(s) && !s->pkg->app_file &&
		      !s->cluster->argo_name;
	static const char *const dst[] = { "server", "name", "namespace", NULL };

	for (const char *const *f = dst; *f; f++) {
		const char *w = jstr(jget(want, "spec.destination"), *f), *g = jstr(jget(live, "spec.destination"), *f);
		if (*w && strcmp(w, g))
			return aprintf("its spec.destination.%s is '%.80s', not '%.80s' as idpmake sent it", *f, g, w);
	}
	if (json_is_array(ws)) {
		json_t *revs = jget(live, "status.sync.revisions");
		if (json_array_size(ws) != json_array_size(ls))
			return aprintf("it has %zu sources, not %zu as idpmake sent it", json_array_size(ls), json_array_size(ws));
		for (size_t i = 0; i < json_array_size(ws); i++) {
			json_t *r = json_array_get(revs, i);
			if ((why = source_differs(a, s, json_array_get(ws, i), json_array_get(ls, i),
						  json_is_string(r) ? json_string_value(r) : "", pushed, follows,
						  aprintf("spec.sources[%zu]", i))))
				return why;
		}
		return NULL;
	}
	if (json_is_array(ls))
		return "it has spec.sources, not the spec.source idpmake sent";
	return source_differs(a, s, jget(want, "spec.source"), jget(live, "spec.source"), jstr(live, "status.sync.revision"),
			      pushed, follows, "spec.source");
}

int argocd_verify_step(void *ctx, struct step *s, const char *commit, int refresh, const char **err)
{
	struct argocd *a = ctx;
	const char *name = argocd_app_name(a->d, s);
	const char *pushed = pushed_commit(s, commit);
	struct call c;
	json_t *app, *want;
	int ret = -1, set = 0;

	if (!name)
		return *err = "argocd.app-name has an undefined variable (see above)", -1;
	if (!(want = expected_app(a, s, commit, &set, err)))
		return -1;
	if (set) {
		/* an argocd-app ApplicationSet: its Applications are Argo CD's (the sync made none) */
		json_decref(want);
		return 0;
	}
	if (call_open(&c, a, name, s->log, 120) < 0) {
		json_decref(want);
		return *err = "cannot start a libcurl handle", -1;
	}
	/* the gate's last look asks for a fresh comparison: it must not pass on a stale one */
	if (app_get(&c, refresh, &app, err) == 0) {
		/* Argo CD's words, as they may be shown (term_safe) */
		const char *sync = term_safe(jstr(app, "status.sync.status"));
		const char *health = term_safe(jstr(app, "status.health.status"));
		const char *rev = term_safe(jstr(app, "status.sync.revision")), *why;
		if (strcmp(sync, "Synced"))
			*err = aprintf("application '%s' is %s", name, *sync ? sync : "of unknown sync status");
		else if (!argocd_helm_app(s) && !s->pkg->app_file && !rev_reached(a, s, rev, pushed))
			*err = aprintf("application '%s' is Synced at %.12s, not at %.12s (%s) or a later commit"
				       " with the same %s/", name, *rev ? rev : "?", pushed,
				       s->folder_commit ? "the commit that last changed its folder" : "this run's commit",
				       s->gitpath);
		else if ((why = spec_differs(a, s, want, app, pushed))) {
			const char *m = aprintf("application '%s' is not the one idpmake synced: %s", name, why);
			*err = clean(a, m, strlen(m));
		} else if (s->pkg->sync.wait_healthy && strcmp(health, "Healthy")) {
			const char *msg = jstr(app, "status.health.message");
			const char *m = aprintf("application '%s' is %s%s%s", name,
						*health ? health : "of unknown health", *msg ? ": " : "", msg);
			*err = clean(a, m, strlen(m));
		} else
			ret = 0;
		json_decref(app);
	}
	json_decref(want);
	call_close(&c);
	return ret;
}

/*
 * An answer to a request on one Application that is not a 200 (nor the 404
 * of one that does not exist).  idpmake names the project in the query, so
 * Argo CD answers a 404 when the Application does not exist, and a 403 only
 * when it refuses (server/application getAppEnforceRBAC): a bare "permission
 * denied" when the account may not even get it, or may not in that
 * namespace; "permission denied: applications, ACTION, OBJECT, sub: ..." when
 * it may see it but not do ACTION.  Neither says it is gone.
 */
static const char *refused(struct call *c, const char *doing, struct resp *r, const char *action)
{
	const struct distro *d = c->a->d;
	const char *ns = d->argocd.namespace, *proj = d->argocd.project, *obj, *need;

	if (r->status != 403 || !r->message || strcmp(r->message, "permission denied"))
		return api_error(c, doing, r);
	obj = app_rbac_object(c);
	need = strcmp(action, "get") ? aprintf("'applications, get, %s' and 'applications, %s, %s'", obj, action, obj)
				     : aprintf("'applications, get, %s'", obj);
	return aprintf("%s: Argo CD refused (403 permission denied): the token's account may not get application '%s' in "
		       "project '%s', or Argo CD does not serve namespace '%s'; the account needs %s in its RBAC policy "
		       "(argocd-rbac-cm, policy.csv)", doing, c->app, proj, ns, need);
}

int argocd_app_status(struct argocd *a, const char *app, int refresh, char **sync_status, char **health,
		      const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	int ret = -1;

	*sync_status = *health = NULL;
	if (call_open(&c, a, app, NULL, 120) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if (request(&c, "GET", app_path(&c, "", refresh ? "refresh=normal" : NULL), NULL, &r, err) == 0) {
		if (r.status == 200 && json_is_object(r.json)) {
			*sync_status = xstrdup(jstr(r.json, "status.sync.status"));
			*health = xstrdup(jstr(r.json, "status.health.status"));
			ret = 0;
		} else if (r.status == 404) {
			ret = 1;	/* project= is in the query: Argo CD says when it does not exist */
		} else {
			*err = refused(&c, aprintf("reading application '%s'", app), &r, "get");
		}
	}
	resp_reset(&r);
	call_close(&c);
	return ret;
}

int argocd_delete_app(struct argocd *a, const char *app, const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	int ret = -1;

	if (call_open(&c, a, app, NULL, DELETE_TIMEOUT) < 0)
		return *err = "cannot start a libcurl handle", -1;
	if (request(&c, "DELETE", app_path(&c, "", "cascade=true"), NULL, &r, err) < 0)
		goto out;
	if (r.status == 404) {
		ret = 0;	/* already gone (project= is in the query: a 403 is a refusal, not this) */
		goto out;
	}
	if (r.status != 200) {
		*err = refused(&c, aprintf("deleting application '%s'", app), &r, "delete");
		goto out;
	}
	/* the object stays, with a deletionTimestamp, until its resources are gone (API.md 5.5) */
	for (;;) {
		if (nap(a->poll_ms) < 0) {
			*err = "interrupted";
			break;
		}
		if (request(&c, "GET", app_path(&c, "", NULL), NULL, &r, err) < 0)
			break;
		if (r.status == 404) {
			ret = 0;
			break;
		}
		if (r.status != 200) {
			*err = refused(&c, aprintf("reading application '%s'", app), &r, "get");
			break;
		}
		if (call_past(&c)) {
			*err = aprintf("timed out after %d s waiting for application '%s' to be deleted", DELETE_TIMEOUT, app);
			break;
		}
	}
out:
	resp_reset(&r);
	call_close(&c);
	return ret;
}
