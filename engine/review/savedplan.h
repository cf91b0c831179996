/* savedplan.h - `plan -o FILE` and `up --plan FILE`: a plan approved, then run exactly */
#ifndef IDPMAKE_SAVEDPLAN_H
#define IDPMAKE_SAVEDPLAN_H

#include <jansson.h>
#include <stddef.h>

struct ctx;

/*
 * A saved plan's text (hostile: a CI artifact anyone may have edited): its
 * document, when it is a plan of this format whose fields have the types
 * savedplan.c reads; else NULL with *why ("LINE:COL: ..." for bad JSON).
 */
json_t *savedplan_parse(const char *text, size_t len, const char **why);

/* plan -o FILE, after plan_renders: render what would render, predict the rest, save; the exit code */
int savedplan_write(struct ctx *c);
/* up --plan FILE, before ctx_load: take the plan's targets and labels; 0, or 2 */
int savedplan_targets(struct ctx *c);
/*
 * up --plan FILE, after plan_renders and under the state lock: 0 when this
 * run is the plan (its renders are then done, bound to the plan's output
 * hashes, and recorded); 2 naming the first difference; 1 when a render
 * failed.  Nothing is pushed or synced before it returns 0.
 */
int savedplan_check(struct ctx *c);

#endif
