/* cmd-up.c - `up` (run what changed) and `plan` (say what would run, and why) */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argocd.h"
#include "build.h"
#include "cmd.h"
#include "util.h"

int cmd_up(struct ctx *c)
{
	struct build_opts o = { c->jobs, c->keep_going, "up" };
	struct summary sum;
	long long run;
	int r;

	if ((r = ctx_load(c, 0)))
		return r;
	if (c->pl.argocd_server) {
		const char *err;
		struct argocd *a = argocd_open(c->d, c->statedir, c->verbose, &err);
		if (!a)
			return error("argocd: %s", err), 1;
		build_sync = (struct sync_ops){ argocd_sync_step, a };
	}
	if (state_lock(c->st, c->wait) < 0)
		return 1;
	run = state_run_begin(c->st, "up");
	if (plan_renders(&c->pl) < 0) {
		state_run_end(c->st, run, 2, "planning failed", NULL);
		return 1;
	}
	r = build_run(&c->pl, &o, &sum);
	status_summary(&sum);
	{
		char *text = aprintf("%d rendered, %s, %d synced, %d hooks, %d failed, %d up to date", sum.rendered,
				     sum.commit ? aprintf("pushed %.12s", sum.commit) : "nothing pushed", sum.synced,
				     sum.hooks, sum.failed, sum.up_to_date);
		state_run_end(c->st, run, r, text, sum.commit);
	}
	if (build_interrupted) {
		fprintf(stderr, "idpmake: interrupted; the steps that finished are recorded, run up again to finish\n");
		return 130;
	}
	return r;
}

int cmd_plan(struct ctx *c)
{
	int r, work = 0, uptodate = 0;
	json_t *steps = NULL;

	if ((r = ctx_load(c, 1)))
		return r;
	if (plan_renders(&c->pl) < 0)
		return 1;
	if (c->json)
		steps = json_array();
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		if (!s->selected)
			continue;
		if (s->kind != STEP_RENDER)
			plan_decide(&c->pl, s);
		if (!s->dirty) {
			if (!(s->kind == STEP_SYNC && !c->pl.argocd_server))
				uptodate++;
			continue;
		}
		work++;
		if (c->json) {
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
			json_array_append_new(steps, o);
		} else {
			printf("%-6s %s: %s\n", step_kind_name(s->kind), s->kind == STEP_PUSH ? "push" : s->id, reason_text(s));
			if (c->verbose)
				for (size_t k = 0; k < s->changed.n; k++)
					printf("         %s\n", s->changed.v[k]);
		}
	}
	if (c->json) {
		json_t *doc = json_object();
		char *text;
		json_object_set_new(doc, "version", json_integer(1));
		json_object_set_new(doc, "steps", steps);
		json_object_set_new(doc, "up_to_date", json_integer(uptodate));
		text = json_dumps(doc, JSON_INDENT(2));
		puts(text);
		free(text);
		json_decref(doc);
	} else {
		printf("idpmake: %d step%s would run, %d up to date%s\n", work, work == 1 ? "" : "s", uptodate,
		       c->pl.argocd_server ? "" : " (no argocd configured: sync steps are skipped)");
	}
	return c->exit_code && work ? 1 : 0;
}
