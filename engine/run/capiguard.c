/*
 * capiguard.c - a sync of a package that is not a created cluster's own
 * (MGMT/cluster-NAME) never applies over the Cluster API Cluster another
 * distro created (capiguard.h; issue 35 #1, from its review: a plain
 * package rendering `Cluster fleet/eu-1` rewrote another distro's cluster).
 *
 *   the sync's render (its bundle in the cache; one that cannot be read: refused)
 *     every document of every entry of apiVersion cluster.x-k8s.io/..., kind Cluster
 *        |
 *        v  each: capiowner_whose on the sync's cluster (kubectl)
 *   absent, unmarked (no idpmake.io/distro: raw Cluster API objects a
 *   package manages), or this distro's (label and home)      applied
 *   another distro's                                           refused, unless up --adopt
 *   kubectl cannot tell                                        applied, said in the log:
 *                                                              only evidence refuses
 *
 * Not seen: the objects of a Helm chart Argo CD renders itself (render:
 * argocd; the render holds its Application alone).
 */
#define _GNU_SOURCE	/* memmem */
#include <string.h>

#include "argo/capiowner.h"
#include "base/buf.h"
#include "base/util.h"
#include "base/yaml.h"
#include "distro/capi.h"
#include "graph/adopt.h"
#include "render/bundle.h"
#include "run/capiguard.h"

/*
 * The Cluster API Clusters of one entry (any name: two objects of a kind
 * and name in two namespaces are NS.kind.NAME.yaml, an argocd-app package
 * keeps its own file names; any number of documents), as "NS/NAME" in v;
 * their number.  An entry that does not mention the group is not parsed.
 */
static size_t capi_clusters(const char *name, const char *data, size_t len, const char *dflt_ns, const char ***v)
{
	struct ypool *yp;
	struct ynode **docs;
	size_t nd, n = 0;

	*v = NULL;
	if (!memmem(data, len, "cluster.x-k8s.io/", 17))
		return 0;
	yp = ypool_new();
	if (yaml_parse(yp, name, data, len, &docs, &nd) == 0 && nd) {
		*v = amalloc(nd * sizeof(**v));
		for (size_t i = 0; i < nd; i++) {
			struct ynode *api = ypath(docs[i], "apiVersion"), *kind = ypath(docs[i], "kind");
			struct ynode *nm = ypath(docs[i], "metadata.name"), *ns = ypath(docs[i], "metadata.namespace");
			if (api && api->type == Y_SCALAR && !strncmp(api->s, "cluster.x-k8s.io/", 17) && kind &&
			    ystr_eq(kind, "Cluster") && nm && nm->type == Y_SCALAR)
				(*v)[n++] = aprintf("%s/%s", ns && ns->type == Y_SCALAR ? ns->s : dflt_ns ? dflt_ns : "default",
						    nm->s);
		}
	}
	ypool_free(yp);
	return n;
}

const char *capiguard_sync(const struct distro *d, const char *statedir, const struct step *s, struct hash output,
			   int adopt, const char **note)
{
	struct capi_mine m = { d->name, capi_home(d), NULL, NULL, 1, 1 };
	struct bundle_stream bs;
	struct buf notes = BUF_INIT;
	const char *name, *data, **v, *whose, *err, *refused = NULL;
	size_t len, n;
	int more;

	*note = NULL;
	if (s->pkg->capi_of || hash_zero(output))
		return NULL;
	if (bundle_open(&bs, bundle_path(statedir, output)) < 0)
		return "its render cannot be read to check the Cluster API Clusters in it: not synced; run up again (it "
		       "renders again)";
	while (!refused && (more = bundle_next(&bs, &name, &data, &len)) == 1) {
		n = capi_clusters(name, data, len, s->namespace, &v);
		for (size_t i = 0; i < n && !refused; i++) {
			const char *slash = strchr(v[i], '/'), *ns = astrndup(v[i], (size_t)(slash - v[i]));
			whose = err = NULL;
			int r = capiowner_whose(s->cluster, ns, slash + 1, &m, &whose, NULL, &err);
			if (r < 0)
				buf_addf(&notes, "%scould not tell whose the Cluster %s is (%s): applied", notes.len ? "; " : "",
					 v[i], err);
			else if (r > 0 && !adopt)
				refused = aprintf("its render holds the Cluster API Cluster %s, which on '%s' belongs to %s, "
						  "not to distro '%s': not synced, nothing of it changed; take it over on "
						  "purpose: idpmake up --adopt", v[i], s->cluster->name, whose,
						  d->name ? d->name : "");
			else if (r > 0) {
				buf_addf(&notes, "%sadopted (--adopt) the Cluster %s of %s", notes.len ? "; " : "", v[i], whose);
				adopt_note("Cluster API Cluster", v[i], whose, s->id);
			}
		}
	}
	if (!refused && more < 0)
		refused = "its render cannot be read to check the Cluster API Clusters in it: not synced; run up again";
	*note = notes.len ? astrdup(notes.s) : NULL;
	buf_release(&notes);
	bundle_close(&bs);
	return refused;
}
