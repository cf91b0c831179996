/* cmd-plan.c - `plan`: say what up would run, and why, and what it would refuse */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "graph/state.h"
#include "render/share.h"
#include "review/savedplan.h"
#include "run/orphans.h"
#include "run/plan.h"
#include "run/preflight.h"
#include "run/rollout.h"
#include "run/targets.h"
#include "argo/argocd.h"
#include "base/util.h"

/* plan: the cloned clusters that are behind, and by which packages */
static void print_behind(const struct graph *g)
{
	for (size_t ci = 0; ci < g->d->nclusters; ci++) {
		const struct cluster *cl = &g->d->clusters[ci];
		int any = 0;
		for (size_t i = 0; i < g->nsteps; i++) {
			const struct step *s = g->steps[i];
			if (s->kind != STEP_RENDER || !s->behind || step_cluster(s) != cl)
				continue;
			if (any)
				printf(", %s", s->pkg->name);
			else
				printf("behind cloned cluster %s: %s", cl->name, s->pkg->name);
			any = 1;
		}
		if (any)
			printf(" (idpmake promote %s)\n", cl->name);
	}
}

/*
 * plan: the steps that wait on a cluster (or certificate) a step makes, in
 * one line with the first of them ("wait   once in-cluster:kind has made
 * the cluster: sync in-cluster/a:sync, post ..."); nothing for the rest.
 * Steps after i are decided here, as the loop would decide them.
 */
static void waiting_line(struct ctx *c, size_t i)
{
	const char *why = reason_text(c->g->steps[i]);

	for (size_t k = 0; k < i; k++) {
		const struct step *t = c->g->steps[k];
		if (t->selected && t->dirty && !(t->same && t->same != t) && !strcmp(reason_text(t), why))
			return;	/* said with that one */
	}
	printf("%-6s %s:", "wait", why);
	for (size_t k = i, n = 0; k < c->g->nsteps; k++) {
		struct step *t = c->g->steps[k];
		if (!t->selected || (t->same && t->same != t))
			continue;
		if (k > i && t->kind != STEP_RENDER)
			plan_decide(&c->pl, t);
		if (t->dirty && !strcmp(reason_text(t), why))
			printf("%s %s %s", n++ ? "," : "", step_kind_name(t->kind), t->id);
	}
	putchar('\n');
}

/* one step that would run: its JSON entry, or its line (a render's group and what waits on a make said once) */
static void plan_step(struct ctx *c, size_t i, json_t *steps)
{
	struct step *s = c->g->steps[i];

	if (steps) {
		json_t *o = json_object(), *ch = json_array();
		json_object_set_new(o, "id", json_string(s->id));
		json_object_set_new(o, "kind", json_string(step_kind_name(s->kind)));
		if (s->cluster)
			json_object_set_new(o, "cluster", json_string(s->cluster->name));
		if (s->pkg)
			json_object_set_new(o, "package", json_string(s->pkg->name));
		json_object_set_new(o, "reason", json_string(reason_text(s)));
		for (size_t k = 0; k < s->changed.n; k++)
			json_array_append_new(ch, json_string(changed_name(s->changed.v[k])));
		json_object_set_new(o, "changed", ch);
		if (s->same)
			json_object_set_new(o, "same_render_as", json_string(s->same->id));
		json_array_append_new(steps, o);
		return;
	}
	if (s->same && s->same != s)
		return;	/* shown with the first of its group: render PKG (for N clusters) */
	if (!strncmp(reason_text(s), "once ", 5)) {
		waiting_line(c, i);	/* the steps that wait on what a step makes: said once */
		return;
	}
	if (s->same)
		printf("%-6s %s (for %zu clusters): %s\n", step_kind_name(s->kind), s->pkg->name, share_count(s),
		       reason_text(s));
	else
		printf("%-6s %s: %s\n", step_kind_name(s->kind), s->kind == STEP_PUSH ? "push" : s->id, reason_text(s));
	if (c->verbose)
		for (size_t k = 0; k < s->changed.n; k++)
			printf("         %s\n", s->changed.v[k]);
}

/* plan --json: the document */
static void plan_doc(struct ctx *c, json_t *steps, int uptodate, json_t *drift, json_t *orphans, size_t nrefused,
		     const char **unchecked, size_t nunchecked)
{
	json_t *doc = json_object(), *nc = json_array();

	json_object_set_new(doc, "version", json_integer(1));
	json_object_set_new(doc, "steps", steps);
	json_object_set_new(doc, "up_to_date", json_integer(uptodate));
	json_object_set_new(doc, "waves", rollout_json(c->d));
	json_object_set_new(doc, "drift", drift);
	json_object_set_new(doc, "refusals", json_integer((json_int_t)nrefused));
	for (size_t i = 0; i < nunchecked; i++)
		json_array_append_new(nc, json_string(unchecked[i]));
	json_object_set_new(doc, "not_checked", nc);
	json_object_update(doc, orphans);
	json_decref(orphans);
	json_print(doc, 1);
}

int cmd_plan(struct ctx *c)
{
	int r, work = 0, uptodate = 0, refused = 0, always = 0;
	const char **unchecked = NULL;
	size_t nunchecked = 0, nrefused = 0;
	struct orphan_counts gone;
	json_t *steps = NULL, *drift, *orphans;

	if ((r = ctx_load(c, 1)))
		return r;
	if (targets_print(c, stderr) < 0)
		return PLAN_REFUSED;	/* a kube context at another server: up refuses it here too */
	/* --refresh fetches into the clone, as up does: under the state lock */
	if (c->refresh && (mkdirs(c->statedir) < 0 || state_lock(c->st, c->wait) < 0))
		return 1;
	warn_insecure(c->d);
	if (plan_renders(&c->pl) < 0)
		return 1;
	if (c->outdir)
		return savedplan_write(c);	/* plan -o FILE: a saved plan (savedplan.c) */
	/* --refresh: what Argo CD reports too, as up --refresh asks it (find_drift) */
	if (c->refresh && c->pl.argocd_server) {
		const char *err = NULL;
		struct argocd *a = argocd_connect(c->d, c->statedir, c->verbose, &err);
		if (!a)
			return error("argocd: %s", err ? err : "cannot use Argo CD"), 1;
		find_drift(c, a);
		argocd_close(a);
	}
	if (!c->json) {
		rollout_print(c->d, stdout);
		print_behind(c->g);
	}
	if (c->json)
		steps = json_array();
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		if (!s->selected)
			continue;
		if (s->kind != STEP_RENDER)
			plan_decide(&c->pl, s);
		if (!s->dirty) {
			if (!(step_talks_to_argocd(s) && !c->pl.argocd_server))	/* skipped, as up counts them */
				uptodate++;
			continue;
		}
		work++;
		always += s->reason == R_ALWAYS;	/* a hook with when: always: no change, no --exit-code */
		plan_step(c, i, steps);
	}
	/* what up would refuse before the push, as up says it (preflight.h) */
	refused = preflight_plan(c, &unchecked, &nunchecked, &nrefused);
	/* the folders of packages gone from the distro, and their Applications, as up decides (orphans.c) */
	orphans = c->json ? json_object() : NULL;
	gone = orphans_show(c, orphan_apps_apply(c), c->json ? NULL : stdout, orphans);
	/* changes made outside idpmake, as the clone last fetched them (with --refresh: fetched now) */
	drift = c->json ? json_array() : NULL;
	if (show_drift(c, c->refresh, stdout, drift) < 0)
		r = 1;
	if (c->json) {
		plan_doc(c, steps, uptodate, drift, orphans, nrefused, unchecked, nunchecked);
	} else {
		relayed_note(c);
		printf("idpmake: %d step%s would run%s, %d up to date%s%s\n", work, work == 1 ? "" : "s",
		       always ? aprintf(" (%d: hook%s with when: always)", always, always == 1 ? "" : "s") : "", uptodate,
		       targets_skipped_note(c), orphans_summary(gone));
	}
	if (refused && !c->json)
		fprintf(stderr, "idpmake: plan: up would refuse (exit %d): nothing of the above would run\n", refused);
	return refused ? refused : r ? r : c->exit_code && (work > always || gone.del || gone.unregister || gone.kind_del) ? 1 : 0;
}
