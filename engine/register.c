/*
 * register.c - when the register steps run.
 *
 *   CLUSTER:register     a cluster with `register:`: upserted through
 *                        /api/v1/clusters, its labels set with PUT
 *                        updatedFields (argocd.c does the requests); every
 *                        sync to that cluster comes after it.
 *   repository:register  the GitOps repository with its credentials
 *                        (IDPMAKE_GIT_USERNAME / IDPMAKE_GIT_TOKEN), unless
 *                        argocd.repository says Argo CD already has it;
 *                        every sync comes after it.
 *
 * Invariant: no credential, and no hash of one, reaches a key.  A rotated
 * token therefore does not re-register by itself; `idpmake forget
 * CLUSTER:register` does (idpmake(1)).
 */
#include <string.h>

#include "register.h"
#include "util.h"

static struct hash cluster_key(const struct planner *pl, const struct cluster *c)
{
	struct hasher *h = hasher_new();

	hasher_adds(h, "cluster");
	hasher_adds(h, pl->argocd_server);
	hasher_adds(h, c->server);
	hasher_adds(h, c->name);
	for (size_t i = 0; i < c->labels.n; i++) {
		hasher_adds(h, c->labels.v[i].key);
		hasher_adds(h, c->labels.v[i].value);
	}
	hasher_adds(h, "");
	/* where the credential comes from, never what it is */
	hasher_adds(h, c->reg.token_env);
	hasher_adds(h, c->reg.kubeconfig);
	hasher_adds(h, c->reg.context);
	hasher_adds(h, c->reg.ca_file);
	hasher_add(h, &c->reg.insecure, sizeof(c->reg.insecure));
	return hasher_end(h);
}

static struct hash repo_key(const struct planner *pl)
{
	struct hasher *h = hasher_new();

	hasher_adds(h, "repository");
	hasher_adds(h, pl->argocd_server);
	hasher_adds(h, pl->rc.remote_url);
	hasher_adds(h, "IDPMAKE_GIT_USERNAME IDPMAKE_GIT_TOKEN");
	return hasher_end(h);
}

void register_decide(struct planner *pl, struct step *s, const struct record *rec)
{
	if (!pl->argocd_server) {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = "skipped: no argocd configured";
		return;
	}
	s->key = s->cluster ? cluster_key(pl, s->cluster) : repo_key(pl);
	plan_compare(s, rec, s->cluster ? "the cluster's server, name, labels or credential source changed"
				       : "the repository or the Argo CD server changed");
}
