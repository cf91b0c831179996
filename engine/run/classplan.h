/*
 * classplan.h - the planning of a class package's render on its management
 * cluster (render/capiclass.h): which earlier revisions it keeps, and when
 * it must render again to drop one (classplan.c).
 */
#ifndef IDPMAKE_CLASSPLAN_H
#define IDPMAKE_CLASSPLAN_H

#include "base/hash.h"
#include "graph/state.h"
#include "render/planner.h"

/*
 * s, a render: is it a class package's there (the graph's mark, or the
 * state's row that it rendered as one: a Cluster being deleted still names
 * a revision); then its inputs (in), and s->class_keep
 */
void classplan_inputs(struct planner *pl, struct step *s, struct inputs *in);
/*
 * s, a class render up to date by its key (rec): does its last output hold
 * a revision no synced Cluster names any more?  1 (it runs: s->reason and
 * s->why say so) or 0
 */
int classplan_stale(struct planner *pl, struct step *s, const struct record *rec);
/* s, a class render: where its earlier revisions come from (s->class_from): its last output, else its folder's */
void classplan_from(struct planner *pl, struct step *s, const struct record *rec);
/*
 * once the remote's tip is read (remotekeys.c): a class render that runs
 * with no record of what its folder holds reads it there; one that still
 * has none refuses to drop what a Cluster may name (capiclass.c)
 */
void classplan_sources(struct planner *pl);
/*
 * The sync of Cluster render r (MGMT/cluster-NAME) starts: its row
 * MGMT/cluster-NAME:class names the class of the render and the one it
 * named before, so that both are kept whatever the sync leaves on the
 * cluster; on success (done) the new one alone.  0, or -1 (the state).
 */
int classplan_cluster_sync(struct planner *pl, const struct step *sync, int done);

#endif
