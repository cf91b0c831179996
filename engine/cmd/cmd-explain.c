/* cmd-explain.c - `explain STEP`: why a step would run, input by input */
#include <stdio.h>
#include <string.h>

#include "cmd/cmd.h"
#include "run/plan.h"
#include "base/util.h"

static void hex(struct hash h, char out[33])
{
	if (hash_zero(h))
		strcpy(out, "(none)");
	else
		hash_hex(h, out);
}

int cmd_explain(struct ctx *c)
{
	char **ids = c->targets;
	size_t nids = c->ntargets;
	int r;

	if (!nids) {
		fprintf(stderr, "usage: idpmake explain STEP...   (a step id, e.g. in-cluster/backstage:render;\n"
				"                                 a package name explains its render)\n");
		return 2;
	}
	c->ntargets = 0;
	if ((r = ctx_load(c, 1)))
		return r;
	if (plan_renders(&c->pl) < 0)
		return 1;
	for (size_t i = 0; i < c->g->nsteps; i++)
		if (c->g->steps[i]->kind != STEP_RENDER)
			plan_decide(&c->pl, c->g->steps[i]);
	for (size_t t = 0; t < nids; t++) {
		struct step *s = graph_find(c->g, ids[t]);
		struct inputs old, now;
		char a[33], b[33];
		if (!s && !strchr(ids[t], ':')) {
			/* PKG or CLUSTER/PKG: its render */
			const char *id = strchr(ids[t], '/') ? aprintf("%s:render", ids[t]) :
				aprintf("%s/%s:render", c->d->clusters[0].name, ids[t]);
			s = graph_find(c->g, id);
		}
		if (!s) {
			fprintf(stderr, "idpmake: no step '%s' (see 'idpmake graph --format json' for the ids)\n", ids[t]);
			return 2;
		}
		printf("%s: %s\n", s->id, s->dirty ? aprintf("would run: %s", reason_text(s)) : reason_text(s));
		hex(s->old_key, a);
		hex(s->key, b);
		printf("  key  %s -> %s\n", a, b);
		if (s->kind != STEP_RENDER)
			continue;
		state_step_inputs(c->st, s->id, &old);
		plan_inputs(&c->pl, s, &now);
		for (size_t i = 0; i < now.n; i++) {
			const struct input *o = NULL;
			for (size_t k = 0; k < old.n; k++)
				if (!strcmp(old.v[k].name, now.v[i].name))
					o = &old.v[k];
			if (o && hash_eq(o->h, now.v[i].h)) {
				if (c->verbose)
					printf("  same     %s\n", now.v[i].name);
				continue;
			}
			hex(now.v[i].h, b);
			if (o) {
				hex(o->h, a);
				printf("  changed  %s\n           %s -> %s\n", now.v[i].name, a, b);
			} else {
				printf("  added    %s (%s)\n", now.v[i].name, b);
			}
		}
		for (size_t k = 0; k < old.n; k++) {
			int found = 0;
			for (size_t i = 0; i < now.n; i++)
				if (!strcmp(old.v[k].name, now.v[i].name))
					found = 1;
			if (!found)
				printf("  removed  %s\n", old.v[k].name);
		}
	}
	return 0;
}
