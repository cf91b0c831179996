/* ctx.h - what every command gets: the parsed options and the loaded distro, graph and state (ctx.c) */
#ifndef IDPMAKE_CTX_H
#define IDPMAKE_CTX_H

#include "git/gitops.h"
#include "graph/graph.h"
#include "render/planner.h"
#include "graph/state.h"
#include "graph/status.h"

struct command;
struct option;

struct ctx {
	/* options */
	const char *file;		/* -f, default distro.yaml */
	const char *statedir;		/* --state / IDPMAKE_STATE, default .idpmake beside the distro */
	int jobs, keep_going, dry_run, json, verbose, wait, refresh, prune, exit_code;
	int promote;			/* promote: move cloned clusters to the current render */
	int overwrite;			/* up --overwrite: replace the targets' folders' changes made outside idpmake */
	int delete_clusters;		/* up --prune --delete-clusters: kind clusters gone from the distro are deleted */
	int adopt;			/* up --adopt: take over what another distro (or no idpmake) made in Argo CD (owner.h) */
	int all;			/* forget --all: remove the whole state database */
	int packages;			/* graph --packages: one node per package */
	enum color_mode color;
	struct strlist labels;		/* -l */
	const char *format;		/* graph --format */
	const char *outdir;		/* render -o DIR; diff -o FILE; plan -o FILE (a saved plan) */
	int live;			/* diff --live */
	int no_rules;			/* diff --rev --no-rules: only idpmake's built-in renderers run */
	const char *from;		/* diff --from FILE */
	const char *rev;		/* diff --rev A..B (revdiff.c) */
	const char *plan_file;		/* up --plan FILE (savedplan.c) */
	const char *bundle;		/* --bundle FILE, or -f naming an archive: run from `idpmake pack`'s archive (pack.h) */
	char **targets;			/* operands after the command */
	size_t ntargets;
	const char *command;		/* the command name */
	const char *context;		/* --context NAME (context.h) */
	const char *kube_context;	/* --kube-context NAME (kubectl.h) */
	const struct command *commands;	/* main.c's tables, for completion */
	size_t ncommands;
	const struct option *options;
	const char *shortopts;
	/* loaded by ctx_load */
	struct distro *d;
	struct graph *g;
	struct state *st;
	struct planner pl;
};

/* load the distro, build and select the graph, open the state: 0, or the exit code */
int ctx_load(struct ctx *c, int readonly);
/* steps selected, and the argocd server in force */

/* the GitOps repository's options for a loaded distro */
/* the GitOps repository the run pushes to, as gitops.h takes it */
struct gitops_opts ctx_gitops(const struct ctx *c);
/* plan and diff: print the selected folders changed outside idpmake (into `json` when not NULL); their number, -1 */

/* does up delete (--prune) or report the Applications of packages gone from the distro? */
/* does up handle the Applications of packages gone from the distro (prune_apps)? */
int orphan_apps_apply(const struct ctx *c);
/* does the selection talk to Argo CD?  Not when it is only deploy: kubectl packages */
int ctx_needs_argocd(const struct ctx *c);

/* render a step for render and diff (no state change): 0, or -1 after printing why */
struct bundle;
int render_one(struct ctx *c, struct step *s, struct bundle *b);
/* does s's render differ from its folder in the GitOps repository? 1, 0, or -1 (cmd-render.c) */
int render_differs_from_gitops(struct ctx *c, struct step *s);

#endif
