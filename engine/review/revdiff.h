/* revdiff.h - `diff --rev A..B`: the renders of two revisions of the distro's git repository */
#ifndef IDPMAKE_REVDIFF_H
#define IDPMAKE_REVDIFF_H

#include "run/plan.h"

struct ctx;

/* diff --rev: print the rendered difference; 0, 1 (--exit-code and differences, or a failed render), 2 */
int cmd_diff_rev(struct ctx *c);

/*
 * The output of render step s without recording anything in the state:
 * the state's output when the step is up to date, else the one a render of
 * the same key left in STATE/cache/keys, else a render into the cache
 * (render_step), remembered there by key.  -1 after printing the failure.
 */
int render_output(struct planner *pl, struct step *s, struct hash *out);

#endif
