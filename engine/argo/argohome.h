/* argohome.h - where a distro pushes, marked on what idpmake makes in Argo CD (argohome.c) */
#ifndef IDPMAKE_ARGOHOME_H
#define IDPMAKE_ARGOHOME_H

#include <jansson.h>

#include "distro/model.h"

struct argocd;

/*
 * Where the distro pushes, recorded beside its name on what it makes in
 * Argo CD: two distros with one name and different remotes or paths are
 * two owners.  Annotations (a URL may pass a label value's 63 characters).
 */
extern const char OWNER_REMOTE[];	/* idpmake.io/gitops-remote: owner_remote(the repository URL) */
extern const char OWNER_PATH[];		/* idpmake.io/gitops-path: git.path as written (its template) */

/* `url` as owners are compared: no user info, scheme and host in lower case, no default port, no trailing '/' or ".git" */
const char *owner_remote(const char *url);
/* the annotations above for this distro pushing to repo_url (a new object) */
json_t *owner_annotations(const struct distro *d, const char *repo_url);

/* annotations (a cluster's, an object's metadata's) that say nothing or this distro's remote and path */
int owner_same_home(const struct argocd *a, json_t *annotations);
/* NULL when annotations `ann` say this distro's home (or nothing: made before they were
 * recorded), else where their owner pushes, for a message (Argo CD's text: the caller cleans it) */
const char *argo_home_differs(const struct argocd *a, json_t *ann);
/* git.path as written (its template), the default when none */
const char *argo_home_path(const struct distro *d);

/* the name repository:register gives the repository in Argo CD, which has no labels: "idpmake/DISTRO" */
const char *owner_repo_name(const struct distro *d);

#endif
