/*
 * livediff.c - diff --live, diff --from and diff CLUSTER_A/ CLUSTER_B/
 * (livediff.h; issue 8 §1 and §2).
 *
 * Argo CD's REST API never diffs manifests that are not pushed
 * (../shared/notes/live-diff.md), so the comparison is ours: per
 * Application, GET .../NAME (does it exist, its ignoreDifferences, the
 * synced revision) and GET .../NAME/managed-resources, whose
 * normalizedLiveState is the live object, then Argo CD's rules:
 *
 *   1. An object rendered and not live (or the Application not there yet)
 *      is `create`; live, managed and not rendered is `prune` (deleted on
 *      sync only where the package syncs with prune); both: `change` when
 *      they differ, else the same.
 *   2. Fields only live do not count: the live object is projected onto
 *      the fields the render sets (objdiff_project) before the compare,
 *      but a field the live object's last-applied-configuration holds
 *      (what the last sync applied) and the render dropped does: Argo CD
 *      diffs three ways (gitops-engine diff.Diff), and a sync removes it.
 *      A Secret's last-applied is masked by Argo CD: two ways there.
 *   3. `status` never counts; the Application's ignoreDifferences
 *      jsonPointers are removed from both sides; a cluster-scoped object
 *      (one Argo CD lists without a namespace; for an object it does not
 *      list yet, a Kubernetes kind or one whose CRD a selected package
 *      renders with scope: Cluster, objdiff_cluster_scoped) has no
 *      metadata.namespace on either side, nor in its label.  Argo CD's
 *      resource-tracking marks (annotation, label or both, argotrack.c)
 *      do not count.
 *   4. Hooks (argocd_is_hook, argohook.c) are neither rendered objects nor live items here:
 *      a sync runs them, Argo CD does not list them as managed.
 *   5. Secrets: every data value is replaced by a placeholder on both sides
 *      before anything is compared, printed or saved.  Argo CD masks live
 *      values ("++++++++", equal values equal within one answer), so keys
 *      are compared: added and removed keys are named; a key whose live
 *      value differs from Argo CD's own target is marked; for the others
 *      the note says the values may differ.
 */
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argo/argoapi.h"
#include "argo/argohook.h"
#include "argo/argocd.h"
#include "render/bundle.h"
#include "run/ctx.h"
#include "review/rendered.h"
#include "run/plan.h"
#include "base/hash.h"
#include "review/argotrack.h"
#include "review/diffout.h"
#include "review/livediff.h"
#include "review/objdiff.h"
#include "base/util.h"

static const char HIDDEN[] = "(hidden)";

/* ---- objects --------------------------------------------------------------- */

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : "";
}

/* a field as it is printed: what Argo CD or a saved diff says is hostile (term_safe) */
static const char *shown(json_t *o, const char *key)
{
	return term_safe(str(o, key));
}

/* "apps/Deployment ns/name", "ConfigMap ns/name", "Namespace name" (arena) */
static const char *label(const char *group, const char *kind, const char *ns, const char *name)
{
	return aprintf("%s%s%s %s%s%s", group, *group ? "/" : "", kind, ns, *ns ? "/" : "", name);
}

static int is_secret(const char *group, const char *kind)
{
	return !*group && !strcmp(kind, "Secret");
}

/* a Secret's data and stringData keys with their values (a new object), removing both from o */
static json_t *take_secret_data(json_t *o)
{
	json_t *keys = json_object(), *v;
	const char *k;

	json_object_foreach(json_object_get(o, "data"), k, v)
		json_object_set(keys, k, v);
	json_object_foreach(json_object_get(o, "stringData"), k, v)
		json_object_set(keys, k, v);
	json_object_del(o, "data");
	json_object_del(o, "stringData");
	return keys;
}

/* the jsonPointers of the Application's ignoreDifferences that apply to an object */
static json_t *ignore_pointers(json_t *spec, const char *group, const char *kind, const char *ns, const char *name)
{
	json_t *out = json_array(), *rule;
	size_t i;

	json_array_foreach(json_object_get(spec, "ignoreDifferences"), i, rule) {
		json_t *p;
		size_t j;
		if (strcmp(str(rule, "group"), group) || strcmp(str(rule, "kind"), kind) ||
		    (*str(rule, "name") && strcmp(str(rule, "name"), name)) ||
		    (*str(rule, "namespace") && strcmp(str(rule, "namespace"), ns)))
			continue;
		json_array_foreach(json_object_get(rule, "jsonPointers"), j, p)
			if (json_is_string(p))
				json_array_append(out, p);
	}
	return out;
}

/*
 * rules 2-3 on one side: status, pointers, the namespace of a cluster-scoped object, the server's bookkeeping;
 * on the live side (app: the Application, else NULL) Argo CD's tracking marks too (argotrack.c)
 */
static void normalize(json_t *o, int cluster_scoped, json_t *pointers, json_t *app, int rendered_label)
{
	json_t *md = json_object_get(o, "metadata"), *p;
	size_t i;

	if (app)
		argotrack_strip(o, app, rendered_label);

	json_object_del(o, "status");
	if (cluster_scoped)
		json_object_del(md, "namespace");
	json_array_foreach(pointers, i, p)
		objdiff_drop(o, json_string_value(p));
	/* only ever live; shown when a live object is printed whole (prune) */
	for (const char *const *k = (const char *const[]){ "uid", "resourceVersion", "creationTimestamp", "generation",
							   "managedFields", NULL }; *k; k++)
		json_object_del(md, *k);
	json_object_del(json_object_get(md, "annotations"), "argocd.argoproj.io/tracking-id");
	json_object_del(json_object_get(md, "annotations"), "kubectl.kubernetes.io/last-applied-configuration");
	if (json_object_get(md, "annotations") && !json_object_size(json_object_get(md, "annotations")))
		json_object_del(md, "annotations");
}

static void note_keys(json_t *notes, const char *what, json_t *keys)
{
	struct buf b = BUF_INIT;
	size_t i;
	json_t *k;

	const char **v;

	if (!json_array_size(keys))
		return;
	v = amalloc(json_array_size(keys) * sizeof(*v));
	json_array_foreach(keys, i, k)
		v[i] = json_string_value(k);
	qsort(v, json_array_size(keys), sizeof(*v), strptrcmp);
	buf_adds(&b, what);
	for (i = 0; i < json_array_size(keys); i++)
		buf_addf(&b, "%s%s", i ? ", " : " ", v[i]);
	json_array_append_new(notes, json_string(b.s));
	buf_release(&b);
}

/* ---- the render side ------------------------------------------------------- */

/* the step's bundle: from the cache when its key is unchanged, else rendered now */
static int step_bundle(struct ctx *c, struct step *s, struct bundle *b)
{
	if (!s->dirty && !hash_zero(s->output))
		return bundle_read(bundle_path(c->statedir, s->output), b);
	return render_one(c, s, b);
}

struct obj {
	const char *group, *kind, *ns, *name, *file;
	const char *rns;	/* the namespace as rendered (or the package's): what matches a live item */
	json_t *v;
	int matched;
};

/* the step's objects (arena array; v owned by the caller: objs_free); CRDs of scope Cluster noted in crds */
static int step_objects(struct ctx *c, struct step *s, struct obj **out, size_t *n, json_t *crds)
{
	struct bundle b;
	struct obj *v = NULL;
	int ret = 0;

	*n = 0;
	if (step_bundle(c, s, &b) < 0)
		return -1;
	v = amalloc((b.n + 1) * sizeof(*v));
	for (size_t i = 0; i < b.n; i++) {
		const char *api;
		json_t *o;
		struct obj *x = &v[*n];
		if (!bundle_is_manifest(b.v[i].name))
			continue;	/* a class package's REVISION (capiclass.h): Argo CD reads no other file */
		o = objdiff_parse(aprintf("%s/%s", s->gitpath, b.v[i].name), b.v[i].data, b.v[i].len);
		if (!o) {
			ret = -1;
			continue;
		}
		if (argocd_is_hook(o)) {
			json_decref(o);
			continue;
		}
		api = str(o, "apiVersion");
		x->group = strchr(api, '/') ? astrndup(api, (size_t)(strchr(api, '/') - api)) : "";
		x->kind = astrdup(str(o, "kind"));
		x->name = astrdup(str(json_object_get(o, "metadata"), "name"));
		x->ns = astrdup(str(json_object_get(o, "metadata"), "namespace"));
		if (!*x->ns)
			x->ns = s->namespace ? s->namespace : "";
		x->rns = x->ns;
		if (crds)
			objdiff_note_crd(o, crds);
		x->file = astrdup(b.v[i].name);
		x->v = o;
		(*n)++;
	}
	bundle_free(&b);
	*out = v;
	return ret;
}

static void objs_free(struct obj *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		json_decref(v[i].v);
}

/* ---- printing ------------------------------------------------------------- */

/* each line in diffout.h's colours */
static void print_lines(json_t *lines, int color)
{
	size_t i;
	json_t *l;

	json_array_foreach(lines, i, l) {
		const char *s = json_string_value(l), *on;
		if (!s)
			continue;
		on = color ? diff_line_color(s) : "";
		printf("%s%s%s\n", on, term_safe(s), *on ? "\x1b[m" : "");
	}
}

/* one object: its status (shown as `word`, or as it is), notes and lines */
static void print_object(json_t *o, const char *what, const char *word, int color)
{
	const char *st = str(o, "status");
	const char *col = !strcmp(st, "create") || !strcmp(st, "only-b") ? "\x1b[32m"
			  : !strcmp(st, "prune") || !strcmp(st, "only-a") ? "\x1b[31m"
			  : !strcmp(st, "change")			  ? "\x1b[33m"
									  : "";
	size_t i;
	json_t *n;

	printf("%s%-7s%s %s", color ? col : "", word ? word : term_safe(st), color && *col ? "\x1b[m" : "", term_safe(what));
	if (!strcmp(st, "prune"))
		printf(json_is_true(json_object_get(o, "deleted")) ? " (would be deleted)" : " (kept: the package syncs without prune)");
	printf("\n");
	json_array_foreach(json_object_get(o, "notes"), i, n)
		printf("        # %s\n", term_safe(json_string_value(n)));
	print_lines(json_object_get(o, "diff"), color);
}

static int doc_differences(json_t *doc)
{
	if (!strcmp(str(doc, "mode"), "clusters"))
		return (int)json_integer_value(json_object_get(doc, "differ"));
	return (int)(json_integer_value(json_object_get(doc, "create")) + json_integer_value(json_object_get(doc, "change")) +
		     json_integer_value(json_object_get(doc, "prune")));
}

/* print a diff document (text or --json) and the one-line summary; the exit code */
static int show(struct ctx *c, json_t *doc)
{
	int color = diff_color(c), differ = doc_differences(doc);
	size_t i, j;
	json_t *x, *o;

	if (c->json) {
		json_print(json_incref(doc), 1);
	} else if (!strcmp(str(doc, "mode"), "clusters")) {
		const char *a = shown(doc, "a"), *b = shown(doc, "b");
		json_array_foreach(json_object_get(doc, "packages"), i, x) {
			const char *only = shown(x, "only");
			if (*only) {
				printf("%spackage %s: only on %s%s\n", color ? "\x1b[1m" : "", shown(x, "package"), only,
				       color ? "\x1b[m" : "");
				continue;
			}
			if (!json_array_size(json_object_get(x, "objects")))
				continue;
			printf("%spackage %s: %s and %s differ%s\n", color ? "\x1b[1m" : "", shown(x, "package"), a, b,
			       color ? "\x1b[m" : "");
			json_array_foreach(json_object_get(x, "objects"), j, o) {
				const char *st = str(o, "status");
				print_object(o, shown(o, "file"), !strcmp(st, "only-a")   ? aprintf("only-%s", a)
								: !strcmp(st, "only-b") ? aprintf("only-%s", b)
											: NULL, color);
			}
		}
	} else {
		json_array_foreach(json_object_get(doc, "applications"), i, x) {
			const char *rev = shown(x, "revision");
			if (!json_array_size(json_object_get(x, "objects")))
				continue;
			printf("%sapplication %s (%s/%s)%s%.*s%s%s\n", color ? "\x1b[1m" : "", shown(x, "name"), shown(x, "cluster"),
			       shown(x, "package"), *rev ? ", synced at " : "", 12, rev,
			       json_is_true(json_object_get(x, "exists")) ? "" : ": does not exist yet", color ? "\x1b[m" : "");
			json_array_foreach(json_object_get(x, "objects"), j, o)
				print_object(o, label(shown(o, "group"), shown(o, "kind"), shown(o, "namespace"), shown(o, "name")), NULL,
					     color);
		}
		json_array_foreach(json_object_get(doc, "uncompared"), i, x)
			printf("%sapplication %s (%s/%s): changes (chart, values or source); Argo CD renders its objects: "
			       "not compared%s\n", color ? "\x1b[1m" : "", shown(x, "name"), shown(x, "cluster"), shown(x, "package"),
			       color ? "\x1b[m" : "");
	}
	if (!strcmp(str(doc, "mode"), "clusters"))
		fprintf(stderr, "idpmake: %d object%s differ%s between %s and %s\n", differ, differ == 1 ? "" : "s",
			differ == 1 ? "s" : "", shown(doc, "a"), shown(doc, "b"));
	else
		fprintf(stderr, "idpmake: %d object%s differ%s from what Argo CD reports live (%d to create, %d to change, %d to prune)\n",
			differ, differ == 1 ? "" : "s", differ == 1 ? "s" : "",
			(int)json_integer_value(json_object_get(doc, "create")),
			(int)json_integer_value(json_object_get(doc, "change")),
			(int)json_integer_value(json_object_get(doc, "prune")));
	if (json_array_size(json_object_get(doc, "uncompared")))
		fprintf(stderr, "idpmake: and %zu Application%s whose objects Argo CD renders change%s\n",
			json_array_size(json_object_get(doc, "uncompared")),
			json_array_size(json_object_get(doc, "uncompared")) == 1 ? "" : "s",
			json_array_size(json_object_get(doc, "uncompared")) == 1 ? "s" : "");
	return c->exit_code && (differ || json_array_size(json_object_get(doc, "uncompared"))) ? 1 : 0;
}

/* ---- diff --live ------------------------------------------------------------ */

/* the commit of the git repository that holds the distro, or NULL */
static const char *distro_commit(const struct ctx *c)
{
	git_repository *repo = NULL;
	git_oid oid;
	const char *r = NULL;
	char hex[GIT_OID_HEXSZ + 1];

	git_libgit2_init();
	if (git_repository_open_ext(&repo, c->d->dir, 0, NULL) == 0 && git_reference_name_to_id(&oid, repo, "HEAD") == 0)
		r = astrdup(git_oid_tostr(hex, sizeof(hex), &oid));
	git_repository_free(repo);
	git_libgit2_shutdown();
	return r;
}

/* GET a JSON object: 0 (200), 1 (the application does not exist), -1 with *err */
static int get_json(struct call *call, const char *suffix, json_t **out, const char **err)
{
	struct resp r = { .code = -1 };
	int ret = -1;

	*out = NULL;
	if (request(call, "GET", app_path(call, suffix, NULL), NULL, &r, err) == 0) {
		if (r.status == 200 && json_is_object(r.json)) {
			*out = json_incref(r.json);
			ret = 0;
		} else if (r.status == 404) {
			ret = 1;	/* project= is in the query: a 403 is RBAC refusing, not a missing Application */
		} else {
			*err = r.status == 200 ? "Argo CD's answer is not a JSON object"
					       : api_error(call, aprintf("reading application '%s'", call->app), &r);
		}
	}
	resp_reset(&r);
	return ret;
}

/* a live side from a ResourceDiff's JSON string ("null": none); a new reference or NULL */
static json_t *state_of(json_t *item, const char *field)
{
	json_t *v = json_loads(str(item, field), JSON_DECODE_ANY, NULL);
	if (v && !json_is_object(v)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}

struct tally {
	int create, change, prune;
};

/* the live object's last-applied configuration, normalized as the live side; NULL when there is none (or masked) */
static json_t *last_applied(json_t *live, int scoped, json_t *pointers, json_t *app, int rendered_label)
{
	json_t *ann = json_object_get(json_object_get(live, "metadata"), "annotations");
	json_t *v = json_object_get(ann, "kubectl.kubernetes.io/last-applied-configuration"), *o;

	if (!json_is_string(v) || !(o = json_loads(json_string_value(v), JSON_REJECT_DUPLICATES, NULL)))
		return NULL;
	if (!json_is_object(o)) {
		json_decref(o);
		return NULL;
	}
	normalize(o, scoped, pointers, app, rendered_label);
	/* gitops-engine's ThreeWayDiff drops it (removeNamespaceAnnotation): Argo CD sets it, the render need not */
	json_object_del(json_object_get(o, "metadata"), "namespace");
	return o;
}

/* compare one rendered object (x, or NULL for a prune) with its live item (or NULL); appends to objs */
static int compare(struct obj *x, json_t *item, json_t *app, int prune_on, json_t *objs, struct tally *t)
{
	json_t *spec = json_object_get(app, "spec");
	const char *group = x ? x->group : str(item, "group"), *kind = x ? x->kind : str(item, "kind");
	const char *ns = item ? str(item, "namespace") : x->ns, *name = x ? x->name : str(item, "name");
	int scoped = item ? !*ns : !*x->ns, secret = is_secret(group, kind), n;
	json_t *live = item ? state_of(item, "normalizedLiveState") : NULL;
	json_t *target = x ? json_deep_copy(x->v) : NULL, *e = json_object(), *notes = json_array(), *lines = json_array();
	json_t *pointers = ignore_pointers(spec, group, kind, ns, name), *proj = NULL, *last = NULL;
	const char *status;

	if (scoped)
		ns = "";
	int rendered_label = target && argotrack_rendered_label(target);

	if (target)
		normalize(target, scoped, pointers, NULL, 0);
	if (live && !secret)
		last = last_applied(live, scoped, pointers, app, rendered_label);
	if (live)
		normalize(live, scoped, pointers, app, rendered_label);
	/* Secrets in a List, and a Secret's last-applied annotation: hidden (its data below) */
	objdiff_hide_secrets(target, live, secret), objdiff_hide_secrets(live, NULL, secret);
	if (secret) {
		json_t *tk = target ? take_secret_data(target) : json_object();
		json_t *lk = live ? take_secret_data(live) : json_object();
		json_t *argo = item ? state_of(item, "targetState") : NULL;
		json_t *ak = argo ? take_secret_data(argo) : json_object();
		json_t *added = json_array(), *removed = json_array(), *common = json_array(), *differs = json_array();
		json_t *td = json_object(), *ld = json_object(), *v;
		const char *k;
		json_object_foreach(tk, k, v) {
			json_object_set_new(td, k, json_string(HIDDEN));
			if (live && !json_object_get(lk, k))
				json_array_append_new(added, json_string(k));
		}
		json_object_foreach(lk, k, v) {
			json_t *av = json_object_get(ak, k);
			int drift = av && !json_equal(av, v);
			json_object_set_new(ld, k, json_string(drift ? "(hidden, differs from Argo CD's target)" : HIDDEN));
			if (target && !json_object_get(tk, k))
				json_array_append_new(removed, json_string(k));
			else if (target)
				json_array_append_new(drift ? differs : common, json_string(k));
		}
		if (target && json_object_size(td))
			json_object_set_new(target, "data", td);
		else
			json_decref(td);
		if (live && json_object_size(ld))
			json_object_set_new(live, "data", ld);
		else
			json_decref(ld);
		note_keys(notes, "data keys added:", added);
		note_keys(notes, "data keys removed:", removed);
		note_keys(notes, "live values differ from Argo CD's target:", differs);
		note_keys(notes, "values may differ (Argo CD masks them):", common);
		json_decref(tk), json_decref(lk), json_decref(ak), json_decref(argo);
		json_decref(added), json_decref(removed), json_decref(common), json_decref(differs);
	}
	if (target && live) {
		json_t *data = secret ? json_incref(json_object_get(live, "data")) : NULL;
		proj = objdiff_project(live, target, last);
		/* a Secret's data is compared whole: a key only live is a key the render removes */
		if (data)
			json_object_set_new(proj, "data", data);
	} else {
		proj = live ? json_incref(live) : NULL;
	}
	n = objdiff_lines(proj, target, aprintf("live %s", label(group, kind, ns, name)),
			  aprintf("render %s", label(group, kind, ns, name)), lines);
	status = !target ? "prune" : !proj ? "create" : n > 0 ? "change" : "same";
	if (n >= 0 && (strcmp(status, "same") || json_array_size(notes))) {
		json_object_set_new(e, "group", json_string(group));
		json_object_set_new(e, "kind", json_string(kind));
		json_object_set_new(e, "namespace", json_string(ns));
		json_object_set_new(e, "name", json_string(name));
		json_object_set_new(e, "status", json_string(status));
		if (!target)
			json_object_set_new(e, "deleted", json_boolean(prune_on));
		json_object_set(e, "diff", lines);
		json_object_set(e, "notes", notes);
		json_array_append(objs, e);
		t->create += !strcmp(status, "create");
		t->change += !strcmp(status, "change");
		t->prune += !strcmp(status, "prune");
	}
	json_decref(e), json_decref(notes), json_decref(lines), json_decref(pointers);
	json_decref(proj), json_decref(live), json_decref(target), json_decref(last);
	return n < 0 ? -1 : 0;
}

/* one Application: its entry in the document; -1 after a message */
static int live_app(struct ctx *c, struct argocd *a, struct step *s, struct obj *v, size_t n, json_t *apps,
		    struct tally *t)
{
	const char *name = argocd_app_name(c->d, s), *err = NULL;
	json_t *app = NULL, *mr = NULL, *items, *e = json_object(), *objs = json_array(), *item;
	struct call call;
	size_t i;
	char hex[33];
	int r, ret = -1;

	if (!name)
		goto out;
	if (call_open(&call, a, name, NULL, 120) < 0) {
		error("%s: cannot start a libcurl handle", s->id);
		goto out;
	}
	if ((r = get_json(&call, "", &app, &err)) == 0)
		r = get_json(&call, "/managed-resources", &mr, &err);
	call_close(&call);
	if (r < 0) {
		error("%s: %s", s->id, err);
		goto out;
	}
	items = json_object_get(mr, "items");	/* {} when there are none */
	/* rule 1: every rendered object against its live item */
	for (size_t k = 0; k < n; k++) {
		json_t *found = NULL;
		json_array_foreach(items, i, item) {
			if (json_is_true(json_object_get(item, "hook")) || strcmp(str(item, "group"), v[k].group) ||
			    strcmp(str(item, "kind"), v[k].kind) || strcmp(str(item, "name"), v[k].name) ||
			    json_object_get(item, "idpmake-matched"))
				continue;
			/* Argo CD's listing says the scope: a render's CRD never makes a namespaced item match another's */
			if (!strcmp(str(item, "namespace"), v[k].rns) || !*str(item, "namespace")) {
				found = item;
				json_object_set_new(item, "idpmake-matched", json_true());
				break;
			}
		}
		if (compare(&v[k], found, app, s->pkg->sync.prune, objs, t) < 0)
			goto out;
	}
	json_array_foreach(items, i, item) {
		json_t *live;
		if (json_object_get(item, "idpmake-matched") || json_is_true(json_object_get(item, "hook")))
			continue;
		if (!(live = state_of(item, "normalizedLiveState")))
			continue;	/* neither rendered nor live */
		json_decref(live);
		if (compare(NULL, item, app, s->pkg->sync.prune, objs, t) < 0)
			goto out;
	}
	json_object_set_new(e, "name", json_string(name));
	json_object_set_new(e, "step", json_string(s->id));
	json_object_set_new(e, "cluster", json_string(s->cluster->name));
	json_object_set_new(e, "package", json_string(s->pkg->name));
	hash_hex(s->key, hex);
	json_object_set_new(e, "key", json_string(hex));
	hash_hex(s->output, hex);
	json_object_set_new(e, "output", json_string(hash_zero(s->output) ? "" : hex));	/* when cached */
	json_object_set_new(e, "exists", json_boolean(app != NULL));
	json_object_set_new(e, "revision", json_string(app ? jstr(app, "status.sync.revision") : ""));
	json_object_set_new(e, "prune", json_boolean(s->pkg->sync.prune));
	json_object_set(e, "objects", objs);
	json_array_append(apps, e);
	ret = 0;
out:
	json_decref(app), json_decref(mr), json_decref(e), json_decref(objs);
	return ret;
}

/* packages whose objects Argo CD renders itself, or that are Applications: not compared */
static int compared(const struct step *s)
{
	const struct rule *r = s->pkg->rule;
	return !(r && ((r->builtin == RENDER_HELM && !s->pkg->render_local) || r->builtin == RENDER_ARGOCD_APP)) &&
	       !s->pkg->group;
}

static int save(struct ctx *c, json_t *doc)
{
	char *text = json_dumps(doc, JSON_INDENT(2));
	int r = text ? write_file_atomic(c->outdir, text, strlen(text)) : -1;

	free(text);
	if (r < 0)
		return error("cannot write %s:", c->outdir);
	fprintf(stderr, "idpmake: diff saved in %s\n", c->outdir);
	return 0;
}

int livediff_live(struct ctx *c)
{
	struct argocd *a;
	struct tally t = { 0 };
	const char *err = NULL, *commit;
	json_t *doc, *apps, *crds, *unc;
	struct {
		struct step *s;
		struct obj *v;
		size_t n;
	} *ld;
	size_t nld = 0;
	int r, failed = 0;

	if ((r = ctx_load(c, 1)))
		return r;
	if (plan_renders(&c->pl) < 0)
		return 2;
	if (!argocd_server(c->d)) {
		error("diff --live compares with Argo CD, and none is configured: set argocd.server or ARGOCD_SERVER");
		return 2;
	}
	if (!(a = argocd_connect(c->d, c->statedir, c->verbose, &err))) {
		error("%s", err ? err : "cannot use Argo CD");
		return 2;
	}
	commit = distro_commit(c);
	doc = json_object();
	apps = json_array();
	json_object_set_new(doc, "idpmake-diff", json_integer(1));
	json_object_set_new(doc, "mode", json_string("live"));
	json_object_set_new(doc, "commit", commit ? json_string(commit) : json_null());
	/* every render's objects first: a CRD of scope Cluster makes its kind's new objects cluster-scoped */
	ld = amalloc((c->g->nsteps + 1) * sizeof(*ld));
	crds = json_object();
	unc = json_array();
	for (size_t i = 0; i < c->g->nsteps && !failed; i++) {
		struct step *s = c->g->steps[i];
		if (s->kind != STEP_RENDER || !s->selected)
			continue;
		if (!compared(s)) {	/* a changed one still counts: its Application changes (chart, values) */
			fprintf(stderr, "idpmake: %s: rendered by Argo CD or an Application itself: not compared\n", s->id);
			/* a key unknown to this state (a fresh runner) is a change only where the GitOps repository differs */
			if (s->dirty && argocd_app_name(c->d, s) && render_differs_from_gitops(c, s) != 0)
				json_array_append_new(unc, json_pack("{s:s, s:s, s:s, s:s}", "name", argocd_app_name(c->d, s),
								     "step", s->id, "cluster", s->cluster->name,
								     "package", s->pkg->name));
			continue;
		}
		ld[nld].s = s;
		failed = step_objects(c, s, &ld[nld].v, &ld[nld].n, crds) < 0;
		nld++;
	}
	for (size_t i = 0; i < nld; i++)
		for (size_t k = 0; k < ld[i].n; k++)
			if (objdiff_cluster_scoped(ld[i].v[k].group, ld[i].v[k].kind, crds))
				ld[i].v[k].ns = "";
	for (size_t i = 0; i < nld && !failed; i++)
		failed = live_app(c, a, ld[i].s, ld[i].v, ld[i].n, apps, &t) < 0;
	for (size_t i = 0; i < nld; i++)
		objs_free(ld[i].v, ld[i].n);
	json_decref(crds);
	argocd_close(a);
	json_object_set_new(doc, "applications", apps);
	json_object_set_new(doc, "uncompared", unc);
	json_object_set_new(doc, "create", json_integer(t.create));
	json_object_set_new(doc, "change", json_integer(t.change));
	json_object_set_new(doc, "prune", json_integer(t.prune));
	if (!failed && c->outdir && save(c, doc) < 0)
		failed = 1;
	r = failed ? 2 : show(c, doc);
	json_decref(doc);
	return r;
}

int livediff_from(struct ctx *c)
{
	json_error_t je;
	json_t *doc = json_load_file(c->from, 0, &je);
	int r;

	if (!doc)
		return error("%s:%d:%d: error: not a saved diff: %s", c->from, je.line, je.column, je.text), 2;
	if (json_integer_value(json_object_get(doc, "idpmake-diff")) != 1 ||
	    (strcmp(str(doc, "mode"), "live") && strcmp(str(doc, "mode"), "clusters"))) {
		json_decref(doc);
		return error("%s: not a diff saved by idpmake diff -o", c->from), 2;
	}
	if (c->verbose || !c->json)
		fprintf(stderr, "idpmake: diff saved from %s%s\n", json_is_string(json_object_get(doc, "commit")) ? "commit " : "",
			json_is_string(json_object_get(doc, "commit")) ? shown(doc, "commit") : "a work tree outside git");
	r = show(c, doc);
	json_decref(doc);
	return r;
}

/* ---- diff CLUSTER_A/ CLUSTER_B/ [PACKAGE...] ------------------------------- */

int livediff_is_clusters(const struct ctx *c)
{
	for (size_t i = 0; i < 2; i++) {
		const char *t = i < c->ntargets ? c->targets[i] : NULL, *sl = t ? strchr(t, '/') : NULL;
		if (!sl || sl == t || sl[1])
			return 0;
	}
	return 1;
}

/* the render step of package p on cluster cl, or NULL */
static struct step *pkg_render(struct ctx *c, const char *cl, const char *pkg)
{
	for (size_t i = 0; i < c->g->nsteps; i++) {
		struct step *s = c->g->steps[i];
		if (s->kind == STEP_RENDER && s->selected && !strcmp(s->cluster->name, cl) && !strcmp(s->pkg->name, pkg))
			return s;
	}
	return NULL;
}

/* a copy of o with a Secret's data values hidden; values that differ from `other`'s are marked (other: NULL, none) */
static json_t *masked(json_t *o, json_t *other)
{
	json_t *c = json_deep_copy(o), *keys, *okeys = NULL, *d, *v;
	const char *k, *api = str(o, "apiVersion");

	if (strchr(api, '/') || strcmp(str(o, "kind"), "Secret"))
		return objdiff_hide_secrets(c, other, 0), c;	/* a List's Secrets */
	objdiff_hide_secrets(c, other, 1);
	keys = take_secret_data(c);
	if (other) {
		json_t *oc = json_deep_copy(other);
		okeys = take_secret_data(oc);
		json_decref(oc);
	}
	d = json_object();
	json_object_foreach(keys, k, v) {
		json_t *ov = okeys ? json_object_get(okeys, k) : NULL;
		json_object_set_new(d, k, json_string(ov && !json_equal(ov, v) ? "(hidden, differs)" : HIDDEN));
	}
	if (json_object_size(d))
		json_object_set_new(c, "data", d);
	else
		json_decref(d);
	json_decref(keys);
	json_decref(okeys);
	return c;
}

static int compare_package(struct ctx *c, const char *an, const char *bn, struct step *sa, struct step *sb, json_t *pkgs,
			   int *differ)
{
	struct obj *va = NULL, *vb = NULL;
	size_t na = 0, nb = 0, i = 0, j = 0;
	json_t *e = json_object(), *objs = json_array();
	int ret = -1;

	json_object_set_new(e, "package", json_string((sa ? sa : sb)->pkg->name));
	if (!sa || !sb) {
		json_object_set_new(e, "only", json_string(sa ? an : bn));
		(*differ)++;
		ret = 0;
		goto done;
	}
	if (step_objects(c, sa, &va, &na, NULL) < 0 || step_objects(c, sb, &vb, &nb, NULL) < 0)
		goto out;
	/* both lists are in the bundles' (sorted) file order */
	while (i < na || j < nb) {
		int cmp = i >= na ? 1 : j >= nb ? -1 : strcmp(va[i].file, vb[j].file), n;
		json_t *x = cmp <= 0 ? masked(va[i].v, NULL) : NULL;	/* the b side marks the values that differ */
		json_t *y = cmp >= 0 ? masked(vb[j].v, cmp == 0 ? va[i].v : NULL) : NULL, *lines = json_array();
		const char *file = cmp <= 0 ? va[i].file : vb[j].file;
		n = objdiff_lines(x, y, aprintf("%s/%s", an, file), aprintf("%s/%s", bn, file), lines);
		if (n > 0) {
			json_array_append_new(objs, json_pack("{s:s, s:s, s:O}", "file", file, "status",
							      cmp < 0 ? "only-a" : cmp > 0 ? "only-b" : "change", "diff", lines));
			(*differ)++;
		}
		json_decref(x), json_decref(y), json_decref(lines);
		if (n < 0)
			goto out;
		i += cmp <= 0;
		j += cmp >= 0;
	}
	ret = 0;
done:
	json_object_set(e, "objects", objs);
	json_array_append(pkgs, e);
out:
	objs_free(va, na);
	objs_free(vb, nb);
	json_decref(e), json_decref(objs);
	return ret;
}

int livediff_clusters(struct ctx *c)
{
	char **pkgs = c->targets + 2;
	size_t npkgs = c->ntargets - 2;
	const char *an = astrndup(c->targets[0], strlen(c->targets[0]) - 1);
	const char *bn = astrndup(c->targets[1], strlen(c->targets[1]) - 1);
	json_t *doc, *out;
	int r, differ = 0, failed = 0;

	c->ntargets = 2;	/* both clusters; the packages are filtered below */
	if ((r = ctx_load(c, 1)))
		return r;
	for (size_t k = 0; k < npkgs; k++) {
		size_t p = 0;
		while (p < c->d->npackages && !package_is(&c->d->packages[p], pkgs[k]))
			p++;
		if (p == c->d->npackages)
			return error("no package '%s' in the distro", pkgs[k]), 2;
	}
	if (plan_renders(&c->pl) < 0)
		return 2;
	doc = json_object();
	out = json_array();
	json_object_set_new(doc, "idpmake-diff", json_integer(1));
	json_object_set_new(doc, "mode", json_string("clusters"));
	json_object_set_new(doc, "a", json_string(an));
	json_object_set_new(doc, "b", json_string(bn));
	for (size_t p = 0; p < c->d->npackages && !failed; p++) {
		const struct package *pk = &c->d->packages[p];
		struct step *sa, *sb;
		int want = !npkgs;
		for (size_t k = 0; k < npkgs; k++)
			want |= package_is(pk, pkgs[k]);
		sa = pkg_render(c, an, pk->name);
		sb = pkg_render(c, bn, pk->name);
		if (!want || (!sa && !sb))
			continue;
		failed = compare_package(c, an, bn, sa, sb, out, &differ) < 0;
	}
	json_object_set_new(doc, "packages", out);
	json_object_set_new(doc, "differ", json_integer(differ));
	if (!failed && c->outdir && save(c, doc) < 0)
		failed = 1;
	r = failed ? 2 : show(c, doc);
	json_decref(doc);
	return r;
}
