/*
 * orphans.h - what a run removes of packages and clusters gone from the
 * distro: their folders in the GitOps repository (the push removes them)
 * and their Applications (up --prune deletes them, up leaves them).  One
 * source for up and plan, so the two cannot disagree.
 */
#ifndef IDPMAKE_ORPHANS_H
#define IDPMAKE_ORPHANS_H

#include <stdio.h>

#include "plan.h"

/* a folder the remote and branch hold that no package of the distro writes any more */
struct orphan_folder {
	const char *folder;		/* path in the repository */
	const char *key;		/* the state's pushed key (pushed_key) */
	const char *target;		/* CLUSTER/PACKAGE that wrote it, as the state recalls; NULL: unknown */
	const char *why;		/* "package no longer in the distro", ... */
};

/* an Application of a package the state synced and the distro no longer holds */
struct orphan_app {
	const char *app;		/* the Application's name */
	const char *cluster, *package;
	const char *prefix;		/* the state's step ids of the package: "CLUSTER/PACKAGE:" */
	const char *why;		/* "package no longer in the distro", ... */
};

/* the folders the push removes (plan_push_changes takes them from here); their number */
size_t orphan_folders(struct planner *pl, struct orphan_folder **v);
/* the Applications of sync steps the state records and the graph no longer holds; their number */
size_t orphan_apps(const struct distro *d, const struct graph *g, struct state *st, struct orphan_app **v);

struct ctx;
struct json_t;
/*
 * plan: what the run removes, printed on `f` and put in `json`'s
 * "removals" and "applications" arrays (each when not NULL): the folders,
 * and the Applications
 * deleted with --prune or left behind without it, as up decides
 * (`apps`: up would talk to Argo CD and the selection is the whole
 * distro).  *nremove: folders; *ndelete: Applications deleted; *nleave:
 * Applications left behind.
 */
void orphans_show(struct ctx *c, int apps, FILE *f, struct json_t *json, int *nremove, int *ndelete, int *nleave);
/* the summary's words for them ("; 1 folder to remove, 1 Application left behind"), "" when none */
const char *orphans_summary(int nremove, int ndelete, int nleave);

#endif
