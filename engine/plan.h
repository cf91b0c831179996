/* plan.h - keys, and the decision of which steps run (engine.md "Keys") */
#ifndef IDPMAKE_PLAN_H
#define IDPMAKE_PLAN_H

#include "gitops.h"
#include "graph.h"
#include "hash.h"
#include "render.h"
#include "state.h"

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
};

/* scan and key every selected render step; -1 after an error */
int plan_renders(struct planner *pl);
/*
 * Decide a step other than render whose in-steps are finished (or, in a
 * dry run, predicted): compute its key and set dirty/reason/why.
 */
void plan_decide(struct planner *pl, struct step *s);
/*
 * The last step of a decision: s->key against the last success's record:
 * never run, key changed (s->why = why_changed), failed before, or up to date.
 */
void plan_compare(struct step *s, const struct record *rec, const char *why_changed);
/* the push's changes: package folders whose rendered output differs from the repository */
int plan_push_changes(struct planner *pl, struct gitops_change **v, size_t *n, struct pushed **np);
/* the full named inputs of a step now, for explain and the state */
int plan_inputs(struct planner *pl, struct step *s, struct inputs *in);
/* the reason words of a step: "never run", "values.yaml changed", ... */
const char *reason_text(const struct step *s);
/* the state's key for what the GitOps remote and branch hold in a folder */
const char *pushed_key(const struct planner *pl, const char *path);
/* the input named by an entry of step.changed ("a/b.yaml changed" -> "a/b.yaml") */
const char *changed_name(const char *entry);
/* the key of a sync step, from its render's output (also a hook input) */
struct hash sync_key(struct planner *pl, struct step *sync, struct hash output);
/* the render step of the package a step belongs to */
struct step *render_of(struct step *s);

#endif
