/* register.h - CLUSTER:register and repository:register steps (fleet.md "Clusters") */
#ifndef IDPMAKE_REGISTER_H
#define IDPMAKE_REGISTER_H

#include "render/planner.h"

/*
 * Decide a register step (plan_decide's contract).  Its key covers what
 * Argo CD is told and where the credential comes from (a variable's name,
 * a kubeconfig and context), never the credential nor a hash of it, so
 * an unchanged cluster or repository costs no request.
 */
void register_decide(struct planner *pl, struct step *s, const struct record *rec);

/*
 * --refresh: does Argo CD still have each cluster and the repository the
 * selected register steps recorded as registered (with the key they would
 * have now)?  One GET /api/v1/clusters and one GET /api/v1/repositories,
 * each only when a step asks.  One it lost gets s->drift: it registers again.
 */
struct argocd;
void register_refresh(struct planner *pl, struct argocd *a);

#endif
