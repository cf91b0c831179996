/* provision.h - the step CLUSTER:provision of a cluster Cluster API makes (capi.h; provision.c) */
#ifndef IDPMAKE_PROVISION_H
#define IDPMAKE_PROVISION_H

#include "render/planner.h"
#include "run/build.h"

/*
 * Decide CLUSTER:provision (plan_decide's contract).  Its key is the key of
 * the Cluster's sync on the management cluster (which covers the render)
 * and the provision's own settings, so an unchanged spec costs no request;
 * its output is the cluster's incarnation (its Cluster's uid), which every
 * step of the cluster has in its key.
 */
void provision_decide(struct planner *pl, struct step *s, const struct record *rec);
/*
 * Is m (CLUSTER:kind, tls or CLUSTER:provision, an in-step) still to make
 * what its out-steps use?  A provision that runs to change a cluster it
 * made (a recorded uid) makes nothing new: plan predicts the same uid.
 */
int provision_makes(const struct step *m);

/*
 * Run it through ops->provision: wait until a new Cluster (no success
 * recorded) has an initialized control plane, or a changed one has
 * converged.  0 with *output (the incarnation) and *uid, or -1 with *err.
 */
int provision_run(struct planner *pl, struct step *s, const struct sync_ops *ops, struct hash *output,
		  const char **uid, const char **err);

/*
 * The provision's line in words, from what it records (rec) and what the
 * state had before (was, or NULL): "Cluster provisioned on mgmt (v1.33.2,
 * 3 workers), uid 08181f0e"; "made again" for a new uid, "converged" for
 * the same one.
 */
const char *provision_said(const struct step *s, const char *rec, const char *was);

/* a version the cluster cannot move to from the one the state recorded (+2 minors, or down): why, or NULL */
const char *provision_skew(struct planner *pl, const struct step *s);
/* its namespace or management cluster changed since it was made (Cluster API cannot move it): why, or NULL */
const char *provision_moved(struct planner *pl, const struct step *s);
/* field n (0: uid, 1: version, 2: namespace, 3: management, 4: its packages in sync order, or "-"; 5: its
 * create.delete-timeout, absent from rows before it) of what the state keeps of a provision, or NULL */
const char *provision_field(const char *commit, int n);

/*
 * sync, the sync of a created cluster's Cluster (MGMT/cluster-NAME): may it
 * apply over what its management cluster has (capiowner.h; synced: this
 * state synced it before)?  0 (with
 * *note when up --adopt takes another's over), or -1 with *err: refused
 */
int provision_owner(const struct distro *d, const struct step *sync, int synced, const char **note, const char **err);

#endif
