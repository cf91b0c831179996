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
 *   2. each of them stays so for `bake` seconds: the gate watches them
 *      on the run's watch stream (ops->watch), or polls them without one
 *      (ops->verify, one GET per Application every ops->poll_ms), and
 *      looks once more with a refresh when the bake ends; one that left
 *      "at the commit and Healthy" counts its cluster failed, and more
 *      failed clusters than max-failed fail the gate at once;
 *   3. the wave's `check` exited 0 (/bin/sh -c in the distro's folder, with
 *      IDPMAKE_WAVE, IDPMAKE_WAVE_CLUSTERS and IDPMAKE_COMMIT).
 *
 * Its key covers the wave's definition and the keys of the wave's steps, so
 * a run that changed nothing in a wave passes its gate without waiting, and
 * a halted rollout resumes at the wave that halted.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/buf.h"
#include "base/exec.h"
#include "run/hook.h"
#include "run/hookscript.h"
#include "run/plan.h"
#include "distro/fleet.h"
#include "run/rollout.h"
#include "base/util.h"

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
	return s->cluster && step_cluster(s)->wave == w;
}

void wave_decide(struct planner *pl, struct step *s, const struct record *rec, int upstream)
{
	const struct wave *w = s->wave;
	struct hasher *h;
	int mine = 0;

	for (size_t i = 0; i < s->nin; i++)
		mine |= in_wave(s->in[i], w) && s->in[i]->selected;
	if (!mine && w->nclusters) {
		/* -l or targets left out all of its clusters (select.c): it only keeps the order */
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = "none of its clusters is selected";
		return;
	}
	if (rollout_wave_failed(w)) {
		/* judged on this run's failures, Argo CD or not */
		s->dirty = 1;
		s->reason = R_UPSTREAM;
		s->why = aprintf("%d of its clusters failed", rollout_wave_failed(w));
		return;
	}
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
	if (w->check) {
		int err = 0;	/* a missing input: the check fails when it runs */
		plan_hook_hash(pl, w->check, h, &err);
	} else {
		hasher_adds(h, "");
	}
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
	} else {
		plan_compare(s, rec, "its clusters' steps or its definition changed");
	}
}

/* ms since t0 */
static long since(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000L + (t.tv_nsec - t0->tv_nsec) / 1000000L;
}

/* the wave's sync steps that ran (the bake watches them) */
static int baked(const struct step *y, const struct wave *w)
{
	return y->kind == STEP_SYNC && y->selected && in_wave(y, w) && y->state == S_DONE;
}

/*
 * One look at sync step y of the wave: an Application no longer at the
 * commit and Healthy marks its cluster bad (bad[cluster index]); more bad
 * clusters than max-failed allows halts the gate: -1 with *err naming the
 * Application and what it became.
 */
static int look_one(struct planner *pl, const struct step *s, struct step *y, const char *commit,
		    const struct sync_ops *ops, int refresh, long ms, char *bad, const char **err)
{
	const struct wave *w = s->wave;
	size_t c = (size_t)(y->cluster - pl->g->d->clusters);
	const char *why;

	if (bad[c] || ops->verify(ops->ctx, y, commit, refresh, &why) == 0)
		return 0;
	bad[c] = 1;
	why = refresh ? aprintf("%s after %d s of bake: %s", y->id, w->bake, why)
		      : aprintf("%s %.1f s into the bake of %d s: %s", y->id, ms / 1000.0, w->bake, why);
	if (!rollout_tolerates(w, bad))
		return *err = why, -1;
	warn("wave '%s': %s (max-failed %d%s tolerates it)", w->name, why, w->max_failed, w->max_failed_pct ? "%" : "");
	return 0;
}

/* one look at each of the n steps */
static int look(struct planner *pl, const struct step *s, struct step **v, size_t n, const char *commit,
		const struct sync_ops *ops, int refresh, long ms, char *bad, const char **err)
{
	for (size_t i = 0; i < n; i++)
		if (look_one(pl, s, v[i], commit, ops, refresh, ms, bad, err) < 0)
			return -1;
	return 0;
}

/*
 * The bake, for `bake` seconds, then one last look at every Application
 * with a refresh.  On the run's watch stream (ops->watch) it looks (one GET)
 * only at an Application whose streamed state may have left "at the commit
 * and Healthy", so a quiet bake asks Argo CD nothing until its last look;
 * without a stream, one GET per Application every ops->poll_ms (look
 * without a refresh: Argo CD's own view).  Fails as soon as the
 * Applications that left are more clusters than max-failed allows.
 */
static int bake(struct planner *pl, const struct step *s, const char *commit, const struct sync_ops *ops,
		const char **err)
{
	const long total = s->wave->bake * 1000L, poll = ops && ops->verify && ops->poll_ms > 0 ? ops->poll_ms : 0;
	char *bad = xcalloc(pl->g->d->nclusters + 1, 1);
	struct step **v = xcalloc(pl->g->nsteps + 1, sizeof(*v));
	struct timespec t0, tick = { 0, 20 * 1000000L };
	long next = poll, ms;
	size_t n = 0, k;
	void *ws = NULL;
	int r = 0, watching = poll && ops->watch;

	for (size_t i = 0; i < pl->g->nsteps; i++)
		if (baked(pl->g->steps[i], s->wave))
			v[n++] = pl->g->steps[i];
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (r == 0 && (ms = since(&t0)) < total) {
		if (build_interrupted) {
			*err = "interrupted while baking", r = -1;
			break;
		}
		if (watching && n) {
			int got = ops->watch(ops->ctx, v, n, &ws, total - ms < 1000 ? total - ms : 1000, &k);
			if (got < 0)
				watching = 0, next = since(&t0);	/* no stream (warned): poll from now on */
			else if (got == 1)
				r = look_one(pl, s, v[k], commit, ops, 0, since(&t0), bad, err);
			continue;
		}
		if (poll && ms >= next) {
			r = look(pl, s, v, n, commit, ops, 0, ms, bad, err);
			next = since(&t0) + poll;
			continue;
		}
		nanosleep(&tick, NULL);
	}
	if (ws)
		ops->watch(ops->ctx, NULL, 0, &ws, 0, NULL);
	if (r == 0 && ops && ops->verify)
		r = look(pl, s, v, n, commit, ops, 1, total, bad, err);
	free(v);
	free(bad);
	return r;
}

static int run_check(struct planner *pl, struct step *s, const char *commit, const char **err)
{
	struct strvec env = STRVEC_INIT;
	int r;

	proc_env_base(&env);	/* the allowlist: no credential reaches a check */
	strvec_pushf(&env, "IDPMAKE_WAVE=%s", s->wave->name);
	strvec_pushf(&env, "IDPMAKE_WAVE_CLUSTERS=%s", wave_clusters(pl->g->d, s->wave, " "));
	strvec_pushf(&env, "IDPMAKE_COMMIT=%s", commit ? commit : "");
	r = hook_spawn(s, &env, "check", err);
	strvec_clear(&env);
	return r;
}

int wave_run(struct planner *pl, struct step *s, const char *commit, const struct sync_ops *ops, const char **err)
{
	const struct wave *w = s->wave;
	const char *why = NULL;

	if ((why = rollout_halt(w)))
		return *err = why, -1;

	if (w->bake > 0 && bake(pl, s, commit, ops, &why) < 0)
		return *err = aprintf("wave '%s': %s", w->name, why), -1;
	if (s->hook && run_check(pl, s, commit, &why) < 0)
		return *err = aprintf("wave '%s': %s", w->name, why), -1;
	return 0;
}

/*
 * The run's bookkeeping for max-parallel and max-failed, kept by the
 * scheduler's thread (build.c) and read by a gate's worker only after the
 * scheduler handed it the gate (through the job queue's lock).
 *
 * A cluster's steps here are its register, pre, sync and post steps (its
 * renders come before the push, outside any wave).  A cluster is active in
 * its wave from the start of its first step that runs until all its
 * selected steps finished; failed once any of them failed or was not run.
 */
static struct {
	const struct distro *d;
	int *left;		/* per cluster: selected steps not finished */
	char *begun, *failed;	/* per cluster */
	int *active, *nfailed;	/* per wave */
} ro;

static size_t ci(const struct cluster *c)
{
	return (size_t)(c - ro.d->clusters);
}

static size_t wi(const struct wave *w)
{
	return (size_t)(w - ro.d->waves);
}

static int counted(const struct step *s)
{
	return s->cluster && s->kind != STEP_RENDER;
}

void rollout_begin(struct graph *g)
{
	const struct distro *d = g->d;

	rollout_end();
	ro.d = d;
	ro.left = xcalloc(d->nclusters + 1, sizeof(*ro.left));
	ro.begun = xcalloc(d->nclusters + 1, 1);
	ro.failed = xcalloc(d->nclusters + 1, 1);
	ro.active = xcalloc(d->nwaves + 1, sizeof(*ro.active));
	ro.nfailed = xcalloc(d->nwaves + 1, sizeof(*ro.nfailed));
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->selected && counted(g->steps[i]))
			ro.left[ci(step_cluster(g->steps[i]))]++;
}

void rollout_end(void)
{
	free(ro.left);
	free(ro.begun);
	free(ro.failed);
	free(ro.active);
	free(ro.nfailed);
	memset(&ro, 0, sizeof(ro));
}

int rollout_may_start(const struct step *s)
{
	const struct wave *w;

	if (!ro.d || !counted(s) || ro.begun[ci(step_cluster(s))])
		return 1;
	w = step_cluster(s)->wave;
	return !w->max_parallel || ro.active[wi(w)] < w->max_parallel;
}

void rollout_started(const struct step *s)
{
	if (!ro.d || !counted(s) || ro.begun[ci(step_cluster(s))])
		return;
	ro.begun[ci(step_cluster(s))] = 1;
	if (ro.left[ci(step_cluster(s))] > 0)
		ro.active[wi(step_cluster(s)->wave)]++;
}

int rollout_finished(const struct step *s, int failed)
{
	size_t c;

	if (!ro.d || !counted(s))
		return 0;
	c = ci(step_cluster(s));
	if (failed && !ro.failed[c]) {
		ro.failed[c] = 1;
		ro.nfailed[wi(step_cluster(s)->wave)]++;
	}
	if (ro.left[c] > 0 && --ro.left[c] == 0 && ro.begun[c]) {
		ro.active[wi(step_cluster(s)->wave)]--;
		return 1;
	}
	return 0;
}

/* how many failed clusters a wave tolerates */
static int allowed(const struct wave *w)
{
	return w->max_failed_pct ? (int)((long)w->max_failed * (long)w->nclusters / 100) : w->max_failed;
}

int rollout_tolerates(const struct wave *w, const char *bad)
{
	int n = 0;

	if (!ro.d)
		return 0;
	for (size_t i = 0; i < ro.d->nclusters; i++)
		if (ro.d->clusters[i].wave == w && (ro.failed[i] || bad[i]))
			n++;
	return n <= allowed(w);
}

int rollout_judged(const struct step *s)
{
	return ro.d && ro.d->rollout && counted(s);
}

int rollout_wave_failed(const struct wave *w)
{
	return ro.d ? ro.nfailed[wi(w)] : 0;
}

const char *rollout_halt(const struct wave *w)
{
	struct buf b = BUF_INIT;
	const char *r;
	int n = rollout_wave_failed(w);

	if (n <= allowed(w))
		return NULL;
	for (size_t i = 0; i < ro.d->nclusters; i++)
		if (ro.d->clusters[i].wave == w && ro.failed[i])
			buf_addf(&b, "%s%s", b.len ? ", " : "", ro.d->clusters[i].name);
	r = aprintf("wave '%s' halted: %d of %zu cluster%s failed (max-failed %d%s): %s; later waves were not started",
		    w->name, n, w->nclusters, w->nclusters == 1 ? "" : "s", w->max_failed, w->max_failed_pct ? "%" : "", b.s);
	buf_release(&b);
	return r;
}

/* "max-parallel 5, bake 300 s, max-failed 10%" (arena), "" for defaults */
static const char *wave_limits(const struct wave *w)
{
	struct buf b = BUF_INIT;
	const char *r;

	if (w->max_parallel)
		buf_addf(&b, "max-parallel %d", w->max_parallel);
	if (w->bake)
		buf_addf(&b, "%sbake %d s", b.len ? ", " : "", w->bake);
	if (w->max_failed)
		buf_addf(&b, "%smax-failed %d%s", b.len ? ", " : "", w->max_failed, w->max_failed_pct ? "%" : "");
	if (w->check)
		buf_addf(&b, "%scheck", b.len ? ", " : "");
	r = astrdup(b.len ? b.s : "");
	buf_release(&b);
	return r;
}

void rollout_print(const struct distro *d, FILE *f)
{
	size_t rest = fleet_unmatched(d);

	if (!d->rollout)
		return;
	for (size_t i = 0; i < d->nwaves; i++) {
		const struct wave *w = &d->waves[i];
		const char *lim = wave_limits(w);
		fprintf(f, "wave   %s: %s%s%s%s\n", w->name, w->nclusters ? wave_clusters(d, w, ", ") : "(no cluster)",
			*lim ? " (" : "", lim, *lim ? ")" : "");
	}
	if (rest)
		fprintf(stderr, "idpmake: warning: %zu cluster%s in no wave of rollout.waves (%s): %s last, in the wave 'rest'\n",
			rest, rest == 1 ? " is" : "s are", wave_clusters(d, &d->waves[d->nwaves - 1], ", "),
			rest == 1 ? "it rolls out" : "they roll out");
}

json_t *rollout_json(const struct distro *d)
{
	json_t *a = json_array();

	for (size_t i = 0; d->rollout && i < d->nwaves; i++) {
		const struct wave *w = &d->waves[i];
		json_t *cl = json_array();
		for (size_t k = 0; k < d->nclusters; k++)
			if (d->clusters[k].wave == w)
				json_array_append_new(cl, json_string(d->clusters[k].name));
		json_array_append_new(a, json_pack("{s:s, s:o, s:i, s:i, s:s, s:b, s:b}", "name", w->name, "clusters", cl,
						   "max_parallel", w->max_parallel, "bake", w->bake,
						   "max_failed", aprintf("%d%s", w->max_failed, w->max_failed_pct ? "%" : ""),
						   "check", w->check != NULL, "unmatched", w->implicit));
	}
	return a;
}
