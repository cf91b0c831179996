/*
 * capiowner.c - whose is the Cluster API `Cluster` of a cluster idpmake
 * creates (capiowner.h; issue 35 #1)?
 *
 * A created cluster is a name on a management cluster: two distros that
 * declare the same name, management cluster and namespace would apply, and
 * then register, rebuild and delete, one Cluster.  Its owner is read from
 * the Cluster itself on the management cluster (kubectl get, its kube
 * target), never from this distro's state (which a second distro has too):
 *
 *   no such Cluster                              nobody's yet: 0
 *   label idpmake.io/distro of another distro    that distro's: 1
 *   no label                                     made outside idpmake (clusterctl,
 *                                                kubectl apply): 1
 *   label of this distro, and
 *     annotation idpmake.io/home another         a same-named distro's pushing
 *                                                elsewhere: 1
 *     no idpmake.io/home                         an older idpmake's: this
 *                                                distro's when its state synced it,
 *                                                else 1
 *     annotation argocd.argoproj.io/tracking-id
 *     of another Application (the whole id:
 *     "APP" or "APPNS_APP")                      another distro's Application: 1
 *     else                                       this distro's: 0
 *   kubectl cannot answer                        -1: not synced, not deleted
 *
 * Argo CD's tracking is a second sign, never the first: with label tracking
 * (Argo CD 2.x) there is no tracking-id at all.
 *
 * The answer is hostile input: every string is cleaned before it is shown.
 */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/capiowner.h"
#include "argo/kubectl.h"
#include "base/util.h"

#define TRACKING "argocd.argoproj.io/tracking-id"

static int adopting;

void capiowner_set_adopt(int adopt)
{
	adopting = adopt;
}

int capiowner_adopt(void)
{
	return adopting;
}

/* s shown on a terminal: hostile (an object's label), cut at 80 bytes */
static const char *shown(const char *s)
{
	size_t n = strlen(s);

	return term_safe(n > 80 ? aprintf("%.80s...", s) : s);
}

/* the string value of metadata.WHERE[key] (keys hold dots), or "" */
static const char *meta(json_t *md, const char *where, const char *key)
{
	json_t *v = json_object_get(json_object_get(md, where), key);

	return json_is_string(v) ? json_string_value(v) : "";
}

/* is tracking id `id` ("APP:GROUP/KIND:NS/NAME", "APPNS_APP:..." for Applications elsewhere) of Application app? */
static int tracked_by(const char *id, const char *app, const char *appns)
{
	size_t n = strcspn(id, ":");

	if (strlen(app) == n && !strncmp(id, app, n))
		return 1;
	return appns && !strcmp(astrndup(id, n), aprintf("%s_%s", appns, app));
}

int capiowner_whose(const struct cluster *mgmt, const char *ns, const char *name, const struct capi_mine *m,
		    const char **whose, const char **endpoint, const char **err)
{
	const char *args[] = { "get", "clusters.cluster.x-k8s.io", "-n", ns, name, NULL };
	const char *who, *id, *home, *e = NULL;
	json_t *got, *md;

	*whose = NULL;
	if (endpoint)
		*endpoint = NULL;
	if (!(got = kubectl_get_json(mgmt, args, &e))) {
		if (e && (strstr(e, aprintf("clusters.cluster.x-k8s.io \"%s\" not found", name)) ||
			  strstr(e, aprintf("namespaces \"%s\" not found", ns))))
			return 0;	/* exactly the Cluster's NotFound, or its namespace's (the sync makes it): nobody's yet */
		*err = aprintf("cannot tell whose the Cluster %s/%s on '%s' is: %s", ns, name, mgmt->name, e ? e : "?");
		return -1;
	}
	md = json_object_get(got, "metadata");
	who = meta(md, "labels", "idpmake.io/distro");
	id = meta(md, "annotations", TRACKING);
	home = meta(md, "annotations", "idpmake.io/home");
	if (!json_is_object(md)) {
		*err = aprintf("cannot tell whose the Cluster %s/%s on '%s' is: its answer has no metadata", ns, name,
			       mgmt->name);
		json_decref(got);
		return -1;
	}
	if (endpoint) {
		json_t *ep = jget(got, "spec.controlPlaneEndpoint"), *port = json_object_get(ep, "port");
		const char *host = jstr(ep, "host");
		if (*host && json_is_integer(port))
			*endpoint = aprintf("%s:%lld", shown(host), (long long)json_integer_value(port));
	}
	if (!*who && m->unmarked_ok)
		;	/* no distro's: a package of raw Cluster API objects may apply it */
	else if (!*who)
		*whose = "nobody: idpmake did not make it (no idpmake.io/distro label)";
	else if (strcmp(who, m->distro ? m->distro : ""))
		*whose = aprintf("distro '%s'", shown(who));
	else if (*home && strcmp(home, m->home ? m->home : ""))
		*whose = aprintf("distro '%s' pushing elsewhere (a same-named distro: idpmake.io/home %s, this one's %s)",
				 shown(who), shown(home), m->home ? m->home : "?");
	else if (!*home && !m->synced)
		*whose = aprintf("distro '%s', marked by an idpmake that did not record where it pushes, and never synced "
				 "by this state (a same-named distro's?)", shown(who));
	else if (*id && m->app && !tracked_by(id, m->app, m->appns))
		*whose = aprintf("distro '%s' through Argo CD Application '%s' (tracking-id), not '%s'", shown(who),
				 shown(astrndup(id, strcspn(id, ":"))), m->app);
	json_decref(got);
	return *whose ? 1 : 0;
}

const char *capiowner_refusal(const struct cluster *cl, const char *ns, const char *mgmt, const char *whose,
			      const char *distro)
{
	return aprintf("cluster '%s': its Cluster %s/%s on '%s' belongs to %s, not to distro '%s': not synced, nothing "
		       "of it changed; give this cluster a name of its own, or take it over on purpose: idpmake up "
		       "--adopt", cl->name, ns, cl->name, mgmt, whose, distro ? distro : "");
}
