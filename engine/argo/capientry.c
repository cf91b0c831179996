/*
 * capientry.c - Argo CD's entries of a cluster idpmake creates
 * (argoapi.h; issue 35 #1, #5 and issue 33 #7): before its registration,
 * whose the entry at its server is (argocd_created_entry: not another
 * cluster's name, not another distro's), and whose the entry of its name
 * is at another server (argocd_stale_entry: its own entry of before it was
 * made again, which goes once the new one is registered, as Argo CD
 * refuses a name with two servers: util/argo/argo.go
 * GetDestinationCluster).
 */
#include <jansson.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/argohome.h"
#include "argo/capiowner.h"
#include "graph/adopt.h"
#include "base/url.h"
#include "base/util.h"

/*
 * Argo CD's entry `have` (GET by server or by name) before created cluster
 * cl is registered over it, or its labels set: NULL when it is cl's, this
 * distro's or unmarked (registered by hand, or by the registrar of
 * credential: external); else why not (arena).  Another cluster's name at
 * that server is refused even with up --adopt: the upsert is keyed by
 * server, and would rename it (issue 35 #5).
 */
const char *argocd_created_over(struct call *c, const struct cluster *cl, const char *server, json_t *have)
{
	json_t *ann = json_object_get(have, "annotations");
	json_t *w = json_object_get(ann, "idpmake.io/distro");	/* a key with dots: not jstr's path */
	const char *name = jstr(have, "name"), *who = json_is_string(w) ? json_string_value(w) : "";
	const char *mine = c->a->d->name;

	if (*name && strcmp(name, cl->name))
		return aprintf("Argo CD has the server %s registered as cluster '%s': cluster '%s' is not registered over "
			       "it (two clusters' kubeconfigs name one server?); remove that entry if it is stale",
			       server, term_safe(name), cl->name);
	if ((*who && strcmp(who, mine ? mine : "")) || (*who && !owner_same_home(c->a, ann))) {
		if (capiowner_adopt()) {
			note(c, 1, "adopting cluster '%s' (%s), registered by distro '%s' (--adopt)", cl->name, server,
			     term_safe(who));
			adopt_note("cluster registration", cl->name, aprintf("distro '%s'", term_safe(who)), NULL);
			return NULL;
		}
		const char *elsewhere = strcmp(who, mine ? mine : "") ? NULL : argo_home_differs(c->a, ann);
		return aprintf("cluster '%s' (%s) in Argo CD belongs to distro '%s'%s%s, not to this distro '%s'%s: not "
			       "registered over; take it over on purpose: idpmake up --adopt", cl->name, server,
			       term_safe(who), elsewhere ? " " : "", elsewhere ? term_safe(elsewhere) : "",
			       mine ? mine : "", elsewhere ? aprintf(" pushing to %s at path %s",
			       owner_remote(c->a->repo_url), argo_home_path(c->a->d)) : "");
	}
	return NULL;
}

int argocd_created_entry(struct call *c, const struct cluster *cl, const char *server, const char **err)
{
	struct resp r = { .code = -1 };
	int ret = 0;

	if (request(c, "GET", aprintf("/api/v1/clusters/%s", url_escape(server)), NULL, &r, err) < 0)
		return -1;
	if (r.status == 200) {
		if ((*err = argocd_created_over(c, cl, server, r.json)))
			ret = -1;
	} else if (r.status != 404 && !(r.status == 403 && r.message && !strcmp(r.message, "permission denied"))) {
		*err = api_error(c, aprintf("looking up the cluster at %s", server), &r);
		ret = -1;
	}
	resp_reset(&r);
	return ret;
}

/*
 * Argo CD's entry named cl at another server than `server` (a cluster
 * made again has a new endpoint: issue 33 #7): its server, to delete once
 * the new one is registered, as Argo CD refuses a name with two servers
 * (util/argo/argo.go GetDestinationCluster); NULL when there is none.
 * Another's entry of that name is refused (-1), unless up --adopt.
 */
int argocd_stale_entry(struct call *c, const struct cluster *cl, const char *server, const char **old, const char **err)
{
	struct resp r = { .code = -1 };
	json_t *ann, *w, *k;
	const char *have, *mine = c->a->d->name ? c->a->d->name : "";
	int ret = 0;

	*old = NULL;
	if (request(c, "GET", aprintf("/api/v1/clusters/%s?id.type=name", url_escape(cl->name)), NULL, &r, err) < 0)
		return -1;
	if (r.status != 200) {
		if (r.status != 404 && !(r.status == 403 && r.message && !strcmp(r.message, "permission denied"))) {
			*err = api_error(c, aprintf("looking up cluster '%s'", cl->name), &r);
			ret = -1;
		}
		resp_reset(&r);
		return ret;
	}
	have = jstr(r.json, "server");
	ann = json_object_get(r.json, "annotations");
	w = json_object_get(ann, "idpmake.io/distro");
	k = json_object_get(ann, "idpmake.io/cluster");
	if (*have && !same_server(have, server)) {
		if (json_is_string(w) && !strcmp(json_string_value(w), mine) && json_is_string(k) &&
		    !strcmp(json_string_value(k), cl->name) && owner_same_home(c->a, ann))
			*old = astrdup(have);
		else if (capiowner_adopt()) {
			*old = astrdup(have);
			adopt_note("cluster registration", cl->name, json_is_string(w) ? aprintf("distro '%s'",
				   term_safe(json_string_value(w))) : "someone outside idpmake", NULL);
		} else {
			*err = aprintf("Argo CD has a cluster named '%s' at %s that is not this distro's: cluster '%s' is "
				       "not registered at %s beside it (Argo CD refuses a name with two servers); take it "
				       "over on purpose: idpmake up --adopt", cl->name, term_safe(have), cl->name, server);
			ret = -1;
		}
	}
	resp_reset(&r);
	return ret;
}

int argocd_drop_stale(struct call *c, const struct cluster *cl, const char *old, const char *server, const char **err)
{
	struct resp r = { .code = -1 };
	int ret = 0;

	if (request(c, "DELETE", aprintf("/api/v1/clusters/%s", url_escape(old)), NULL, &r, err) < 0)
		return -1;
	if (r.status != 200 && r.status != 404 && !(r.status == 403 && r.message && !strcmp(r.message, "permission denied"))) {
		*err = api_error(c, aprintf("removing the entry of cluster '%s' at %s (made again at %s)", cl->name, old,
					    server), &r);
		ret = -1;
	} else {
		note(c, 1, "cluster '%s': its entry at %s, of before it was made again, is removed", cl->name, old);
	}
	resp_reset(&r);
	return ret;
}
