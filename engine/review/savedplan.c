/*
 * savedplan.c - saved plans: `plan -o FILE` records what `up` would do,
 * `up --plan FILE` does exactly that or refuses.
 *
 * A step's key already covers its inputs (plan.c): a render's the rule,
 * the tool version, the package spec, the variables it uses, the values
 * files and the source tree; a sync's the render's output and the
 * Application; a hook's its command, the script it runs, inputs and
 * variables; the push's the folders it changes.  So the plan records, for every selected step, its
 * key and whether it would run, and for a render its output hash and the
 * named parts of its key (to name what changed).  To know the output
 * hashes, `plan -o` renders what would render, into the cache only
 * (revdiff.c's render_output), and then decides the other steps as if
 * the renders had run: their keys are exact, not "if the render changes".
 *
 * The file (JSON):
 *
 *     { "idpmake_plan": 1, "idpmake": VERSION,
 *       "distro": { "file": PATH, "name": NAME, "hash": XXH3 of the manifest's bytes },
 *       "targets": [...], "labels": [...],
 *       "vars": { "distro": { NAME: HASH }, "clusters": { CLUSTER: { NAME: HASH } } },
 *       "steps": [ { "id", "kind", "key", "run",
 *                    render: "output", "inputs": { PART: HASH } }, ... ],
 *       "removals": [ { "folder", "target", "reason" } ],
 *       "applications": [ { "name", "cluster", "package", "action", "reason" } ],
 *       "clusters": [ { "name", "action", "reason" } ] }
 *
 * removals, applications and clusters (orphans.c) say what the run removes of
 * packages gone from the distro; they are for the reviewer: the push's key
 * already binds the folders it removes.
 *
 * Variables are recorded as hashes: a plan may be a CI artifact.
 *
 * `up --plan` checks, in this order, and refuses with exit 2 at the first
 * difference, before anything is pushed or synced:
 *   1. the idpmake version;            5. the renders' outputs (rendered
 *   2. the variables, by name;            again where the cache does not
 *   3. the set of selected steps;         hold them) against the plan's;
 *   4. the renders' keys, naming the   6. every other step: the plan's key
 *      changed part;                      (a hook's covers its script), and
 *                                         one that would run, the plan runs;
 *                                      7. the manifest's bytes.
 * A step the plan runs that is now up to date (the plan was applied) does
 * not run again: applying a plan twice does nothing the second time.  The renders are then recorded as done, bound to the
 * plan's outputs, and build.c runs the rest as up does.
 */
#include <ctype.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/ctx.h"
#include "run/plan.h"
#include "run/orphans.h"
#include "review/revdiff.h"
#include "review/savedplan.h"
#include "run/targets.h"
#include "base/util.h"

static const char *hex_of(struct hash h)
{
	char hex[33];
	hash_hex(h, hex);
	return astrdup(hex);
}

/* the named parts of a render's key (what key_of hashes: no per-file entries) */
static json_t *key_parts(struct planner *pl, struct step *s)
{
	struct inputs in;
	json_t *o = json_object();

	if (plan_inputs(pl, s, &in) < 0)
		return o;
	for (size_t i = 0; i < in.n; i++)
		if (!strchr(in.v[i].name, '/') || !strncmp(in.v[i].name, "values ", 7))
			json_object_set_new(o, in.v[i].name, json_string(hex_of(in.v[i].h)));
	return o;
}

static json_t *vars_json(const struct kvlist *v)
{
	json_t *o = json_object();
	for (size_t i = 0; i < v->n; i++)
		json_object_set_new(o, v->v[i].key, json_string(hex_of(hash_bytes(v->v[i].value, strlen(v->v[i].value)))));
	return o;
}

static const char *distro_hash(const struct ctx *c)
{
	size_t len;
	char *text = read_file(c->file, &len);
	const char *h = text ? hex_of(hash_bytes(text, len)) : "";
	free(text);
	return h;
}

/*
 * Give every selected render its output, rendering what would render into
 * the cache, then decide the other steps in order as if the renders had
 * run.  run[i]: step i would run.  Afterwards the renders are not dirty
 * (their outputs are known) and every step is idle again.
 */
static int predict(struct planner *pl, char *run)
{
	struct graph *g = pl->g;
	int dry = pl->dry_run, failed = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected || s->kind != STEP_RENDER)
			continue;
		run[i] = (char)s->dirty;
		if (s->dirty && render_output(pl, s, &s->output) < 0)
			failed = 1;
	}
	if (failed)
		return -1;
	/* in a dry run a step whose in-steps are done is decided on their outputs */
	pl->dry_run = 1;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected)
			continue;
		if (s->kind != STEP_RENDER) {
			plan_decide(pl, s);
			run[i] = (char)s->dirty;
		}
		s->dirty = s->kind == STEP_RENDER ? 0 : s->dirty;
		s->state = S_DONE;
	}
	pl->dry_run = dry;
	for (size_t i = 0; i < g->nsteps; i++)
		g->steps[i]->state = S_IDLE;
	return 0;
}

int savedplan_write(struct ctx *c)
{
	struct graph *g = c->g;
	char *run = amalloc(g->nsteps + 1), *text;
	json_t *doc, *steps, *vars, *clusters, *targets, *labels, *orphans;
	int work = 0, uptodate = 0;
	struct orphan_counts gone;

	if (predict(&c->pl, run) < 0)
		return 1;
	steps = json_array();
	clusters = json_object();
	targets = json_array();
	labels = json_array();
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		json_t *o;
		if (!s->selected)
			continue;
		o = json_pack("{s:s, s:s, s:s, s:b}", "id", s->id, "kind", step_kind_name(s->kind), "key", hex_of(s->key),
			      "run", run[i]);
		if (s->kind == STEP_RENDER) {
			json_object_set_new(o, "output", json_string(hex_of(s->output)));
			json_object_set_new(o, "inputs", key_parts(&c->pl, s));
		}
		json_array_append_new(steps, o);
		if (!run[i]) {
			if (!(s->kind == STEP_SYNC && !c->pl.argocd_server))
				uptodate++;
			continue;
		}
		work++;
		if (s->kind == STEP_RENDER)
			printf("%-6s %s: %s (output %s%s)\n", step_kind_name(s->kind), s->id, reason_text(s),
			       hash_short(s->output), hash_eq(s->output, s->old_output) ? ", unchanged" : "");
		else
			printf("%-6s %s: %s\n", step_kind_name(s->kind), s->kind == STEP_PUSH ? "push" : s->id, reason_text(s));
	}
	/* what the run removes of packages gone from the distro (orphans.c); the push's key binds the folders */
	orphans = json_object();
	gone = orphans_show(c, orphan_apps_apply(c), stdout, orphans);
	for (size_t i = 0; i < c->d->nclusters; i++)
		json_object_set_new(clusters, c->d->clusters[i].name, vars_json(&c->d->clusters[i].vars));
	vars = json_pack("{s:o, s:o}", "distro", vars_json(&c->d->vars), "clusters", clusters);
	for (size_t i = 0; i < c->ntargets; i++)
		json_array_append_new(targets, json_string(c->targets[i]));
	for (size_t i = 0; i < c->labels.n; i++)
		json_array_append_new(labels, json_string(c->labels.v[i]));
	doc = json_pack("{s:i, s:s, s:{s:s, s:s, s:s}, s:o, s:o, s:o, s:o}", "idpmake_plan", 1, "idpmake", IDPMAKE_VERSION,
			"distro", "file", c->file, "name", c->d->name ? c->d->name : "", "hash", distro_hash(c),
			"targets", targets, "labels", labels, "vars", vars, "steps", steps);
	json_object_update(doc, orphans);
	json_decref(orphans);
	text = json_dumps(doc, JSON_INDENT(1));
	json_decref(doc);
	if (!text || write_file_atomic(c->outdir, text, strlen(text)) < 0) {
		free(text);
		return error("cannot write the plan to %s:", c->outdir), 1;
	}
	free(text);
	printf("idpmake: %d step%s would run, %d up to date%s%s; the plan is saved in %s (idpmake up --plan %s)\n", work,
	       work == 1 ? "" : "s", uptodate, targets_skipped_note(c),
	       orphans_summary(gone), c->outdir, c->outdir);
	return c->exit_code && (work || gone.del || gone.unregister) ? 1 : 0;
}

/* ---- up --plan ---- */

/* is v an object whose members are all strings (or, with `nested`, all such objects)? */
static int string_map(json_t *v, int nested)
{
	const char *k;
	json_t *m;

	if (!json_is_object(v))
		return 0;
	json_object_foreach(v, k, m) if (nested ? !string_map(m, 0) : !json_is_string(m)) return 0;
	return 1;
}

static int string_list(json_t *v)
{
	size_t i;
	json_t *m;

	if (!json_is_array(v))
		return 0;
	json_array_foreach(v, i, m) if (!json_is_string(m)) return 0;
	return 1;
}

json_t *savedplan_parse(const char *text, size_t len, const char **why)
{
	json_error_t je;
	json_t *doc = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je), *v, *st;
	size_t i;

	*why = NULL;
	if (!doc) {
		*why = aprintf("%d:%d: error: %s", je.line, je.column, je.text);
		return NULL;
	}
	if (!(v = json_object_get(doc, "idpmake_plan")) || !json_is_integer(v) || json_integer_value(v) != 1)
		*why = "not a saved plan of this idpmake (idpmake plan -o FILE writes one)";
	else if (!json_is_string(json_object_get(doc, "idpmake")))
		*why = "not a saved plan: \"idpmake\" is not the version of the idpmake that made it";
	else if (!string_map(json_object_get(doc, "distro"), 0) ||
		 !json_is_string(json_object_get(json_object_get(doc, "distro"), "hash")))
		*why = "not a saved plan: \"distro\" is not a map of strings with the manifest's hash";
	else if (!string_list(json_object_get(doc, "targets")) || !string_list(json_object_get(doc, "labels")))
		*why = "not a saved plan: \"targets\" and \"labels\" are not lists of strings";
	else if (!json_is_object(json_object_get(doc, "vars")) ||
		 !string_map(json_object_get(json_object_get(doc, "vars"), "distro"), 0) ||
		 !string_map(json_object_get(json_object_get(doc, "vars"), "clusters"), 1))
		*why = "not a saved plan: \"vars\" is not the distro's and the clusters' variables";
	else if (!json_is_array(st = json_object_get(doc, "steps")))
		*why = "not a saved plan: \"steps\" is not a list";
	json_array_foreach(st, i, v) {
		json_t *out = json_object_get(v, "output"), *in = json_object_get(v, "inputs");
		if (*why)
			break;
		if (!json_is_object(v) || !json_is_string(json_object_get(v, "id")) ||
		    !json_is_string(json_object_get(v, "kind")) || !json_is_string(json_object_get(v, "key")) ||
		    !json_is_boolean(json_object_get(v, "run")) || (out && !json_is_string(out)) ||
		    (in && !string_map(in, 0)))
			*why = aprintf("not a saved plan: steps[%zu] is not a step (id, kind, key, run; a render's output and inputs)", i);
	}
	if (*why) {
		json_decref(doc);
		return NULL;
	}
	return doc;
}

static json_t *load_plan(const char *path)
{
	size_t len;
	char *text = read_file(path, &len);
	const char *why;
	json_t *doc;

	if (!text) {
		error("cannot read the plan %s:", path);
		return NULL;
	}
	doc = savedplan_parse(text, len, &why);
	free(text);
	if (!doc && isdigit((unsigned char)*why))
		fprintf(stderr, "%s:%s\n", path, why);	/* LINE:COL: error: ... */
	else if (!doc)
		fprintf(stderr, "idpmake: %s is %s\n", path, why);
	return doc;
}

static const char **strings(json_t *a, size_t *n)
{
	const char **v = amalloc((json_array_size(a) + 1) * sizeof(*v));

	*n = 0;
	for (size_t i = 0; i < json_array_size(a); i++)
		if (json_is_string(json_array_get(a, i)))
			v[(*n)++] = astrdup(json_string_value(json_array_get(a, i)));
	return v;
}

int savedplan_targets(struct ctx *c)
{
	json_t *doc;

	if (c->ntargets || c->labels.n) {
		fprintf(stderr, "idpmake: up --plan runs the targets the plan was made for: give no targets or -l\n");
		return 2;
	}
	if (c->prune || c->overwrite || c->refresh) {
		fprintf(stderr, "idpmake: up --plan does what the plan says: %s would add to it; make the plan again instead\n",
			c->prune ? "--prune" : c->overwrite ? "--overwrite" : "--refresh");
		return 2;
	}
	if (!(doc = load_plan(c->plan_file)))
		return 2;
	c->targets = (char **)strings(json_object_get(doc, "targets"), &c->ntargets);
	c->labels.v = strings(json_object_get(doc, "labels"), &c->labels.n);
	json_decref(doc);
	return 0;
}

/* the first variable that differs from the plan's, or NULL */
static const char *vars_differ(const struct kvlist *now, json_t *plan, const char *where)
{
	const char *name;
	json_t *v;

	for (size_t i = 0; i < now->n; i++) {
		const char *h = hex_of(hash_bytes(now->v[i].value, strlen(now->v[i].value)));
		if (!(v = json_object_get(plan, now->v[i].key)))
			return aprintf("variable '%s'%s was added", now->v[i].key, where);
		if (!json_is_string(v) || strcmp(json_string_value(v), h))
			return aprintf("variable '%s'%s changed", now->v[i].key, where);
	}
	json_object_foreach(plan, name, v) {
		size_t i = 0;
		while (i < now->n && strcmp(now->v[i].key, name))
			i++;
		if (i == now->n)
			return aprintf("variable '%s'%s was removed", name, where);
	}
	return NULL;
}

/* which part of a render's key changed since the plan */
static const char *part_changed(struct planner *pl, struct step *s, json_t *planned)
{
	json_t *now = key_parts(pl, s), *v;
	const char *name, *what = NULL;

	json_object_foreach(now, name, v) {
		json_t *p = json_object_get(planned, name);
		if (!p)
			what = aprintf("%s was added", name);
		else if (!json_equal(p, v))
			what = aprintf("%s changed", name);
		if (what)
			break;
	}
	if (!what)
		json_object_foreach(planned, name, v) if (!json_object_get(now, name)) {
			what = aprintf("%s was removed", name);
			break;
		}
	json_decref(now);
	return what ? what : "its key changed";
}

static const char *key_hint(const struct step *s)
{
	switch (s->kind) {
	case STEP_PUSH:
		return "the folders it would change, or what the GitOps repository holds, changed";
	case STEP_SYNC:
		return "the Application, its server or its render changed";
	case STEP_PRE:
	case STEP_POST:
		return "the hook's command, the script it runs, its inputs or variables changed";
	case STEP_WAVE:
		return "the wave, the script its check runs, or its clusters' steps changed";
	case STEP_REGISTER:
		return "the cluster's or the repository's registration changed";
	case STEP_CREATE:
		return "the kind cluster's name, image or port changed, or it is gone";
	case STEP_TLS:
		return "the certificate's names changed, or its files are gone";
	case STEP_PROVISION:
		return "the cluster's Cluster changed";
	case STEP_READY:
		return "the cluster was provisioned again";
	case STEP_CAPICHECK:
		return "the management cluster or what its clusters want changed";
	default:
		return "its inputs changed";
	}
}

/* the first difference between this run and the plan, or NULL */
static const char *differs(struct ctx *c, json_t *doc, char *run, int *failed)
{
	struct graph *g = c->g;
	json_t *byid = json_object(), *selected = json_object(), *steps = json_object_get(doc, "steps"), *vars = json_object_get(doc, "vars"), *v;
	const char *why = NULL, *version = json_string_value(json_object_get(doc, "idpmake"));
	size_t i;

	if (!version || strcmp(version, IDPMAKE_VERSION)) {
		why = aprintf("the plan was made by idpmake %s, this is idpmake %s", version ? version : "?", IDPMAKE_VERSION);
		goto out;
	}
	/* 2. variables */
	why = vars_differ(&c->d->vars, json_object_get(vars, "distro"), "");
	for (i = 0; !why && i < c->d->nclusters; i++) {
		json_t *pv = json_object_get(json_object_get(vars, "clusters"), c->d->clusters[i].name);
		if (!pv)
			why = aprintf("cluster '%s' was added", c->d->clusters[i].name);
		else
			why = vars_differ(&c->d->clusters[i].vars, pv, aprintf(" of cluster '%s'", c->d->clusters[i].name));
	}
	if (why)
		goto out;
	/* 3. the same steps */
	json_array_foreach(steps, i, v) {
		const char *id = json_string_value(json_object_get(v, "id"));
		if (id)
			json_object_set(byid, id, v);
	}
	for (i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		if (!s->selected)
			continue;
		json_object_set_new(selected, s->id, json_true());
		if (!why && !json_object_get(byid, s->id))
			why = aprintf("%s is not in the plan", s->id);
	}
	json_array_foreach(steps, i, v) {
		const char *id = json_string_value(json_object_get(v, "id"));
		if (why)
			break;
		if (!id || !json_object_get(selected, id))
			why = aprintf("%s of the plan is not in the distro any more", id ? id : "a step");
	}
	/* 4. the renders' keys, and no render the plan does not do */
	for (i = 0; i < g->nsteps && !why; i++) {
		struct step *s = g->steps[i];
		json_t *p = json_object_get(byid, s->id);
		if (!s->selected || s->kind != STEP_RENDER)
			continue;
		if (strcmp(hex_of(s->key), json_string_value(json_object_get(p, "key")) ?: ""))
			why = aprintf("%s: %s since the plan", s->id, part_changed(&c->pl, s, json_object_get(p, "inputs")));
		else if (s->dirty && !json_is_true(json_object_get(p, "run")))
			why = aprintf("%s would render, and the plan does not render it: the state changed since the plan", s->id);
	}
	if (why)
		goto out;
	/* 5. the outputs the plan approved */
	if (predict(&c->pl, run) < 0) {
		*failed = 1;
		goto out;
	}
	for (i = 0; i < g->nsteps && !why; i++) {
		struct step *s = g->steps[i];
		json_t *p = json_object_get(byid, s->id);
		const char *planned = json_string_value(json_object_get(p, s->kind == STEP_RENDER ? "output" : "key"));
		if (!s->selected)
			continue;
		if (s->kind == STEP_RENDER && strcmp(hex_of(s->output), planned ? planned : ""))
			why = aprintf("%s: the render's output is %.12s, the plan's is %.12s (the renderer's output is not"
				      " reproducible, or the plan was made from other files)",
				      s->id, hex_of(s->output), planned ? planned : "none");
		/*
		 * 6. the other steps: each that runs, the plan runs; and every one has the plan's key
		 * (what a hook or check runs is in it), but a push that changes nothing now, whose
		 * key is then the empty set of changes: the plan was applied
		 */
		else if (s->kind != STEP_RENDER && run[i] && !json_is_true(json_object_get(p, "run")))
			why = aprintf("%s would run (%s), and the plan does not run it", s->id, reason_text(s));
		else if (s->kind != STEP_RENDER && (run[i] || s->kind != STEP_PUSH) &&
			 strcmp(hex_of(s->key), planned ? planned : ""))
			why = aprintf("%s: its key differs from the plan's: %s", s->id, key_hint(s));
	}
	/* 7. the manifest itself (a comment, a package not selected) */
	if (!why && strcmp(distro_hash(c), json_string_value(json_object_get(json_object_get(doc, "distro"), "hash")) ?: ""))
		why = aprintf("%s changed since the plan", c->file);
out:
	json_decref(byid);
	json_decref(selected);
	return why;
}

int savedplan_check(struct ctx *c)
{
	json_t *doc = load_plan(c->plan_file);
	char *run = amalloc(c->g->nsteps + 1);
	const char *why;
	int failed = 0, bound = 0;

	if (!doc)
		return 2;
	why = differs(c, doc, run, &failed);
	json_decref(doc);
	if (failed)
		return 1;
	if (why) {
		fprintf(stderr,
			"idpmake: up --plan %s: refused: %s; nothing was pushed or synced (make a new plan: idpmake plan -o %s)\n",
			c->plan_file, why, c->plan_file);
		return 2;
	}
	/* the renders the plan approved are done: recorded as up would, then build.c takes them as up to date */
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		struct inputs in;
		if (!s->selected || s->kind != STEP_RENDER || !run[i])
			continue;
		plan_inputs(&c->pl, s, &in);
		if (state_step_ok(c->st, s->id, s->key, s->output, &in, NULL, 0) < 0)
			return 1;
		bound++;
	}
	status_info("idpmake: up --plan %s: the run is the plan; %d render%s bound to the plan's output", c->plan_file,
		    bound, bound == 1 ? "" : "s");
	return 0;
}
