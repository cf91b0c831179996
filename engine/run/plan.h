/* plan.h - keys, and the decision of which steps run (engine.md "Keys") */
#ifndef IDPMAKE_PLAN_H
#define IDPMAKE_PLAN_H

#include "git/gitops.h"
#include "graph/graph.h"
#include "base/hash.h"
#include "render/planner.h"
#include "render/render.h"
#include "graph/state.h"

/* scan and key every selected render step; -1 after an error */
int plan_renders(struct planner *pl);
/*
 * Decide a step other than render whose in-steps are finished (or, in a
 * dry run, predicted): compute its key and set dirty/reason/why.
 */
void plan_decide(struct planner *pl, struct step *s);
/* the push's changes: package folders whose rendered output differs from the repository */
int plan_push_changes(struct planner *pl, struct gitops_change **v, size_t *n, struct pushed **np);
/* the full named inputs of a step now, for explain and the state */
int plan_inputs(struct planner *pl, struct step *s, struct inputs *in);
/* the reason words of a step: "never run", "values.yaml changed", ... */
const char *reason_text(const struct step *s);
/* the input named by an entry of step.changed ("a/b.yaml changed" -> "a/b.yaml") */
const char *changed_name(const char *entry);
/* the key of a sync step, from its render's output (also a hook input) */
struct hash sync_key(struct planner *pl, struct step *sync, struct hash output);

#endif
