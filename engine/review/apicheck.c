/*
 * apicheck.c - validate --live: rendered kinds against the destination
 * cluster's API and the CRDs rendered before (apicheck.h).
 *
 * Each render step on a cluster that has a selected render step is
 * rendered once (as `render` does: no state change) into its objects and
 * the CRDs among them; each such cluster's info is read from Argo CD once.
 * Then every object of a selected step is looked up: the cluster's
 * "GROUP/VERSION/Kind" (or, from an Argo CD that lists no kinds, its
 * "GROUP/VERSION"), else a CRD of the step itself or of a step whose sync
 * comes before this step's sync in the graph.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review/apicheck.h"
#include "review/capidry.h"
#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "render/bundle.h"
#include "run/ctx.h"
#include "review/rendered.h"
#include "review/objdiff.h"
#include "base/util.h"

static const char IN_CLUSTER[] = "https://kubernetes.default.svc";

struct crd {
	const char *name, *group, *kind;
	json_t *versions;		/* array of version names */
};

struct obj {
	const char *api, *kind, *name, *file;
};

/* one render step's objects */
struct rendered {
	int state;			/* 0 not yet, 1 rendered, -1 failed or not checked */
	struct obj *v;
	size_t n;
	struct crd *crds;
	size_t ncrds;
};

/* what a cluster serves, as Argo CD reports it */
struct capi {
	int state;			/* 0 not asked, 1 known, -1 not checked */
	json_t *gv;			/* "apps/v1" -> true */
	json_t *gvk;			/* "apps/v1/Deployment" -> true */
	int kinds;			/* the list names kinds */
};

struct check {
	struct ctx *c;
	struct argocd *a;
	struct rendered *r;		/* by step index */
	struct capi *api;		/* by cluster index */
	struct step **order;		/* by render step index: its package's sync step, or NULL */
	int *mark;			/* by step index: the ancestors of the step being checked */
	const char *unchecked;		/* "'a', 'b'": the clusters Argo CD lists no API for (arena), or NULL */
	int gen;
	int objects, problems;
};

static const char *str(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);
	return json_is_string(v) ? json_string_value(v) : "";
}

/* ---- the render side ------------------------------------------------------- */

/* packages whose objects Argo CD renders itself, or that are Applications: not checked (as diff --live) */
static int checkable(const struct step *s)
{
	const struct rule *r = s->pkg->rule;
	return !(r && ((r->builtin == RENDER_HELM && !s->pkg->render_local) || r->builtin == RENDER_ARGOCD_APP)) &&
	       !s->pkg->group;
}

static void add_crd(struct rendered *r, json_t *o)
{
	json_t *spec = json_object_get(o, "spec"), *v;
	struct crd *x;
	size_t i;

	r->crds = xrealloc(r->crds, (r->ncrds + 1) * sizeof(*r->crds));
	x = &r->crds[r->ncrds++];
	x->name = astrdup(str(json_object_get(o, "metadata"), "name"));
	x->group = astrdup(str(spec, "group"));
	x->kind = astrdup(str(json_object_get(spec, "names"), "kind"));
	x->versions = json_array();
	json_array_foreach(json_object_get(spec, "versions"), i, v)
		if (*str(v, "name"))
			json_array_append_new(x->versions, json_string(str(v, "name")));
	if (*str(spec, "version"))	/* apiextensions.k8s.io/v1beta1's one version */
		json_array_append_new(x->versions, json_string(str(spec, "version")));
}

/* render a step once; its state */
static int render_objects(struct check *k, struct step *s)
{
	struct rendered *r = &k->r[s->index];
	struct bundle b;

	if (r->state)
		return r->state;
	r->state = -1;
	if (!checkable(s) || render_one(k->c, s, &b) < 0)
		return r->state;
	r->v = amalloc((b.n + 1) * sizeof(*r->v));
	for (size_t i = 0; i < b.n; i++) {
		json_t *o = bundle_is_manifest(b.v[i].name) ?
			    objdiff_parse(aprintf("%s/%s", s->gitpath, b.v[i].name), b.v[i].data, b.v[i].len) : NULL;
		struct obj *x = &r->v[r->n];
		if (!o)
			continue;
		x->api = astrdup(str(o, "apiVersion"));
		x->kind = astrdup(str(o, "kind"));
		x->name = astrdup(str(json_object_get(o, "metadata"), "name"));
		x->file = aprintf("%s/%s", s->gitpath, b.v[i].name);
		if (!strcmp(x->kind, "CustomResourceDefinition") && !strncmp(x->api, "apiextensions.k8s.io/", 21))
			add_crd(r, o);
		r->n++;
		json_decref(o);
	}
	bundle_free(&b);
	r->state = 1;
	return 1;
}

/* ---- the cluster side ------------------------------------------------------ */

/* GET the cluster's info: 0, or -1 after printing why (*fatal set when Argo CD could not be asked) */
static int read_cluster(struct check *k, const struct cluster *cl, struct capi *api, int *fatal)
{
	struct call call;
	struct resp r = { .code = -1 };
	const char *err = NULL, *path, *who;
	char *e;
	json_t *v;
	size_t i;
	int ret = -1;

	if (call_open(&call, k->a, "", NULL, 120) < 0) {
		*fatal = 1;
		return error("cluster '%s': cannot start a libcurl handle", cl->name);
	}
	e = curl_easy_escape(call.curl, cl->argo_name ? cl->argo_name : cl->server ? cl->server : IN_CLUSTER, 0);
	path = aprintf("/api/v1/clusters/%s%s", e ? e : "", cl->argo_name ? "?id.type=name" : "");
	who = cl->argo_name ? aprintf("destination.name '%s'", cl->argo_name)
			    : aprintf("server %s", cl->server ? cl->server : IN_CLUSTER);
	curl_free(e);
	if (request(&call, "GET", path, NULL, &r, &err) < 0) {
		error("cluster '%s': %s", cl->name, err);
		*fatal = 1;
	} else if (r.status == 404 || (r.status == 403 && r.message && !strcmp(r.message, "permission denied"))) {
		if (cl->reg.set || cl->create.capi) {
			/* a cluster Cluster API makes is registered by its own register step too */
			warn("cluster '%s' (%s) is not registered in Argo CD yet (its register step does that): "
			     "its kinds are not checked", cl->name, who);
			api->state = -1;
			ret = 0;
		} else {
			error("cluster '%s' (%s) is not known to Argo CD: its kinds cannot be checked", cl->name, who);
		}
	} else if (r.status != 200 || !json_is_object(r.json)) {
		error("cluster '%s': %s", cl->name,
		      r.status == 200 ? "Argo CD's answer is not a JSON object"
				      : api_error(&call, aprintf("reading cluster '%s' (%s)", cl->name, who), &r));
		*fatal = 1;
	} else if (!json_array_size(jget(r.json, "info.apiVersions"))) {
		/* controller/clusterinfoupdater.go: no Application deploys there, so Argo CD does not watch it */
		const char *st = jstr(r.json, "info.connectionState.status"), *m = jstr(r.json, "info.connectionState.message");
		json_t *n = jget(r.json, "info.applicationsCount");
		warn("could not check the kinds of cluster '%s': Argo CD reports no API versions for it (connection %s%s%s)%s",
		     cl->name, *st ? st : "unknown", *m ? ": " : "", m,
		     !strcmp(st, "Unknown") && !json_integer_value(n) ? "; Argo CD watches a cluster only once an Application deploys to it"
					    : "; its cache is not synced yet?");
		api->state = -1;
		k->unchecked = aprintf("%s%s'%s'", k->unchecked ? k->unchecked : "", k->unchecked ? ", " : "", cl->name);
		ret = 0;
	} else {
		api->gv = json_object();
		api->gvk = json_object();
		json_array_foreach(jget(r.json, "info.apiVersions"), i, v) {
			const char *s = json_is_string(v) ? json_string_value(v) : "", *last = strrchr(s, '/');
			/* "apps/v1/Deployment" and "v1/Pod" end in a Kind, "apps/v1" and "v1" in a version */
			if (last && isupper((unsigned char)last[1])) {
				json_object_set_new(api->gvk, s, json_true());
				json_object_set_new(api->gv, astrndup(s, (size_t)(last - s)), json_true());
				api->kinds = 1;
			} else if (*s) {
				json_object_set_new(api->gv, s, json_true());
			}
		}
		api->state = 1;
		ret = 0;
	}
	resp_reset(&r);
	call_close(&call);
	return ret;
}

/* ---- needs order ----------------------------------------------------------- */

/* the step that stands for a render step's package in needs order: its sync, else the render itself */
static struct step *order_step(struct check *k, struct step *render)
{
	return k->order[render->index] ? k->order[render->index] : render;
}

/* mark every step that runs before s */
static void mark_ancestors(struct check *k, struct step *s)
{
	struct step **stack = xmalloc((k->c->g->nsteps + 1) * sizeof(*stack));
	size_t n = 0;

	k->gen++;
	stack[n++] = s;
	while (n) {
		struct step *x = stack[--n];
		for (size_t i = 0; i < x->nin; i++)
			if (k->mark[x->in[i]->index] != k->gen) {
				k->mark[x->in[i]->index] = k->gen;
				stack[n++] = x->in[i];
			}
	}
	free(stack);
}

/* ---- the check ------------------------------------------------------------- */

static int crd_serves(const struct crd *d, const char *api, const char *kind)
{
	json_t *v;
	size_t i;

	if (strcmp(d->kind, kind))
		return 0;
	json_array_foreach(d->versions, i, v)
		if (!strcmp(api, *d->group ? aprintf("%s/%s", d->group, json_string_value(v)) : json_string_value(v)))
			return 1;
	return 0;
}

struct guess {
	const char *api, *kind;
	size_t apilen, dist;
	int rank;			/* 2 same group/version, 1 same group, 0 other */
};

/* the length of an apiVersion's group: the part before its first '/' (0 for "v1") */
static size_t group_len(const char *api, size_t len)
{
	const char *slash = memchr(api, '/', len);
	return slash ? (size_t)(slash - api) : 0;
}

/* api is apilen bytes, not NUL-terminated: nothing is allocated per candidate (a cluster lists many) */
static void consider(struct guess *g, const char *api, size_t apilen, const char *kind, const struct obj *o)
{
	size_t len = strlen(o->kind), klen = strlen(kind), olen = strlen(o->api), d, ga, go;
	int same_api = apilen == olen && !memcmp(api, o->api, olen), rank, c;

	if (same_api && !strcmp(kind, o->kind))
		return;
	/* the distance is at least the lengths' difference: no need to compute it */
	d = klen > len ? klen - len : len - klen;
	if (d > 2 && d * 3 > len)
		return;
	d = edit_distance(o->kind, kind, 1);
	if (d > 2 && d * 3 > len)
		return;
	ga = group_len(api, apilen);
	go = group_len(o->api, olen);
	rank = same_api ? 2 : ga == go && !memcmp(api, o->api, ga) ? 1 : 0;
	c = g->kind ? memcmp(api, g->api, apilen < g->apilen ? apilen : g->apilen) : 0;
	if (!c && g->kind)
		c = apilen < g->apilen ? -1 : apilen > g->apilen;
	if (!g->kind || d < g->dist || (d == g->dist && rank > g->rank) || (d == g->dist && rank == g->rank && c < 0)) {
		g->api = api;
		g->apilen = apilen;
		g->kind = kind;
		g->dist = d;
		g->rank = rank;
	}
}

/* the cluster's kinds and the CRDs before: the nearest to o's, or NULL */
static const char *did_you_mean(struct check *k, struct step *y, const struct obj *o)
{
	struct guess g = { 0 };
	struct capi *api = &k->api[y->cluster - k->c->d->clusters];
	const char *key;
	json_t *v;

	json_object_foreach(api->gvk, key, v) {
		const char *slash = strrchr(key, '/');
		consider(&g, key, (size_t)(slash - key), slash + 1, o);
	}
	for (size_t i = 0; i < k->c->g->nsteps; i++) {
		struct step *x = k->c->g->steps[i];
		struct rendered *r = &k->r[i];
		if (x->kind != STEP_RENDER || x->cluster != y->cluster || r->state != 1 ||
		    (x != y && k->mark[order_step(k, x)->index] != k->gen))
			continue;
		for (size_t j = 0; j < r->ncrds; j++) {
			json_t *ver;
			size_t m;
			json_array_foreach(r->crds[j].versions, m, ver) {
				const char *a = *r->crds[j].group ? aprintf("%s/%s", r->crds[j].group, json_string_value(ver))
								 : json_string_value(ver);
				consider(&g, a, strlen(a), r->crds[j].kind, o);
			}
		}
	}
	if (!g.kind)
		return "";
	return aprintf("; did you mean %.*s %s?", (int)g.apilen, g.api, g.kind);
}

/* one object of step y: 0 known, -1 not (printed) */
static int check_object(struct check *k, struct step *y, const struct obj *o)
{
	struct capi *api = &k->api[y->cluster - k->c->d->clusters];
	const char *cl = y->cluster->name, *pkg = y->pkg->name, *what, *late = NULL, *late_crd = NULL;

	if (api->kinds ? json_object_get(api->gvk, aprintf("%s/%s", o->api, o->kind)) != NULL
		       : json_object_get(api->gv, o->api) != NULL)
		return 0;
	for (size_t i = 0; i < k->c->g->nsteps; i++) {
		struct step *x = k->c->g->steps[i];
		struct rendered *r = &k->r[i];
		if (x->kind != STEP_RENDER || x->cluster != y->cluster || r->state != 1)
			continue;
		for (size_t j = 0; j < r->ncrds; j++) {
			if (!crd_serves(&r->crds[j], o->api, o->kind))
				continue;
			if (x == y || k->mark[order_step(k, x)->index] == k->gen)
				return 0;
			if (!late) {
				late = x->pkg->name;
				late_crd = r->crds[j].name;
			}
		}
	}
	what = aprintf("package '%s' on cluster '%s': %s %s '%s' (%s)", pkg, cl, o->api, o->kind, o->name, o->file);
	if (late) {
		error("%s: its CustomResourceDefinition '%s' is rendered by package '%s', which does not come before "
		      "'%s' in needs order; add needs: [%s]", what, late_crd, late, pkg, late);
	} else if (json_object_get(api->gv, o->api)) {
		error("%s: cluster '%s' serves %s but no kind %s in it, and no package before '%s' in needs order "
		      "renders a CustomResourceDefinition for it%s", what, cl, o->api, o->kind, pkg,
		      did_you_mean(k, y, o));
	} else {
		error("%s: cluster '%s' does not serve %s (Argo CD lists no such API version), and no package before "
		      "'%s' in needs order renders a CustomResourceDefinition for it%s", what, cl, o->api, pkg,
		      did_you_mean(k, y, o));
	}
	return -1;
}

/* every object of selected render step y */
static void check_step(struct check *k, struct step *y)
{
	struct capi *api = &k->api[y->cluster - k->c->d->clusters];
	struct rendered *r = &k->r[y->index];

	if (api->state != 1 || r->state != 1)
		return;
	mark_ancestors(k, order_step(k, y));
	for (size_t i = 0; i < r->n; i++) {
		k->objects++;
		if (check_object(k, y, &r->v[i]) < 0)
			k->problems++;
	}
}

int apicheck_live(struct ctx *c)
{
	struct check k = { .c = c };
	struct graph *g = c->g;
	const char *err = NULL;
	int fatal = 0, failed = 0, clusters = 0;

	if (!argocd_server(c->d)) {
		error("validate --live asks Argo CD what each cluster serves, and none is configured: "
		      "set argocd.server or ARGOCD_SERVER");
		return 2;
	}
	if (!(k.a = argocd_connect(c->d, c->statedir, c->verbose, &err))) {
		error("%s", err ? err : "cannot use Argo CD");
		return 2;
	}
	k.r = amalloc((g->nsteps + 1) * sizeof(*k.r));
	k.mark = amalloc((g->nsteps + 1) * sizeof(*k.mark));
	k.api = amalloc((c->d->nclusters + 1) * sizeof(*k.api));
	k.order = amalloc((g->nsteps + 1) * sizeof(*k.order));
	for (size_t i = 0; i < g->nsteps; i++)
		if (g->steps[i]->kind == STEP_SYNC && g->steps[i]->render)
			k.order[g->steps[i]->render->index] = g->steps[i];
	/* the clusters of the selected packages, read once each */
	for (size_t i = 0; i < g->nsteps && !fatal; i++) {
		struct step *s = g->steps[i];
		struct capi *api;
		if (s->kind != STEP_RENDER || !s->selected)
			continue;
		if (!checkable(s)) {
			fprintf(stderr, "idpmake: %s: rendered by Argo CD or an Application itself: kinds not checked\n",
				s->id);
			continue;
		}
		api = &k.api[s->cluster - c->d->clusters];
		if (api->state)
			continue;
		if (read_cluster(&k, s->cluster, api, &fatal) < 0) {
			api->state = -1;
			failed = 1;
		} else if (api->state == 1) {
			clusters++;
		}
	}
	/* every package of those clusters rendered: the CRDs may come from any of them */
	for (size_t i = 0; i < g->nsteps && !fatal; i++) {
		struct step *s = g->steps[i];
		if (s->kind == STEP_RENDER && k.api[s->cluster - c->d->clusters].state == 1 && checkable(s) &&
		    render_objects(&k, s) < 0)
			failed = 1;
	}
	for (size_t i = 0; i < g->nsteps && !fatal; i++) {
		struct step *s = g->steps[i];
		if (s->kind == STEP_RENDER && s->selected)
			check_step(&k, s);
	}
	argocd_close(k.a);
	for (size_t i = 0; i < g->nsteps; i++) {
		for (size_t j = 0; j < k.r[i].ncrds; j++)
			json_decref(k.r[i].crds[j].versions);
		free(k.r[i].crds);
	}
	for (size_t i = 0; i < c->d->nclusters; i++)
		json_decref(k.api[i].gv), json_decref(k.api[i].gvk);
	if (fatal)
		return 2;
	/* the clusters Cluster API makes: their Clusters and classes judged by the management cluster itself */
	if (capidry_run(c))
		failed = 1;
	if (k.problems)
		fprintf(stderr, "idpmake: %d of %d object%s of a kind its cluster does not serve\n", k.problems, k.objects,
			k.objects == 1 ? "" : "s");
	else if (!failed && k.unchecked && !clusters)
		fprintf(stderr, "idpmake: nothing checked: Argo CD lists no API for cluster %s\n", k.unchecked);
	else if (!failed)
		fprintf(stderr, "idpmake: %d object%s checked against %d cluster%s' API%s%s\n", k.objects,
			k.objects == 1 ? "" : "s", clusters, clusters == 1 ? "" : "s",
			k.unchecked ? "; not checked: cluster " : "", k.unchecked ? k.unchecked : "");
	return k.problems || failed ? 1 : 0;
}
