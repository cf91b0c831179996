/*
 * rollout.c - the gate of a wave (fleet.md "Waves").
 *
 * graph.c puts a step wave:NAME after every package of the wave's clusters
 * and before every package of the next wave's, so no Application of a later
 * wave is synced before the gate passed.  The gate passes when:
 *
 *   1. every sync of the wave that ran succeeded, which already means
 *      "Synced at this run's commit (or a newer push) AND Healthy"
 *      (argocd.c's wait), never health alone;
 *   2. after `bake` seconds, each of them still is (ops->verify: one GET
 *      per Application, with a refresh);
 *   3. the wave's `check` exited 0 (/bin/sh -c in the distro's folder, with
 *      IDPMAKE_WAVE, IDPMAKE_WAVE_CLUSTERS and IDPMAKE_COMMIT).
 *
 * Its key covers the wave's definition and the keys of the wave's steps, so
 * a run that changed nothing in a wave passes its gate without waiting, and
 * a halted rollout resumes at the wave that halted.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "buf.h"
#include "exec.h"
#include "rollout.h"
#include "util.h"

const char *wave_clusters(const struct distro *d, const struct wave *w, const char *sep)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; i < d->nclusters; i++)
		if (d->clusters[i].wave == w)
			buf_addf(&b, "%s%s", b.len ? sep : "", d->clusters[i].name);
	r = astrdup(b.len ? b.s : "");
	buf_release(&b);
	return r;
}

/* does step s belong to wave w (one of its clusters' package steps)? */
static int in_wave(const struct step *s, const struct wave *w)
{
	return s->cluster && s->cluster->wave == w;
}

void wave_decide(struct planner *pl, struct step *s, const struct record *rec, int upstream)
{
	const struct wave *w = s->wave;
	struct hasher *h;

	if (!pl->argocd_server) {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = "skipped: no argocd configured";
		return;
	}
	h = hasher_new();
	hasher_adds(h, "wave");
	hasher_adds(h, w->name);
	hasher_add(h, &w->bake, sizeof(w->bake));
	hasher_adds(h, w->check ? w->check->run : "");
	for (size_t i = 0; i < s->nin; i++)
		if (in_wave(s->in[i], w)) {
			hasher_adds(h, s->in[i]->id);
			hasher_addh(h, s->in[i]->key);
		}
	s->key = hasher_end(h);
	if (upstream) {
		s->dirty = 1;
		s->reason = R_UPSTREAM;
		s->why = aprintf("if the syncs of its clusters (%s) run", wave_clusters(pl->g->d, w, ", "));
	} else if (!rec->have || hash_zero(rec->key)) {
		s->dirty = 1;
		s->reason = R_NEVER;
	} else if (!hash_eq(rec->key, s->key)) {
		s->dirty = 1;
		s->reason = R_KEY_CHANGED;
		s->why = "its clusters' steps or its definition changed";
	} else if (!rec->ok) {
		s->dirty = 1;
		s->reason = R_FAILED_BEFORE;
	} else {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
	}
}

static int bake(const struct step *s, const char **err)
{
	struct timespec tick = { 0, 100 * 1000000L };

	for (long i = 0; i < (long)s->wave->bake * 10; i++) {
		if (build_interrupted)
			return *err = "interrupted while baking", -1;
		nanosleep(&tick, NULL);
	}
	return 0;
}

static int run_check(struct planner *pl, struct step *s, const char *commit, const char **err)
{
	struct strvec env = STRVEC_INIT;
	const char *argv[] = { "/bin/sh", "-c", s->hook->run, NULL };
	struct proc p = { 0 };
	int r;

	proc_env_base(&env);	/* the allowlist: no credential reaches a check */
	strvec_pushf(&env, "IDPMAKE_WAVE=%s", s->wave->name);
	strvec_pushf(&env, "IDPMAKE_WAVE_CLUSTERS=%s", wave_clusters(pl->g->d, s->wave, " "));
	strvec_pushf(&env, "IDPMAKE_COMMIT=%s", commit ? commit : "");
	p.argv = argv;
	p.cwd = s->hook->dir;
	p.env = env.v;
	p.log = s->log;
	p.timeout = s->hook->timeout;
	r = proc_run(&p);
	if (r < 0)
		*err = p.timed_out ? aprintf("check timed out after %d s", s->hook->timeout) :
		       p.spawn_errno ? proc_failure(&p) : aprintf("check exited with status %d", p.status);
	strvec_clear(&env);
	return r;
}

int wave_run(struct planner *pl, struct step *s, const char *commit, const struct sync_ops *ops, const char **err)
{
	const struct wave *w = s->wave;
	const char *why = NULL;

	if (w->bake > 0 && bake(s, &why) < 0)
		return *err = aprintf("wave '%s': %s", w->name, why), -1;
	if (w->bake > 0 && ops && ops->verify)
		for (size_t i = 0; i < pl->g->nsteps; i++) {
			struct step *y = pl->g->steps[i];
			if (y->kind != STEP_SYNC || !y->selected || !in_wave(y, w) || y->state != S_DONE)
				continue;
			if (ops->verify(ops->ctx, y, commit, &why) < 0)
				return *err = aprintf("wave '%s': %s after %d s of bake: %s", w->name, y->id, w->bake, why), -1;
		}
	if (s->hook && run_check(pl, s, commit, &why) < 0)
		return *err = aprintf("wave '%s': %s", w->name, why), -1;
	return 0;
}
