/* share.h - renders shared between clusters: equal keys render once a run (fleet.md) */
#ifndef IDPMAKE_SHARE_H
#define IDPMAKE_SHARE_H

#include "graph.h"
#include "render.h"

/*
 * Group the selected, dirty render steps by key: each step's `same` is
 * the first step of its group (NULL when it is alone).  Called by
 * plan_renders once the keys are known.
 */
void share_group(struct graph *g);
/* how many steps a group head stands for (1 when it is alone) */
size_t share_count(const struct step *head);
/*
 * Render s, or take the output of the step of its group that rendered:
 * the first step of a group to arrive renders, the others wait for it and
 * get its output, with `shared_from` set to its id.  render_step's
 * contract otherwise.
 */
int render_once(const struct render_ctx *rc, struct step *s, struct hash *output, const char **err);

#endif
