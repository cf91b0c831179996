/*
 * argohome.c - where a distro pushes, as idpmake marks it on what it makes
 * in Argo CD (argohome.h): the GitOps remote and path beside the distro's
 * name, so two distros with one name and different homes are two owners
 * (run/owner.c compares them before a run acts), and the name it gives
 * the repository it registers, which has no labels.
 */
#include <ctype.h>
#include <jansson.h>
#include <string.h>
#include <strings.h>

#include "argo/argoapi.h"
#include "argo/argohome.h"
#include "base/url.h"
#include "base/util.h"

const char OWNER_REMOTE[] = "idpmake.io/gitops-remote";
const char OWNER_PATH[] = "idpmake.io/gitops-path";

const char *owner_remote(const char *url)
{
	return url_owner_form(url);
}

const char *argo_home_path(const struct distro *d)
{
	return d->git.path ? d->git.path : "${cluster}/${package}";
}

json_t *owner_annotations(const struct distro *d, const char *repo_url)
{
	return json_pack("{s:s, s:s}", OWNER_REMOTE, owner_remote(repo_url), OWNER_PATH, argo_home_path(d));
}

/*
 * Annotations `ann` of an object this distro's name marks: NULL when they
 * say it is this distro's (or say nothing: made before they were
 * recorded), else where its owner pushes, for a message (Argo CD's text: the caller cleans it)
 */
const char *argo_home_differs(const struct argocd *a, json_t *ann)
{
	json_t *r = json_object_get(ann, OWNER_REMOTE), *p = json_object_get(ann, OWNER_PATH);
	const char *remote = json_is_string(r) ? json_string_value(r) : NULL, *path = json_is_string(p) ? json_string_value(p) : NULL;

	if ((!remote || !strcmp(owner_remote(remote), owner_remote(a->repo_url))) && (!path || !strcmp(path, argo_home_path(a->d))))
		return NULL;
	return aprintf("pushing to %s at path %s", remote ? remote : "?", path ? path : "?");
}

int owner_same_home(const struct argocd *a, json_t *annotations)
{
	return argo_home_differs(a, annotations) == NULL;
}

/*
 * A repository in Argo CD has no labels or annotations (v1alpha1.Repository):
 * idpmake marks the one it registers by its `name`, "idpmake/DISTRO"
 * (owner_repo_name).  Another distro's name is another owner; no such name
 * is credentials someone gave Argo CD by hand (argocd repo add), unless the
 * state records that this distro's repository:register succeeded before:
 * an older idpmake, which sent no name, registered it.
 */
const char *owner_repo_name(const struct distro *d)
{
	return aprintf("idpmake/%s", d->name ? d->name : "");
}
