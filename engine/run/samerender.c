/*
 * samerender.c - what would run if no render changed its output
 * (samerender.h).
 *
 * The prediction is plan's own (plan_decide in dry run), over a graph in
 * which each render still to run is taken as done with its recorded
 * output: a sync, a hook, a wave gate that is dirty then is dirty for a
 * reason of its own (never synced, its Application spec changed, its
 * cluster made again, drift...), and runs whatever the render gives.  The
 * whole graph is copied before and put back after, so the callers' own
 * decisions are as they left them.
 */
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "run/samerender.h"

void samerender_begin(struct planner *pl, struct samerender *sr)
{
	struct graph *g = pl->g;

	sr->saved = xcalloc(g->nsteps + 1, sizeof(*sr->saved));
	sr->dry_run = pl->dry_run;
	pl->dry_run = 1;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		sr->saved[i] = *s;
		if (s->kind != STEP_RENDER || !s->selected || !s->dirty || s->state == S_DONE || hash_zero(s->old_output))
			continue;
		s->dirty = 0;
		s->output = s->old_output;
	}
}

void samerender_end(struct planner *pl, struct samerender *sr)
{
	struct graph *g = pl->g;

	for (size_t i = 0; i < g->nsteps; i++)
		*g->steps[i] = sr->saved[i];
	pl->dry_run = sr->dry_run;
	free(sr->saved);
	sr->saved = NULL;
}
