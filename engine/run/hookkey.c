/* hookkey.c - a hook's key, and its named inputs (hookkey.h) */
#include <string.h>
#include <unistd.h>

#include "base/looksecret.h"
#include "distro/manifest.h"
#include "render/planner.h"
#include "run/hookkey.h"
#include "run/hookscript.h"
#include "run/hookvars.h"
#include "run/keyinputs.h"
#include "base/util.h"

static void add_layers(struct hasher *h, const struct vars *v, size_t from, size_t to)
{
	for (size_t l = from; l < to; l++)
		for (size_t i = 0; i < v->layer[l]->n; i++) {
			hasher_adds(h, v->layer[l]->v[i].key);
			hasher_adds(h, v->layer[l]->v[i].value);
		}
}

struct hash hook_legacy_key(struct planner *pl, struct step *s)
{
	struct hasher *h = hasher_new();
	struct vars v;
	int err = 0;

	plan_hook_hash(pl, s->hook, h, &err);
	vars_init(&v, pl->g->d, s->cluster, s->pkg, s->namespace);
	add_layers(h, &v, 0, v.n);
	if (s->hook->when == WHEN_CHANGED)
		hasher_addh(h, s->hook_sync);
	return hasher_end(h);
}

struct hash hook_key(struct planner *pl, struct step *s, int *err)
{
	struct hook *hk = s->hook;
	struct hasher *h = hasher_new();
	const char **names;
	size_t n;
	struct vars v;

	plan_hook_hash(pl, hk, h, err);
	vars_init(&v, pl->g->d, s->cluster, s->pkg, s->namespace);
	if (hook_vars(pl, hk, &v, &names, &n)) {
		add_layers(h, &v, 0, v.n);	/* it reads them all: the key it always had */
	} else {
		add_layers(h, &v, 0, 1);	/* the builtins, which it gets as IDPMAKE_CLUSTER, ... */
		hasher_adds(h, "vars it reads");
		for (size_t i = 0; i < n; i++) {
			const char *val = vars_get(&v, names[i]);
			hasher_adds(h, names[i]);
			hasher_adds(h, val ? val : "\001(undefined)");
		}
	}
	if (hk->when == WHEN_CHANGED)
		hasher_addh(h, s->hook_sync);
	return hasher_end(h);
}

struct script_inputs {
	struct planner *pl;
	struct inputs *in;
};

static void add_script(void *ctx, const char *word, const char *path)
{
	struct script_inputs *si = ctx;
	struct hash fh = { 0, 0 };

	planner_file_hash(si->pl, path, &fh);
	inputs_add(si->in, aprintf("script %s", word), fh);
}

void hook_inputs(struct planner *pl, struct step *s, struct inputs *in)
{
	struct hook *hk = s->hook;
	const char **names;
	size_t n;
	struct vars v;

	memset(in, 0, sizeof(*in));
	inputs_add_value(in, "run", hash_bytes(hk->run, strlen(hk->run)), hk->run, looks_secret(NULL, hk->run));
	inputs_add_value(in, "folder", hash_bytes(hk->dir, strlen(hk->dir)), hk->dir, 0);
	for (size_t i = 0; i < hk->inputs.n; i++) {
		struct hash fh = { 0, 0 };
		if (access(hk->inputs.v[i], F_OK) == 0)
			planner_file_hash(pl, hk->inputs.v[i], &fh);
		inputs_add(in, aprintf("input %s", hk->inputs.v[i]), fh);
	}
	hook_scripts(hk->run, hk->dir, add_script, &(struct script_inputs){ pl, in });
	vars_init(&v, pl->g->d, s->cluster, s->pkg, s->namespace);
	for (size_t i = 0; i < v.builtins.n; i++)
		keyin_var(pl, in, v.builtins.v[i].key, v.builtins.v[i].value);
	if (hook_vars(pl, hk, &v, &names, &n)) {
		/* all of them, each once, with the value that wins */
		for (size_t l = 1; l < v.n; l++)
			for (size_t i = 0; i < v.layer[l]->n; i++) {
				const char *key = v.layer[l]->v[i].key;
				int seen = 0;
				for (size_t k = 0; k < in->n; k++)
					seen |= !strncmp(in->v[k].name, "var ", 4) && !strcmp(in->v[k].name + 4, key);
				if (!seen)
					keyin_var(pl, in, key, vars_get(&v, key));
			}
	} else {
		for (size_t i = 0; i < n; i++) {
			int builtin = 0;
			for (size_t k = 0; k < v.builtins.n; k++)
				builtin |= !strcmp(v.builtins.v[k].key, names[i]);
			if (!builtin)	/* in already */
				keyin_var(pl, in, names[i], vars_get(&v, names[i]));
		}
	}
	if (hk->when == WHEN_CHANGED)
		inputs_add(in, "sync (its package's render output and Application)", s->hook_sync);
}
