/*
 * orphans.h - what a run removes of packages and clusters gone from the
 * distro: their folders in the GitOps repository (the push removes them)
 * and their Applications (up --prune deletes them, up leaves them).  One
 * source for up and plan, so the two cannot disagree.
 */
#ifndef IDPMAKE_ORPHANS_H
#define IDPMAKE_ORPHANS_H

#include <stdio.h>

#include "render/planner.h"

struct ctx;

/*
 * A folder the remote and branch hold that no package of the distro writes
 * any more.  While an Application of the removed package still names it
 * (its sync step is in the state), the push keeps it: Argo CD would find
 * its path gone ("app path does not exist", a ComparisonError) until the
 * Application is pruned.  up --prune deletes that Application before the
 * push (cmd-up.c), which then removes the folder.
 */
struct orphan_folder {
	const char *folder;		/* path in the repository */
	const char *key;		/* the state's pushed key (pushed_key) */
	const char *target;		/* CLUSTER/PACKAGE that wrote it, as the state recalls; NULL: unknown */
	const char *why;		/* "package no longer in the distro", ... */
	const char *app;		/* the Application of a removed package that names it, or NULL */
	int kept;			/* the push keeps it: that Application is not deleted first */
};

/* an Application of a package the state synced and the distro no longer holds */
struct orphan_app {
	const char *app;		/* the Application's name */
	const char *cluster, *package;
	const char *prefix;		/* the state's step ids of the package: "CLUSTER/PACKAGE:" */
	const char *why;		/* "package no longer in the distro", ... */
	const char *in_use;		/* the name is now that of this CLUSTER/PACKAGE's Application: never deleted; or NULL */
};

/* a cluster idpmake registered (its CLUSTER:register step is in the state) that the graph no longer registers */
struct orphan_cluster {
	const char *name;
	const char *id;			/* the state's step id, CLUSTER:register */
	int still_named;		/* named in the distro without register: (stays in Argo CD) */
};

/* the folders no package writes, those the push removes and those it keeps (plan_push_changes takes the first); their number */
size_t orphan_folders(struct planner *pl, struct orphan_folder **v);
/* the Applications of sync steps the state records and the graph no longer holds; their number */
size_t orphan_apps(const struct distro *d, const struct graph *g, struct state *st, struct orphan_app **v);

/* the clusters up --prune unregisters (or, still named, forgets having registered); their number */
size_t orphan_clusters(const struct distro *d, const struct graph *g, struct state *st, struct orphan_cluster **v);

/* a created cluster gone from the distro: its CLUSTER:provision row is in the state, the graph has no such step */
struct capi_gone {
	const char *name;		/* the cluster */
	const char *mgmt;		/* its management cluster, as the state recalls (the Cluster's sync), or NULL */
	const char *app;		/* the Application MGMT-cluster-NAME that holds its Cluster, or NULL */
};

/* those clusters; their number */
size_t capi_gone(struct ctx *c, struct capi_gone **v);
/*
 * Is CLUSTER/PACKAGE (a state's step) one of those n clusters (a package of
 * it, or its Cluster on the management cluster)?  Then only capi_prune
 * deletes it, in order, and plain --prune never does.
 */
int capi_gone_holds(const struct capi_gone *v, size_t n, const char *cluster, const char *package);
/* what plan counts */
struct orphan_counts {
	int remove;			/* folders the push removes */
	int kept;			/* folders it keeps while their Applications are left */
	int del, leave;			/* Applications deleted (--prune), left behind */
	int unregister, keep;		/* clusters unregistered (--prune), left registered */
	int kind_del, kind_leave;	/* kind clusters idpmake made, gone from the distro: deleted
					 * (--prune --delete-clusters), left (or refused: --prune alone) */
};

struct ctx;
struct json_t;
/*
 * plan: what the run removes, printed on `f` and put in `json`'s
 * "removals", "applications", "clusters" and "kind_clusters" arrays (each
 * when not NULL): the folders, and the Applications deleted and clusters
 * unregistered with --prune or left behind without it, as up decides
 * (`apps`: up would talk to Argo CD and the selection is the whole
 * distro), and the kind clusters idpmake made that the distro no longer
 * makes (the whole distro selected: kindcluster_prune).
 */
struct orphan_counts orphans_show(struct ctx *c, int apps, FILE *f, struct json_t *json);
/* the summary's words for them ("; 1 folder to remove, 1 Application left behind"), "" when none */
const char *orphans_summary(struct orphan_counts n);

#endif
