/*
 * appsetprune.c - up --prune of an Application an ApplicationSet generated
 * (argocd.h argocd_appset_drop): its element goes from the set's list
 * generator, not the Application itself (argoappset.c makes the elements;
 * this file is apart so that no two files of argo/ call each other).
 */
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/argohome.h"
#include "argo/capiowner.h"
#include "base/intr.h"
#include "base/url.h"
#include "base/util.h"
#include "graph/adopt.h"

/*
 * up --prune of an Application an ApplicationSet generated: Argo CD's
 * ApplicationSet controller owns it (applicationset_controller.go,
 * SetupWithManager: Owns(Application); its DeleteFunc requeues the set), so
 * deleting the Application alone is undone at the set's next reconcile while
 * the element is still in the list generator, and the automated Application
 * deploys again.  The element goes instead, and the controller deletes the
 * Application (Reconcile's deleteInCluster, as its default policy "sync"
 * allows: applicationset/utils/policy.go DefaultPolicy), with what it
 * deployed (the resources finalizer RenderTemplateParams puts on it, as
 * idpmake's template has none and no preserveResourcesOnDeletion).  The set
 * left with no element is deleted: nothing of it is left to generate.
 */

/* the set, with `name`'s element taken out: 1 when it was there, 0 when not; *left: the elements kept */
static int drop_element(json_t *set, const char *name, size_t *left)
{
	json_t *gens = jget(set, "spec.generators"), *els, *keep = json_array();
	int found = 0;

	*left = 0;
	for (size_t g = 0; json_is_array(gens) && g < json_array_size(gens); g++) {
		els = jget(json_array_get(gens, g), "list.elements");
		for (size_t i = 0; json_is_array(els) && i < json_array_size(els); i++) {
			json_t *e = json_array_get(els, i);
			if (!strcmp(jstr(e, "name"), name))
				found = 1;
			else if (g == 0)
				json_array_append(keep, e);
		}
		*left += g ? json_array_size(els) : 0;
	}
	*left += json_array_size(keep);
	if (json_is_array(gens) && json_array_size(gens) && json_is_object(jget(json_array_get(gens, 0), "list")))
		json_object_set(jget(json_array_get(gens, 0), "list"), "elements", keep);
	json_decref(keep);
	return found;
}

/* wait until Application c->app is gone: 0, or -1 with *err */
static int app_gone(struct call *c, const char *set, const char **err)
{
	struct resp r = { .code = -1 };
	int ret = -1;

	for (;;) {
		if (request(c, "GET", app_path(c, "", NULL), NULL, &r, err) < 0)
			break;
		if (r.status == 404) {
			ret = 0;
			break;
		}
		if (r.status != 200) {
			*err = api_error(c, aprintf("reading application '%s'", c->app), &r);
			break;
		}
		if (call_past(c)) {
			*err = aprintf("ApplicationSet '%s' did not delete application '%s' within %d s of its element's "
				       "removal; does the set's policy allow deletion (spec.syncPolicy.applicationsSync, "
				       "the ApplicationSet controller's --policy)?", set, c->app, DELETE_TIMEOUT);
			break;
		}
		resp_reset(&r);
		if (nap(c->a->poll_ms) < 0) {
			*err = "interrupted";
			break;
		}
	}
	resp_reset(&r);
	return ret;
}

int argocd_appset_drop(struct argocd *a, const char *set, const char *app, const char **err)
{
	const struct distro *d = a->d;
	const char *path = argocd_appset_path(a, set), *who;
	struct call c;
	struct resp r = { .code = -1 };
	size_t left = 0;
	int ret = -1, found, other;

	if (call_open(&c, a, app, NULL, DELETE_TIMEOUT) < 0)
		return *err = "cannot start a libcurl handle", -1;
	argocd_appset_lock(1);	/* the generator's read-modify-write, as argocd_appset_element's */
	if (request(&c, "GET", path, NULL, &r, err) < 0)
		goto unlock;
	if (r.status == 404) {
		/* no set to make it again: the Application alone goes (the garbage collector would delete it) */
		argocd_appset_lock(0);
		resp_reset(&r);
		call_close(&c);
		return argocd_delete_app(a, app, err);
	}
	if (r.status != 200 || !json_is_object(r.json)) {
		*err = api_error(&c, aprintf("reading ApplicationSet '%s'", set), &r);
		goto unlock;
	}
	who = json_string_value(json_object_get(jget(r.json, "metadata.labels"), "idpmake.io/distro"));
	other = !who || strcmp(who, d->name ? d->name : "") || argo_home_differs(a, jget(r.json, "metadata.annotations"));
	/* another's, unless up --adopt takes over one of this distro's own sets (a package's: its sync rewrites it) */
	if (other && !(capiowner_adopt() && find_package(d, set))) {
		*err = aprintf("ApplicationSet '%s', which generates application '%s', is not this distro's (label "
			       "idpmake.io/distro, annotations idpmake.io/gitops-remote and -path): left as it is", set, app);
		goto unlock;
	}
	found = drop_element(r.json, app, &left);
	if (!found && !left) {
		/* no element of it, and none at all in a list generator: not a set idpmake made (clusters, git,
		 * matrix generators...): never deleted for want of elements it never had */
		*err = aprintf("ApplicationSet '%s' has no list generator element of application '%s': left as it is",
			       set, app);
		goto unlock;
	}
	if (other)
		adopt_note("ApplicationSet", set, who ? aprintf("distro '%s'", term_safe(who)) : "someone outside idpmake",
			   NULL);
	if (!left) {
		resp_reset(&r);
		if (request(&c, "DELETE", path, NULL, &r, err) < 0)
			goto unlock;
		if (r.status != 200 && r.status != 404) {
			*err = api_error(&c, aprintf("deleting ApplicationSet '%s'", set), &r);
			goto unlock;
		}
		note(&c, 0, "ApplicationSet '%s': deleted (its last element, %s, removed)", set, app);
	} else if (found) {
		/* the set as it is, its element less: spec, name, namespace, labels, annotations (what upsert merges) */
		json_t *md = json_object_get(r.json, "metadata"), *body;
		body = json_pack("{s:s, s:s, s:{s:O, s:O*, s:O*, s:O*}, s:O}", "apiVersion", "argoproj.io/v1alpha1",
				 "kind", "ApplicationSet", "metadata", "name", json_object_get(md, "name"), "namespace",
				 json_object_get(md, "namespace"), "labels", json_object_get(md, "labels"), "annotations",
				 json_object_get(md, "annotations"), "spec", json_object_get(r.json, "spec"));
		resp_reset(&r);
		if (!body) {
			*err = aprintf("ApplicationSet '%s' as Argo CD answered has no name or spec", set);
			goto unlock;
		}
		if (request(&c, "POST", "/api/v1/applicationsets?upsert=true", body, &r, err) < 0) {
			json_decref(body);
			goto unlock;
		}
		json_decref(body);
		if (r.status != 200) {
			*err = api_error(&c, aprintf("updating ApplicationSet '%s'", set), &r);
			goto unlock;
		}
		note(&c, 0, "ApplicationSet '%s': element %s removed", set, app);
	}
	ret = 0;
unlock:
	argocd_appset_lock(0);
	resp_reset(&r);
	/* the controller deletes it (and with the set gone, the garbage collector): wait until it has */
	if (ret == 0)
		ret = app_gone(&c, set, err);
	call_close(&c);
	return ret;
}
