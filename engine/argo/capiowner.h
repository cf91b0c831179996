/* capiowner.h - whose is the Cluster of a cluster idpmake creates (capiowner.c) */
#ifndef IDPMAKE_CAPIOWNER_H
#define IDPMAKE_CAPIOWNER_H

#include "distro/model.h"

/* up --adopt: a Cluster of another distro is taken over (said), not refused */
void capiowner_set_adopt(int adopt);
int capiowner_adopt(void);
/* what this distro's Cluster carries (capi.h), and what its state knows */
struct capi_mine {
	const char *distro;	/* the label idpmake.io/distro */
	const char *home;	/* the annotation idpmake.io/home (capi_home) */
	const char *app;	/* its Application (the sync of MGMT/cluster-NAME), or NULL: not compared */
	const char *appns;	/* the namespace of Argo CD's Applications (argocd.namespace) */
	int synced;		/* this state has synced it: a Cluster with no home (an older idpmake's) is ours */
	int unmarked_ok;	/* a Cluster with no idpmake.io/distro label is no one's (a plain package's) */
};
/*
 * The Cluster ns/name on management cluster mgmt (kubectl get): 0 absent
 * or this distro's (its label, its home, and Argo CD's tracking-id of
 * m->app or none); 1 another's, *whose the words for its owner (arena);
 * -1 kubectl cannot tell, *err.  *endpoint (when not NULL): its
 * spec.controlPlaneEndpoint as "HOST:PORT", or NULL when it has none.
 */
int capiowner_whose(const struct cluster *mgmt, const char *ns, const char *name, const struct capi_mine *m,
		    const char **whose, const char **endpoint, const char **err);
/* the refusal of a sync (or deletion) of created cluster cl's Cluster that `whose` owns (arena) */
const char *capiowner_refusal(const struct cluster *cl, const char *ns, const char *mgmt, const char *whose,
			      const char *distro);

#endif
