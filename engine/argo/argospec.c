/*
 * argospec.c - the Application idpmake sends for a package on a cluster
 * (argocd.c syncs it): name, labels, finalizer, the GitOps folder (or, for a
 * helm package Argo CD renders, the chart with its values inline) as
 * source, the cluster and namespace as destination, sync options and
 * policy; and the Applications of argocd-app (cnoe://) packages, read back
 * from their render.
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/buf.h"
#include "base/intr.h"
#include "render/planner.h"
#include "render/bundle.h"
#include "base/hash.h"
#include "distro/manifest.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"
#include "argo/argohome.h"

static const char FINALIZER[] = "resources-finalizer.argocd.argoproj.io";
static const char IN_CLUSTER[] = "https://kubernetes.default.svc";
const char ARGOCD_GENERATE_PATHS[] = "argocd.argoproj.io/manifest-generate-paths";

/* ---- the Application ---------------------------------------------------- */

const char *argocd_app_name(const struct distro *d, const struct step *s)
{
	struct vars v;

	vars_init_place(&v, d, s->cluster, s->pkg, s->namespace);
	return expand(d->argocd.app_name, (struct loc){ d->file, 0, 0 }, &v);
}

const char *argocd_repo_url(const struct distro *d, const char *statedir)
{
	char real[4096];

	if (d->argocd.repo_url)
		return d->argocd.repo_url;	/* where Argo CD reads it, said by the distro (repourl.h) */
	if (!d->git.remote) {
		if (statedir && realpath(statedir, real))
			return aprintf("file://%s/gitops.git", real);
		return aprintf("file://%s/gitops.git", statedir ? statedir : ".idpmake");
	}
	return url_strip(d->git.remote, 0);	/* Argo CD has its own credentials for the repository */
}

int argocd_helm_app(const struct step *s)
{
	return s->pkg->rule && s->pkg->rule->builtin == RENDER_HELM && !s->pkg->render_local;
}

json_t *argocd_app_spec(const struct distro *d, const struct step *s, const char *repo_url)
{
	const char *name = argocd_app_name(d, s);
	json_t *app = json_object(), *md = json_object(), *labels = json_object(), *spec = json_object(),
	       *src = json_object(), *dst = json_object();

	json_object_set_new(app, "apiVersion", json_string("argoproj.io/v1alpha1"));
	json_object_set_new(app, "kind", json_string("Application"));
	json_object_set_new(md, "name", json_string(name ? name : ""));
	json_object_set_new(md, "namespace", json_string(d->argocd.namespace));
	json_object_set_new(labels, "idpmake.io/distro", json_string(d->name ? d->name : ""));
	json_object_set_new(labels, "idpmake.io/cluster", json_string(s->cluster->name));
	json_object_set_new(labels, "idpmake.io/package", json_string(s->pkg->name));
	json_object_set_new(md, "labels", labels);
	json_object_set_new(md, "finalizers", json_pack("[s]", FINALIZER));
	/* whose it is: where this distro pushes (owner.c) */
	json_t *ann = owner_annotations(d, repo_url);
	if (!argocd_helm_app(s) && !s->pkg->app_file && s->gitpath)
		/* its own folder (a linked fleet's _shared one): a commit elsewhere costs Argo CD no render */
		json_object_set_new(ann, ARGOCD_GENERATE_PATHS, json_pack("s+", "/", s->gitpath));
	json_object_set_new(md, "annotations", ann);
	json_object_set_new(app, "metadata", md);

	json_object_set_new(spec, "project", json_string(d->argocd.project));
	if (argocd_helm_app(s)) {
		struct vars v;
		const struct package *p = s->pkg;
		const char *repo, *chart, *ver;
		json_t *helm = json_object();
		vars_init(&v, d, s->cluster, p, s->namespace);
		repo = p->chart.repo ? expand(p->chart.repo, p->loc, &v) : NULL;
		chart = p->chart.name ? expand(p->chart.name, p->loc, &v) : NULL;
		ver = p->chart.version ? expand(p->chart.version, p->loc, &v) : "*";
		json_object_set_new(src, "repoURL", json_string(repo ? repo : ""));
		json_object_set_new(src, "chart", json_string(chart ? chart : ""));
		json_object_set_new(src, "targetRevision", json_string(ver ? ver : "*"));
		json_object_set_new(helm, "releaseName", json_string(p->name));
		json_object_set_new(src, "helm", helm);
	} else {
		json_object_set_new(src, "repoURL", json_string(repo_url));
		json_object_set_new(src, "path", json_string(s->gitpath));
		json_object_set_new(src, "targetRevision", json_string(d->git.branch));
		if (s->render && s->render->capi_class)	/* its revisions are folders (capiclass.c) */
			json_object_set_new(src, "directory", json_pack("{s:b}", "recurse", 1));
	}
	json_object_set_new(spec, "source", src);
	if (s->cluster->argo_name)
		json_object_set_new(dst, "name", json_string(s->cluster->argo_name));
	else
		json_object_set_new(dst, "server", json_string(s->cluster->server ? s->cluster->server : IN_CLUSTER));
	json_object_set_new(dst, "namespace", json_string(s->namespace));
	json_object_set_new(spec, "destination", dst);
	if (s->pkg->sync.options.n || s->pkg->sync.automated) {
		json_t *pol = json_object();
		if (s->pkg->sync.options.n) {
			json_t *opts = json_array();
			for (size_t i = 0; i < s->pkg->sync.options.n; i++)
				json_array_append_new(opts, json_string(s->pkg->sync.options.v[i]));
			json_object_set_new(pol, "syncOptions", opts);
		}
		if (s->pkg->sync.automated)
			json_object_set_new(pol, "automated", json_pack("{s:b, s:b}", "prune", step_prunes(s),
									"selfHeal", s->pkg->sync.self_heal));
		json_object_set_new(spec, "syncPolicy", pol);
	}
	json_object_set_new(app, "spec", spec);
	return app;
}

/* YAML to JSON, every scalar a string (an ApplicationSource has no other kind) */
static json_t *ytojson(const struct ynode *n)
{
	json_t *o;

	switch (n->type) {
	case Y_SCALAR:
		return json_stringn(n->s, n->slen);
	case Y_SEQ:
		o = json_array();
		for (size_t i = 0; i < n->n; i++)
			json_array_append_new(o, ytojson(n->v[i]));
		return o;
	default:
		o = json_object();
		for (size_t i = 0; i < n->n; i++)
			json_object_set_new(o, n->k[i]->s, ytojson(n->v[i]));
		return o;
	}
}

/*
 * A plain scalar's JSON value, typed by yaml.c's resolver as Kubernetes
 * reads YAML (prune: yes is true, 0755 is 493).  Floats, timestamps and
 * 1:20 stay strings: no Application field holds one, and a version such as
 * targetRevision: 1.10 must not become 1.1.
 */
static json_t *scalar_json(const struct ynode *n)
{
	char *digits = xmalloc(n->slen + 1), *d = digits, *end;
	const char *s = n->s;
	json_t *v = NULL;
	int truth = 0, base = 0;
	enum ykind k = yresolve(n, &truth);

	for (const char *p = n->s; *p; p++)	/* YAML allows '_' between digits */
		if (*p != '_')
			*d++ = *p;
	*d = 0;
	errno = 0;
	if (k == YK_NULL) {
		v = json_null();
	} else if (k == YK_BOOL) {
		v = json_boolean(truth);
	} else if (k == YK_INT) {
		s = digits;
		if (!strncmp(s, "0o", 2) || !strncmp(s, "0b", 2)) {
			base = s[1] == 'o' ? 8 : 2;
			s += 2;
		}
		long long i = strtoll(s, &end, base);
		if (!*end && !errno)
			v = json_integer(i);
	}
	free(digits);
	return v ? v : json_stringn(n->s, n->slen);
}

/* YAML to JSON with types (scalar_json) */
static json_t *ytojson_typed(const struct ynode *n)
{
	json_t *o;

	switch (n->type) {
	case Y_SCALAR:
		return scalar_json(n);
	case Y_SEQ:
		o = json_array();
		for (size_t i = 0; i < n->n; i++)
			json_array_append_new(o, ytojson_typed(n->v[i]));
		return o;
	default:
		o = json_object();
		for (size_t i = 0; i < n->n; i++)
			json_object_set_new(o, n->k[i]->s, ytojson_typed(n->v[i]));
		return o;
	}
}

/*
 * The Application (or ApplicationSet) idpmake rendered for s's package, from
 * its bundle: the top-level file whose object is one.  The tree lives in
 * pool p.  NULL after *err.
 */
static int yaml_name(const char *name)
{
	size_t n = strlen(name);
	return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml")) ||
	       (n > 5 && !strcmp(name + n - 5, ".json"));
}

/* an Application (or ApplicationSet) as written, a source still at cnoe:// */
static int cnoe_source(const struct ynode *app)
{
	const struct ynode *spec = ystr_eq(yget(app, "kind"), "ApplicationSet") ? ypath(app, "spec.template.spec")
										 : yget(app, "spec");
	const struct ynode *src = spec ? yget(spec, "source") : NULL, *srcs = spec ? yget(spec, "sources") : NULL;
	const struct ynode *u = src ? yget(src, "repoURL") : NULL;

	if (u && u->type == Y_SCALAR && !strncmp(u->s, "cnoe://", 7))
		return 1;
	for (size_t j = 0; srcs && srcs->type == Y_SEQ && j < srcs->n; j++)
		if ((u = yget(srcs->v[j], "repoURL")) && u->type == Y_SCALAR && !strncmp(u->s, "cnoe://", 7))
			return 1;
	return 0;
}

static struct ynode *rendered_app(struct argocd *a, struct step *s, struct ypool *p, const char **err)
{
	struct step *r = render_of(s);
	struct ynode *found = NULL;
	struct bundle b;

	if (!r || hash_zero(r->output) || bundle_read(bundle_path(a->statedir, r->output), &b) < 0) {
		*err = aprintf("the rendered Application of '%s' is missing: run up again", s->pkg->name);
		return NULL;
	}
	for (size_t i = 0; i < b.n && !found; i++) {
		struct ynode **docs, *kind;
		size_t nd;
		if (strchr(b.v[i].name, '/'))
			continue;	/* an argocd-app's cnoe:// folders */
		/* a cnoe:// folder that is the package's own folder puts its files
		   at the top too: its README (not YAML: not parsed, so no error is
		   printed) and the Application file as written, with its cnoe://
		   URLs (skipped: the rewritten one is what Argo CD must get) */
		if (!yaml_name(b.v[i].name))
			continue;
		if (yaml_parse(p, b.v[i].name, b.v[i].data, b.v[i].len, &docs, &nd) == 0 && nd &&
		    (kind = yget(docs[0], "kind")) && (ystr_eq(kind, "Application") || ystr_eq(kind, "ApplicationSet")) &&
		    yget(docs[0], "spec") && yget(docs[0], "spec")->type == Y_MAP && !cnoe_source(docs[0]))
			found = docs[0];
	}
	bundle_free(&b);
	if (!found)
		*err = aprintf("the rendered output of '%s' has no Application", s->pkg->name);
	return found;
}

/*
 * An Application of an argocd-app package (sources already pointing at the
 * GitOps repository): its sources, sync policy, ignoreDifferences and
 * destination namespace join what idpmake sends; an ApplicationSet is sent
 * whole.  *set: it is an ApplicationSet.
 */
int argocd_cnoe_app(struct argocd *a, struct step *s, json_t *app, int *set, const char **err)
{
	static const char *const keep[] = { "source", "sources", "syncPolicy", "ignoreDifferences", "info",
					    "revisionHistoryLimit" };
	struct ypool *p = ypool_new();
	struct ynode *doc = rendered_app(a, s, p, err), *spec;
	json_t *js = json_object_get(app, "spec");

	*set = 0;
	if (!doc) {
		ypool_free(p);
		return -1;
	}
	spec = yget(doc, "spec");
	if (ystr_eq(yget(doc, "kind"), "ApplicationSet")) {
		*set = 1;
		json_object_set_new(app, "kind", json_string("ApplicationSet"));
		json_object_set_new(app, "spec", ytojson_typed(spec));
	} else {
		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			if (yget(spec, keep[k])) {
				if (!strcmp(keep[k], "sources"))
					json_object_del(js, "source");
				json_object_set_new(js, keep[k], ytojson_typed(yget(spec, keep[k])));
			}
		if (ypath(spec, "destination.namespace"))
			json_object_set_new(json_object_get(js, "destination"), "namespace",
					    ytojson_typed(ypath(spec, "destination.namespace")));
	}
	ypool_free(p);
	return 0;
}

/* a helm package's source from its rendered Application (with helm.values) */
int argocd_helm_source(struct argocd *a, struct step *s, json_t *app, const char **err)
{
	struct ypool *p = ypool_new();
	struct ynode *doc = rendered_app(a, s, p, err), *src = doc ? ypath(doc, "spec.source") : NULL;
	int ok = src && src->type == Y_MAP;

	if (doc && !ok)
		*err = aprintf("the rendered output of '%s' has no Application with a spec.source", s->pkg->name);
	if (ok)
		json_object_set_new(json_object_get(app, "spec"), "source", ytojson(src));
	ypool_free(p);
	return ok ? 0 : -1;
}

/* ---- waiting ------------------------------------------------------------- */
