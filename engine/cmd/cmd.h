/* cmd.h - what every command gets: the parsed options and the loaded distro */
#ifndef IDPMAKE_CMD_H
#define IDPMAKE_CMD_H

#include <stdio.h>

#include "run/ctx.h"
#include "graph/graph.h"
#include "graph/status.h"


/* the command table (main.c): a NULL help hides a command */
struct command {
	const char *name;
	int (*fn)(struct ctx *c);
	const char *usage;
	const char *help;
};

/* what drift there is in the selected packages' folders, for up and diff (cmd-up.c) */
struct json_t;
int show_drift(struct ctx *c, int fetch, FILE *f, struct json_t *json);

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
