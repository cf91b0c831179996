/* cmd.h - what every command gets: the parsed options and the loaded distro */
#ifndef IDPMAKE_CMD_H
#define IDPMAKE_CMD_H

#include <stdio.h>

#include "run/ctx.h"
#include "graph/graph.h"
#include "graph/status.h"


/*
 * The command table (main.c): a NULL help hides a command.  `idpmake CMD
 * --help`, `idpmake --help`, the completion scripts (cmd-complete.c) and
 * the man page's SYNOPSIS (checked by tests/e2e/t8401-help.sh) all come
 * from it and from main.c's option table.
 */
enum {
	CMD_JSON = 1,		/* --json: machine-readable output */
	CMD_OWN_OPTS = 2,	/* reads its own options after the command word */
};
struct command {
	const char *name;
	int (*fn)(struct ctx *c);
	const char *usage;	/* synopsis lines after "idpmake [OPTIONS] ", '\n'-separated */
	const char *help;
	int flags;
	const char *examples;	/* '\n'-separated "COMMAND LINE  # what it does" */
};

/* main.c's option table: the spelling, what it does, the commands it is for (NULL: every command) */
struct option_help {
	const char *spelling;
	const char *help;
	const char *commands;	/* space-separated */
};

/* what drift there is in the selected packages' folders, for up and diff (cmd-up.c) */
struct json_t;
int show_drift(struct ctx *c, int fetch, FILE *f, struct json_t *json);
/* cmd-up.c's, for plan (cmd-plan.c): the relay note, --refresh's drift from Argo CD, insecure's warning */
void relayed_note(const struct ctx *c);
void find_drift(struct ctx *c, struct argocd *a);
void warn_insecure(const struct distro *d);

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
int cmd_secrets(struct ctx *c);	/* cmd-secrets.c */

#endif
