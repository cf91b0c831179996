/* kindcluster.h - the step CLUSTER:kind: a local kind cluster idpmake makes (create.kind, kindcluster.c) */
#ifndef IDPMAKE_KINDCLUSTER_H
#define IDPMAKE_KINDCLUSTER_H

#include "render/planner.h"

/* up --adopt: a kind cluster of that name that this state never made is taken on, not refused */
void kindcluster_set_adopt(int adopt);

/*
 * Before anything runs: kind is needed (a selected CLUSTER:kind step has
 * no success recorded with this key) and is not on PATH.  The message
 * (how to install it), or NULL.
 */
const char *kindcluster_missing_tool(struct planner *pl);

/*
 * Decide CLUSTER:kind (plan_decide's contract).  The key covers the kind
 * cluster's name, node image and host port.  Up to date when the state
 * recorded a success with that key and `kind get clusters` lists the
 * cluster (one child a run, none without kind on PATH, where the record
 * is trusted); a recorded cluster that is gone is made again (and every
 * step of it runs again: its output, the incarnation, is new).
 */
void kindcluster_decide(struct planner *pl, struct step *s, const struct record *rec);

/*
 * Run CLUSTER:kind: `kind create cluster --name NAME --config STATE/kind/NAME.yaml`
 * when the cluster is absent (the attempt recorded first, so that a run
 * interrupted during it takes the cluster on next time, never makes a
 * second); a cluster that exists is taken on when this state made it (or
 * tried to), or with up --adopt, and refused otherwise; made for another
 * CLUSTER:kind step (a cluster renamed) or by a killed run, only when that
 * step's recorded key (or the config the run wrote) has this image and
 * host port.  *output is its
 * incarnation (new when it was made or taken on).  0, or -1 with *err.
 */
int kindcluster_run(struct planner *pl, struct step *s, struct hash *output, const char **err);

/* `kind delete cluster --name NAME` (up --prune --delete-clusters): 0, or -1 with *err */
int kindcluster_delete(const char *name, const char **err);

/* a kind cluster this state made that the distro no longer makes (its CLUSTER:kind row, no such step now) */
struct kind_orphan {
	const char *id;			/* the state's step id, CLUSTER:kind */
	const char *kind;		/* the kind cluster's name */
	const char *in_use;		/* the distro still uses it: how (never deleted), or NULL */
};
size_t kindcluster_orphans(struct planner *pl, struct kind_orphan **v);	/* *v in the arena */

/*
 * up, the whole distro selected: each orphan is said; with --prune and
 * --delete-clusters it is deleted (kind delete cluster) and forgotten; with
 * --prune alone that is refused, naming it.  The number refused or failed.
 */
int kindcluster_prune(struct planner *pl, int prune, int delete_clusters);

/* is kind cluster `name` there?  1, 0, or -1 (kind cannot say: *err) */
int kindcluster_exists(const char *name, const char **err);

#endif
