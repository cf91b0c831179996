/*
 * capiguard.c - a sync of a package that is not a created cluster's own
 * (MGMT/cluster-NAME) never applies over the Cluster API Cluster another
 * distro created (capiguard.h; issue 35 #1, from its review: a plain
 * package rendering `Cluster fleet/eu-1` rewrote another distro's cluster).
 *
 *   the sync's render (its bundle in the cache)
 *     entries cluster.*.yaml of apiVersion cluster.x-k8s.io/...
 *        |
 *        v  each: capiowner_whose on the sync's cluster (kubectl)
 *   absent, unmarked (no idpmake.io/distro: raw Cluster API objects a
 *   package manages), or this distro's (label and home)      applied
 *   another distro's                                           refused, unless up --adopt
 *   kubectl cannot tell                                        applied, said in the log:
 *                                                              only evidence refuses
 *
 * A render no longer in the cache is not read (nothing to tell from).
 */
#include <string.h>
#include <strings.h>

#include "argo/capiowner.h"
#include "base/util.h"
#include "base/yaml.h"
#include "distro/capi.h"
#include "graph/adopt.h"
#include "render/bundle.h"
#include "run/capiguard.h"

/* the Cluster API Cluster an entry is (*ns, *name), or 0 */
static int capi_cluster(const char *name, const char *data, size_t len, const char *dflt_ns, const char **ns,
			const char **cname)
{
	struct ypool *yp;
	struct ynode **docs, *api, *n, *nsn;
	size_t nd;
	int r = 0;

	if (strncasecmp(name, "cluster.", 8))
		return 0;	/* kind.NAME.yaml (bundle.h; the kind in lower case) */
	yp = ypool_new();
	if (yaml_parse(yp, name, data, len, &docs, &nd) == 0 && nd == 1 && (api = ypath(docs[0], "apiVersion")) &&
	    api->type == Y_SCALAR && !strncmp(api->s, "cluster.x-k8s.io/", 17) && (n = ypath(docs[0], "metadata.name")) &&
	    n->type == Y_SCALAR) {
		nsn = ypath(docs[0], "metadata.namespace");
		*ns = astrdup(nsn && nsn->type == Y_SCALAR ? nsn->s : dflt_ns ? dflt_ns : "default");
		*cname = astrdup(n->s);
		r = 1;
	}
	ypool_free(yp);
	return r;
}

const char *capiguard_sync(const struct distro *d, const char *statedir, const struct step *s, struct hash output,
			   int adopt, const char **note)
{
	struct capi_mine m = { d->name, capi_home(d), NULL, NULL, 1, 1 };
	struct bundle_stream bs;
	const char *name, *data, *ns, *cname, *whose, *err, *refused = NULL;
	size_t len;

	*note = NULL;
	if (s->pkg->capi_of || hash_zero(output) || bundle_open(&bs, bundle_path(statedir, output)) < 0)
		return NULL;
	while (!refused && bundle_next(&bs, &name, &data, &len) == 1) {
		if (!capi_cluster(name, data, len, s->namespace, &ns, &cname))
			continue;
		whose = err = NULL;
		int r = capiowner_whose(s->cluster, ns, cname, &m, &whose, NULL, &err);
		if (r < 0) {
			*note = aprintf("could not tell whose the Cluster %s/%s is (%s): applied", ns, cname, err);
		} else if (r > 0 && !adopt) {
			refused = aprintf("its render holds the Cluster API Cluster %s/%s, which on '%s' belongs to %s, not "
					  "to distro '%s': not synced, nothing of it changed; take it over on purpose: "
					  "idpmake up --adopt", ns, cname, s->cluster->name, whose, d->name ? d->name : "");
		} else if (r > 0) {
			*note = aprintf("adopted (--adopt) the Cluster %s/%s of %s", ns, cname, whose);
			adopt_note("Cluster API Cluster", aprintf("%s/%s", ns, cname), whose, s->id);
		}
	}
	bundle_close(&bs);
	return refused;
}
