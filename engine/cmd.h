/* cmd.h - what every command gets: the parsed options and the loaded distro */
#ifndef IDPMAKE_CMD_H
#define IDPMAKE_CMD_H

#include <stdio.h>

#include "graph.h"
#include "planner.h"
#include "state.h"
#include "status.h"

struct ctx;
struct option;

/* the command table (main.c): a NULL help hides a command */
struct command {
	const char *name;
	int (*fn)(struct ctx *c);
	const char *usage;
	const char *help;
};

struct ctx {
	/* options */
	const char *file;		/* -f, default distro.yaml */
	const char *statedir;		/* --state / IDPMAKE_STATE, default .idpmake beside the distro */
	int jobs, keep_going, dry_run, json, verbose, wait, refresh, prune, exit_code;
	int promote;			/* promote: move cloned clusters to the current render */
	int overwrite;			/* up --overwrite: replace the targets' folders' changes made outside idpmake */
	int adopt;			/* up --adopt: take over what another distro (or no idpmake) made in Argo CD (owner.h) */
	int all;			/* forget --all: remove the whole state database */
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
const char *argocd_server(const struct distro *d);

/* the GitOps repository's options for a loaded distro */
struct gitops_opts ctx_gitops(const struct ctx *c);
/* plan and diff: print the selected folders changed outside idpmake (into `json` when not NULL); their number, -1 */
struct json_t;
int show_drift(struct ctx *c, int fetch, FILE *f, struct json_t *json);

/* does up delete (--prune) or report the Applications of packages gone from the distro? */
int orphan_apps_apply(const struct ctx *c);

/* render a step for render and diff (no state change): 0, or -1 after printing why */
struct bundle;
int render_one(struct ctx *c, struct step *s, struct bundle *b);
/* does s's render differ from its folder in the GitOps repository? 1, 0, or -1 (cmd-render.c) */
int render_differs_from_gitops(struct ctx *c, struct step *s);

int cmd_up(struct ctx *c);
int cmd_promote(struct ctx *c);
int cmd_plan(struct ctx *c);
int cmd_explain(struct ctx *c);
int cmd_graph(struct ctx *c);
int cmd_render(struct ctx *c);
int cmd_diff(struct ctx *c);
int cmd_validate(struct ctx *c);
int cmd_status(struct ctx *c);
int cmd_log(struct ctx *c);
int cmd_forget(struct ctx *c);
int cmd_init(struct ctx *c);
int cmd_version(struct ctx *c);
int cmd_context(struct ctx *c);
int cmd_completion(struct ctx *c);
int cmd_complete(struct ctx *c);		/* __complete: names for the completion scripts */
int cmd_distros(struct ctx *c);	/* cmd-distros.c */

#endif
