/*
 * render.c - renderers and output normalisation.
 *
 *   manifests   every .yaml, .yml and .json file under the folder, in-process
 *   kustomize   `kubectl kustomize DIR` (rules/kustomize.yaml)
 *   helm        an Application with a Helm source, rendered by Argo CD; with
 *               `render: local`, `helm template` (helm.c)
 *   argocd-app  an idpbuilder package: Application files at the top, their
 *               cnoe:// folders pushed beside them and the sources rewritten
 *   a rule      its command, YAML on stdout
 *
 * Whatever the renderer, its YAML text goes through the package's rewrites
 * (PCRE2), is parsed (libyaml), and each object is emitted again with sorted
 * keys, so the same objects always give the same bytes and the same hash.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <ctype.h>
#include <unistd.h>

#include "base/exec.h"
#include "base/hash.h"
#include "base/intr.h"
#include "distro/manifest.h"
#include "base/re.h"
#include "pack/pack.h"
#include "render/capicheck.h"
#include "render/capiclass.h"
#include "render/render.h"
#include "render/renderers.h"
#include "base/util.h"
#include "base/yaml.h"


static int render_manifests(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	const struct tree *t = s->tree;

	for (size_t i = 0; t && i < t->n; i++) {
		if (interrupted()) return *err = "interrupted", -1;
		const char *path = aprintf("%s/%s", t->dir, t->v[i].path);
		size_t len;
		char *text;
		int r;
		if (!s->pkg->nrewrite) {
			/* no rewrite: straight from the file, never the whole text in memory */
			FILE *f = fopen(path, "re");
			if (!f) {
				*err = aprintf("cannot read %s: %s", path, strerror(errno));
				return -1;
			}
			r = parse_objects(o, path, NULL, 0, f, err);
			if (!r && ferror(f)) {
				*err = aprintf("cannot read %s: %s", path, strerror(errno));
				r = -1;
			}
			fclose(f);
			if (r < 0)
				return -1;
			continue;
		}
		if (!(text = read_file(path, &len))) {
			*err = aprintf("cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		if (!(text = render_rewrite(s->pkg, s, rc->d, text, &len, err)))
			return -1;
		r = parse_objects(o, path, text, len, NULL, err);
		free(text);
		if (r < 0)
			return -1;
	}
	return 0;
}

static const char *expand_arg(const char *a, const struct step *s, const struct distro *d, const char *src)
{
	struct vars v;
	struct kv extra[2] = { { "src", src, { 0 } }, { "chart", "", { 0 } } };
	struct kvlist ex = { extra, 2 };
	struct vars v2;

	vars_init(&v, d, s->cluster, s->pkg, s->namespace);
	v2 = v;
	if (v2.n < 4)
		v2.layer[v2.n++] = &ex;
	return expand(a, (struct loc){ "rule", 0, 0 }, &v2);
}

static int render_command(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	const struct rule *r = s->pkg->rule;
	const char **argv = amalloc((r->command.n + 1) * sizeof(*argv));
	const char *src = s->pkg->path ? s->pkg->path : ".";

	for (size_t i = 0; i < r->command.n; i++)
		if (!(argv[i] = expand_arg(r->command.v[i], s, rc->d, src))) {
			*err = "undefined variable in the rule's command";
			return -1;
		}
	return run_rule(rc, s, argv, o, err);
}

/*
 * argocd-app: each top-level Application/ApplicationSet file, its cnoe://
 * sources rewritten to the GitOps repository at this package's folder; the
 * cnoe:// folders themselves are copied into the bundle beside them.
 */
static int add_folder(struct objects *o, const char *root, const char *prefix, const char **err)
{
	struct tree t;

	if (scan_tree(root, NULL, &t) < 0) {
		*err = aprintf("cannot read %s", root);
		return -1;
	}
	for (size_t i = 0; i < t.n; i++) {
		const char *path = aprintf("%s/%s", root, t.v[i].path);
		size_t len;
		char *data = read_file(path, &len);
		const char *name = strcmp(prefix, ".") ? aprintf("%s/%s", prefix, t.v[i].path) : astrdup(t.v[i].path);
		int dup = 0;
		if (!data) {
			*err = aprintf("cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		for (size_t j = 0; j < o->nextra; j++)
			if (!strcmp(o->extra[j].name, name))
				dup = 1;
		if (dup) {
			free(data);
			continue;
		}
		objects_add_file(o, name, data, len);
		free(data);
	}
	tree_free(&t);
	return 0;
}

/* `ref` sources rewritten to the GitOps repository: $REF/ value files move with them */
struct refs {
	const char *name[16], *prefix[16];
	size_t n;
};

static int rewrite_source(const struct render_ctx *rc, struct step *s, struct objects *o, struct ynode *src,
			  const char *appdir, struct refs *refs, const char **err)
{
	struct ynode *url = yget(src, "repoURL"), *path;
	const char *rest, *dir, *folder;
	char real[4096], rroot[4096];

	if (!url || url->type != Y_SCALAR || strncmp(url->s, "cnoe://", 7))
		return 0;
	rest = url->s + 7;
	dir = *rest ? path_join(appdir, rest) : appdir;
	if (!realpath(dir, real) || !realpath(s->pkg->path, rroot)) {
		*err = aprintf("%s: cnoe:// folder '%s' does not exist", url->loc.file, rest);
		return -1;
	}
	/*
	 * The folder's content goes to the same relative place in the package
	 * folder (cnoe://backstage/manifests -> backstage/manifests), so two
	 * sources with the same last component never collide; a folder outside
	 * the package (cnoe://../base/x) goes under _external/.
	 */
	{
		size_t rl = strlen(rroot);
		if (!strncmp(real, rroot, rl) && real[rl] == '/')
			folder = astrdup(real + rl + 1);
		else if (!strcmp(real, rroot))
			folder = ".";
		else
			folder = aprintf("_external/%s", path_base(real));
	}
	if (add_folder(o, real, folder, err) < 0)
		return -1;
	url->s = rc->remote_url;
	url->slen = strlen(rc->remote_url);
	url->style = YS_QUOTED;
	path = yget(src, "path");
	{
		const char *base = strcmp(folder, ".") ? aprintf("%s/%s", s->gitpath, folder) : s->gitpath;
		struct ynode *ref = yget(src, "ref");
		if (path && path->type == Y_SCALAR && path->slen && strcmp(path->s, "."))
			ynode_put(o->pool, src, "path", ynode_quoted(o->pool, aprintf("%s/%s", base, path->s)));
		else if (!ref || path)
			ynode_put(o->pool, src, "path", ynode_quoted(o->pool, base));
		if (ref && ref->type == Y_SCALAR && refs->n < 16) {
			refs->name[refs->n] = ref->s;
			refs->prefix[refs->n++] = base;
		}
	}
	if (!yget(src, "targetRevision") || !strcmp(yget(src, "targetRevision")->s, "HEAD"))
		ynode_put(o->pool, src, "targetRevision", ynode_quoted(o->pool, rc->d->git.branch));
	return 0;
}

static int render_argocd_app(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	struct tree t;
	const char *root = s->pkg->path;

	if (scan_tree(root, NULL, &t) < 0) {
		*err = aprintf("cannot read %s", root);
		return -1;
	}
	for (size_t i = 0; i < t.n; i++) {
		const char *f = t.v[i].path, *path = aprintf("%s/%s", root, f);
		size_t len, first = o->n;
		char *text;
		int top = !strchr(f, '/');
		size_t fl = strlen(f);
		if (!top || !(fl > 5 && (!strcmp(f + fl - 5, ".yaml") || !strcmp(f + fl - 4, ".yml"))))
			continue;
		if (s->pkg->app_file && strcmp(path_base(s->pkg->app_file), f))
			continue;	/* one Application of the group: its own file only */
		if (!(text = read_file(path, &len))) {
			*err = aprintf("cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		/* like idpbuilder: a file that does not parse, or is not an Application, is skipped */
		{
			struct ynode **docs;
			size_t nd;
			if (yaml_parse(o->pool, path, text, len, &docs, &nd) < 0 || !nd) {
				free(text);
				continue;
			}
			free(text);
			struct ynode *app = docs[0], *kind = yget(app, "kind"), *spec = yget(app, "spec"), *api = yget(app, "apiVersion");
			if (!kind || !api || strncmp(api->s, "argoproj.io/", 12) ||
			    (strcmp(kind->s, "Application") && strcmp(kind->s, "ApplicationSet")) || !spec)
				continue;
			if (!strcmp(kind->s, "ApplicationSet"))
				spec = yget(spec, "template") ? yget(yget(spec, "template"), "spec") : NULL;
			if (spec) {
				struct ynode *src = yget(spec, "source"), *srcs = yget(spec, "sources");
				struct refs refs = { { 0 }, { 0 }, 0 };
				if (src && rewrite_source(rc, s, o, src, root, &refs, err) < 0)
					return -1;
				for (size_t j = 0; srcs && srcs->type == Y_SEQ && j < srcs->n; j++)
					if (rewrite_source(rc, s, o, srcs->v[j], root, &refs, err) < 0)
						return -1;
				/* $values/x.yaml of a rewritten ref source: $values/FOLDER/x.yaml */
				for (size_t j = 0; srcs && srcs->type == Y_SEQ && j < srcs->n; j++) {
					struct ynode *vf = ypath(srcs->v[j], "helm.valueFiles");
					for (size_t k = 0; vf && vf->type == Y_SEQ && k < vf->n; k++)
						for (size_t r = 0; r < refs.n; r++) {
							const char *ref = aprintf("$%s/", refs.name[r]);
							struct ynode *f = vf->v[k];
							if (f->type == Y_SCALAR && !strncmp(f->s, ref, strlen(ref))) {
								f->s = aprintf("%s%s/%s", ref, refs.prefix[r], f->s + strlen(ref));
								f->slen = strlen(f->s);
							}
						}
				}
			}
			add_obj(o, app);
			(void)first;
		}
	}
	tree_free(&t);
	return 0;
}

/* run the renderer of s into o; 0, or -1 with *err */
static int render_objects(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	switch (s->pkg->rule->builtin) {
	case RENDER_MANIFESTS:
		return render_manifests(rc, s, o, err);
	case RENDER_HELM:
		return s->pkg->render_local ? render_helm_local(rc, s, o, err) : render_helm_app(rc, s, o, err);
	case RENDER_ARGOCD_APP:
		return render_argocd_app(rc, s, o, err);
	case RENDER_CAPI: {	/* the Cluster the loader rendered (distro/capi.c), checked against its class */
		const struct step *cls = capi_class_render(s);
		const char *text = s->pkg->spec;
		if (cls && (cls->rendered || !hash_zero(cls->output)) && !(text = capi_check_class(rc->statedir, s, cls, err)))
			return -1;
		return parse_objects(o, s->id, text, strlen(text), NULL, err);
	}
	default:
		return render_command(rc, s, o, err);
	}
}

/* render_objects, then what follows from the objects as a whole; 0, or -1 with *err */
static int render_all(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	if (render_objects(rc, s, o, err) < 0)
		return -1;
	if (o->errs)
		return 0;	/* a refused object said why; naming them says so */
	if (capi_spec_done(s, o->capi_cluster, err) < 0)
		return -1;
	return s->capi_class ? capi_class_revise(rc->statedir, rc->readonly, s, o, err) : 0;
}

int render_to_bundle(const struct render_ctx *rc, struct step *s, struct bundle *b, const char **err)
{
	struct objects o;
	int ret;

	memset(b, 0, sizeof(*b));
	objects_init(&o, s);
	ret = render_all(rc, s, &o, err);
	if (!ret)
		ret = objects_bundle(&o, b, err);
	objects_free(&o);
	return ret;
}

int render_step(const struct render_ctx *rc, struct step *s, struct hash *output, const char **err)
{
	struct objects o;
	int ret;

	objects_init(&o, s);
	ret = render_all(rc, s, &o, err);
	if (!ret)
		ret = objects_write(&o, rc->statedir, output, err);
	objects_free(&o);
	return ret;
}

const char *rule_tool_version(const struct rule *r, const char **err)
{
	struct buf out = BUF_INIT;
	struct proc p = { 0 };
	const char *v;

	if (!r->version.n)
		return "";
	p.argv = r->version.v;
	p.out = &out;
	p.out_cap = 1 << 20;
	p.timeout = 60;
	if (proc_run(&p) < 0) {
		*err = proc_failure(&p);
		buf_release(&out);
		return NULL;
	}
	v = astrdup(out.s);
	buf_release(&out);
	return v;
}
