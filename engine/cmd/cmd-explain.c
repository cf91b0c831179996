/* cmd-explain.c - `explain STEP`: why a step would run, input by input: the variable, the file, the field */
#include <jansson.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "cmd/cmd.h"
#include "run/keyinputs.h"
#include "run/plan.h"
#include "base/util.h"

static void hex(struct hash h, char out[33])
{
	if (hash_zero(h))
		strcpy(out, "(none)");
	else
		hash_hex(h, out);
}

/* an entry's value as explain shows it: quoted, "***" when masked, or its hash */
static const char *shown(const struct input *e)
{
	char h[33];

	if (e->masked)
		return "***";
	if (e->value) {
		/* on one line: a newline as \n, another control character as \xHH */
		struct buf b = BUF_INIT;
		const char *r;
		buf_addc(&b, '\'');
		for (const unsigned char *p = (const unsigned char *)e->value; *p; p++)
			if (*p == '\n')
				buf_adds(&b, "\\n");
			else if (*p < 0x20 || *p == 0x7f)
				buf_addf(&b, "\\x%02x", *p);
			else
				buf_addc(&b, (char)*p);
		buf_addc(&b, '\'');
		r = astrdup(b.s);
		buf_release(&b);
		return r;
	}
	hex(e->h, h);
	return astrdup(h);
}

/* an entry's value in --json: as it is (no quotes), "***" when masked, or its hash */
static json_t *json_value(const struct input *e)
{
	char h[33];

	if (e->masked)
		return json_string("***");
	if (e->value)
		return json_string(e->value);
	hex(e->h, h);
	return json_string(h);
}

/*
 * One input of explain_inputs, as text or (arr) a JSON object
 * {"name":..., "change":"changed|added|removed|same", "old":..., "new":..., "masked":true}
 */
static void said(json_t *arr, const char *change, const char *name, const struct input *o, const struct input *n)
{
	if (arr) {
		json_t *x = json_pack("{s:s, s:s}", "name", name, "change", change);
		if (o)
			json_object_set_new(x, "old", json_value(o));
		if (n)
			json_object_set_new(x, "new", json_value(n));
		if ((o && o->masked) || (n && n->masked))
			json_object_set_new(x, "masked", json_true());
		json_array_append_new(arr, x);
	} else if (!strcmp(change, "same"))
		printf("  same     %s\n", name);
	else if (!strcmp(change, "changed"))
		printf("  changed  %s\n           %s -> %s\n", name, shown(o), shown(n));
	else if (!strcmp(change, "added"))
		printf("  added    %s (%s)\n", name, shown(n));
	else
		printf(o->value || o->masked ? "  removed  %s (was %s)\n" : "  removed  %s\n", name, shown(o));
}

static const struct input *find(const struct inputs *in, const char *name)
{
	for (size_t k = 0; k < in->n; k++)
		if (!strcmp(in->v[k].name, name))
			return &in->v[k];
	return NULL;
}

/* an aggregate the named entries explain (keyinputs.h), shown only with -v when one of them changed */
static int covered(const char *name, const struct inputs *old, const struct inputs *now)
{
	const char *prefix = !strcmp(name, "vars") ? "var " :
			     !strcmp(name, "package spec") || !strcmp(name, "destination") ? "distro " : NULL;

	if (!prefix)
		return 0;
	for (size_t i = 0; i < now->n; i++) {
		const struct input *o = find(old, now->v[i].name);
		if (!strncmp(now->v[i].name, prefix, strlen(prefix)) && (!o || !hash_eq(o->h, now->v[i].h)))
			return 1;
	}
	return 0;
}

/*
 * The inputs of s's key against those of its last success, by name: a
 * variable or a distro field with its old and new value ("***" for one
 * that looks secret), a file by its path with its old and new hash.  A
 * state recorded before variables and fields were named lists neither.
 */
static void explain_inputs(struct ctx *c, struct step *s, json_t *arr)
{
	struct inputs old, now;
	int details = 0;

	state_step_inputs(c->st, s->id, &old);
	plan_inputs(&c->pl, s, &now);
	if (s->kind != STEP_RENDER && !old.n)
		return;	/* a hook recorded before its inputs were: the reason above is all there is */
	for (size_t k = 0; k < old.n; k++)
		details |= keyin_detail(old.v[k].name);
	for (size_t i = 0; i < now.n; i++) {
		const struct input *o = find(&old, now.v[i].name);
		if (!details && keyin_detail(now.v[i].name))
			continue;
		if (o && hash_eq(o->h, now.v[i].h)) {
			if (c->verbose)
				said(arr, "same", now.v[i].name, o, &now.v[i]);
			continue;
		}
		if (!c->verbose && o && details && covered(now.v[i].name, &old, &now))
			continue;
		said(arr, o ? "changed" : "added", now.v[i].name, o, &now.v[i]);
	}
	for (size_t k = 0; k < old.n; k++)
		if (!find(&now, old.v[k].name))
			said(arr, "removed", old.v[k].name, &old.v[k], NULL);
}

/*
 * explain --json: one document, {"version":1, "steps":[{"id":..., "kind":..., "decision":"run|skip",
 * "reason":..., "key":{"old":..., "new":...}, "inputs":[said's objects]}]}
 */
static json_t *explain_json(struct ctx *c, struct step *s)
{
	char a[33], b[33];
	json_t *inputs = json_array();

	hex(s->old_key, a);
	hex(s->key, b);
	if (s->kind == STEP_RENDER || ((s->kind == STEP_PRE || s->kind == STEP_POST) && s->hook))
		explain_inputs(c, s, inputs);
	return json_pack("{s:s, s:s, s:s, s:s, s:{s:s?, s:s?}, s:o}", "id", s->id, "kind", step_kind_name(s->kind),
			 "decision", s->dirty ? "run" : "skip", "reason", reason_text(s), "key", "old",
			 hash_zero(s->old_key) ? NULL : a, "new", hash_zero(s->key) ? NULL : b, "inputs", inputs);
}

/* explain ID, no such step: "did you mean" over the step ids (closest(): the one rule) */
static void no_step(const struct ctx *c, const char *id)
{
	const char **names = amalloc((c->g->nsteps + 1) * sizeof(*names)), *sug;

	for (size_t i = 0; i < c->g->nsteps; i++)
		names[i] = c->g->steps[i]->id;
	if ((sug = closest(id, names, c->g->nsteps)))
		fprintf(stderr, "idpmake: no step '%s'; did you mean '%s'?\n", id, sug);
	else
		fprintf(stderr, "idpmake: no step '%s' (see 'idpmake graph --format json' for the ids)\n", id);
}

int cmd_explain(struct ctx *c)
{
	char **ids = c->targets;
	size_t nids = c->ntargets;
	int r;
	json_t *doc;

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
	doc = c->json ? json_pack("{s:i, s:[]}", "version", 1, "steps") : NULL;
	for (size_t t = 0; t < nids; t++) {
		struct step *s = graph_find(c->g, ids[t]);
		char a[33], b[33];
		if (!s && !strchr(ids[t], ':')) {
			/* PKG or CLUSTER/PKG: its render */
			const char *id = strchr(ids[t], '/') ? aprintf("%s:render", ids[t]) :
				aprintf("%s/%s:render", c->d->clusters[0].name, ids[t]);
			s = graph_find(c->g, id);
		}
		if (!s) {
			no_step(c, ids[t]);
			json_decref(doc);
			return 2;
		}
		if (doc) {
			json_array_append_new(json_object_get(doc, "steps"), explain_json(c, s));
			continue;
		}
		printf("%s: %s\n", s->id, s->dirty ? aprintf("would run: %s", reason_text(s)) : reason_text(s));
		hex(s->old_key, a);
		hex(s->key, b);
		printf("  key  %s -> %s\n", a, b);
		if (s->kind == STEP_RENDER || ((s->kind == STEP_PRE || s->kind == STEP_POST) && s->hook))
			explain_inputs(c, s, NULL);
	}
	if (doc)
		json_print(doc, 1);
	return 0;
}
