/* argolist.h - the run's lists of what Argo CD holds, asked once (argolist.c) */
#ifndef IDPMAKE_ARGOLIST_H
#define IDPMAKE_ARGOLIST_H

#include <jansson.h>

struct argocd;

enum argo_kind { AK_APP, AK_APPSET, AK_CLUSTER, AK_REPO, AK_N };

/* the items of the list Argo CD answers at `path` (a new reference), or NULL with *err naming `what` */
json_t *argo_list(struct argocd *a, const char *path, const char *what, const char **err);
/* the run's list of kind k (its items: a borrowed reference), asked for on first use; NULL with *err */
json_t *argo_list_once(struct argocd *a, enum argo_kind k, const char **err);
/* drop the lists: from here on steps change Argo CD */
void argo_list_forget(void);
/*
 * The servers of the clusters (repos: the URLs of the repositories) Argo
 * CD knows, from the run's list (arena): how many, or -1 with *err.
 */
int argo_listed(struct argocd *a, int repos, const char ***out, const char **err);

#endif
