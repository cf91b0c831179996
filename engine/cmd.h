/* cmd.h - what every command gets: the parsed options and the loaded distro */
#ifndef IDPMAKE_CMD_H
#define IDPMAKE_CMD_H

#include <stdio.h>

#include "graph.h"
#include "plan.h"
#include "state.h"
#include "status.h"

struct ctx {
	/* options */
	const char *file;		/* -f, default distro.yaml */
	const char *statedir;		/* --state / IDPMAKE_STATE, default .idpmake beside the distro */
	int jobs, keep_going, dry_run, json, verbose, wait, refresh, prune, exit_code;
	int overwrite;			/* up --overwrite: replace the targets' folders' changes made outside idpmake */
	enum color_mode color;
	struct strlist labels;		/* -l */
	const char *format;		/* graph --format */
	const char *outdir;		/* render -o */
	char **targets;			/* operands after the command */
	size_t ntargets;
	const char *command;		/* the command name */
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

int cmd_up(struct ctx *c);
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
int cmd_distros(struct ctx *c);	/* cmd-distros.c */

#endif
