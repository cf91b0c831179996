/* rollout.h - the gate of each wave of a rollout (fleet.md "Waves") */
#ifndef IDPMAKE_ROLLOUT_H
#define IDPMAKE_ROLLOUT_H

#include <jansson.h>
#include <stdio.h>

#include "run/build.h"
#include "render/planner.h"

/* decide a wave:NAME step whose in-steps are finished (plan_decide's contract) */
void wave_decide(struct planner *pl, struct step *s, const struct record *rec, int upstream);
/*
 * Run a wave's gate: for `bake` seconds, watch that every Application of
 * the wave that this run syncs stays at `commit` (or newer) and Healthy
 * (ops->verify every ops->poll_ms, and once more with a refresh at the
 * end), then run the wave's `check`.  0, or -1 with *err naming the wave
 * and what failed (at once when an Application left that state and
 * max-failed does not tolerate its cluster).
 */
int wave_run(struct planner *pl, struct step *s, const char *commit, const struct sync_ops *ops, const char **err);
/*
 * The scheduler's bookkeeping for max-parallel and max-failed (build.c,
 * its thread only): begin with the selected steps, then tell it what
 * starts and finishes.
 */
void rollout_begin(struct graph *g);
void rollout_end(void);
int rollout_may_start(const struct step *s);	/* 0: its wave has max-parallel clusters busy */
void rollout_started(const struct step *s);
int rollout_finished(const struct step *s, int failed);	/* 1: a cluster finished (a slot freed) */
int rollout_judged(const struct step *s);	/* a failure of s is judged by its wave's gate (max-failed), not by -k */
int rollout_wave_failed(const struct wave *w);
/* do this run's failed clusters of w, plus those marked in bad[cluster index], fit max-failed?
 * (the gate's worker, once all of w's steps finished) */
int rollout_tolerates(const struct wave *w, const char *bad);	/* failed clusters of the wave this run */
const char *rollout_halt(const struct wave *w);	/* NULL, or why the wave halts (arena) */
/* plan: the waves and their clusters, and a warning for clusters no wave names */
void rollout_print(const struct distro *d, FILE *f);
json_t *rollout_json(const struct distro *d);	/* [] without rollout */
/* the wave's clusters, comma-separated (arena) */
const char *wave_clusters(const struct distro *d, const struct wave *w, const char *sep);

#endif
