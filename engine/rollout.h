/* rollout.h - the gate of each wave of a rollout (fleet.md "Waves") */
#ifndef IDPMAKE_ROLLOUT_H
#define IDPMAKE_ROLLOUT_H

#include "build.h"
#include "plan.h"

/* decide a wave:NAME step whose in-steps are finished (plan_decide's contract) */
void wave_decide(struct planner *pl, struct step *s, const struct record *rec, int upstream);
/*
 * Run a wave's gate: wait `bake` seconds, check again that every
 * Application of the wave that this run syncs is at `commit` (or newer)
 * and Healthy (ops->verify), then run the wave's `check`.  0, or -1 with
 * *err naming the wave and what failed.
 */
int wave_run(struct planner *pl, struct step *s, const char *commit, const struct sync_ops *ops, const char **err);
/* the wave's clusters, comma-separated (arena) */
const char *wave_clusters(const struct distro *d, const struct wave *w, const char *sep);

#endif
