/* capiowner.h - whose is the Cluster of a cluster idpmake creates (capiowner.c) */
#ifndef IDPMAKE_CAPIOWNER_H
#define IDPMAKE_CAPIOWNER_H

#include "distro/model.h"

/* up --adopt: a Cluster of another distro is taken over (said), not refused */
void capiowner_set_adopt(int adopt);
int capiowner_adopt(void);
/*
 * The Cluster ns/name on management cluster mgmt (kubectl get): 0 absent
 * or this distro's (label idpmake.io/distro = distro, tracked by Argo CD
 * Application `app` or by none); 1 another's, *whose the words for its
 * owner (arena); -1 kubectl cannot tell, *err.  *endpoint (when not NULL):
 * its spec.controlPlaneEndpoint as "HOST:PORT", or NULL when it has none.
 */
int capiowner_whose(const struct cluster *mgmt, const char *ns, const char *name, const char *distro,
		    const char *app, const char **whose, const char **endpoint, const char **err);
/* the refusal of a sync (or deletion) of created cluster cl's Cluster that `whose` owns (arena) */
const char *capiowner_refusal(const struct cluster *cl, const char *ns, const char *mgmt, const char *whose,
			      const char *distro);

#endif
