/*
 * planner.h - the planner's shared pieces, below plan.c: struct planner and
 * the small helpers the modules plan.c calls (register.c, rollout.c,
 * orphans.c, scan.c, lazycache.c, remotekeys.c, remotesync.c, argospec.c)
 * need back, so that none of them depends on plan.c (planner.c).
 */
#ifndef IDPMAKE_PLANNER_H
#define IDPMAKE_PLANNER_H

#include "graph/graph.h"
#include "base/hash.h"
#include "render/render.h"
#include "graph/state.h"

struct gitops_opts;

struct planner {
	struct graph *g;
	struct state *st;
	const char *statedir;
	long long run_start;		/* wall ns; files newer are racy */
	int dry_run;			/* plan: predict, execute nothing */
	int refresh;			/* --refresh: ask the remotes for drift */
	struct render_ctx rc;
	const char *argocd_server;	/* resolved server, NULL: no Argo CD */
	int jobs;			/* -j: threads for scanning */
	int promote;			/* promote: cloned clusters' selected renders move to the current one */
	const struct gitops_opts *reconstruct;	/* up: what this state never recorded may be proven
						   done from the GitOps repository (remotekeys.h), or NULL */
	struct argocd *argo;		/* and from this Argo CD, or NULL */
	const char *repo_url;		/* sync_key's memo of argocd_repo_url, or NULL */
	const char **class_ids;		/* the state's rows of ClusterClass revisions (capiclass.h), sorted, */
	size_t nclass_ids;		/* read once a plan (plan.c) */
	int class_ids_read;
	int prune_first;		/* up --prune of the whole distro with Argo CD: the Applications of removed
					   packages are deleted before the push, which then removes their folders
					   (orphans.h); 0 once they were */
};

/* the render step of the package a step belongs to */
struct step *render_of(struct step *s);
/*
 * The last step of a decision: s->key against the last success's record:
 * never run, key changed (s->why = why_changed), failed before, or up to date.
 */
void plan_compare(struct step *s, const struct record *rec, const char *why_changed);
/* the state's key for what the GitOps remote and branch hold in a folder */
const char *pushed_key(const struct planner *pl, const char *path);
/* the content hash of the file at path, through the state's stat cache; 0, or -1 (said) */
int planner_file_hash(struct planner *pl, const char *path, struct hash *h);

#endif
