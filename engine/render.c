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

#include "exec.h"
#include "hash.h"
#include "intr.h"
#include "manifest.h"
#include "re.h"
#include "pack.h"
#include "render.h"
#include "renderers.h"
#include "util.h"
#include "yaml.h"


void add_obj(struct objects *o, struct ynode *n)
{
	o->v = xrealloc(o->v, (o->n + 1) * sizeof(*o->v));
	o->v[o->n++] = n;
}

static char *lower(const char *s)
{
	char *r = astrdup(s);
	for (char *p = r; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	return r;
}

/*
 * how long a rewrite may make a text of n bytes: a pattern that matches
 * everywhere (the empty string) with a long replacement would otherwise
 * multiply it by the replacement's length
 */
#define REWRITE_MAX(n) ((n) * 4 + ((size_t)4 << 20))

/* apply rewrites to text; returns malloc'd text or NULL with *err */
static char *rewrite(const struct package *p, const struct step *s, const struct distro *d,
		     char *text, size_t *len, const char **err)
{
	struct vars v;

	if (!p->nrewrite)
		return text;
	vars_init(&v, d, s->cluster, p, s->namespace);
	for (size_t i = 0; i < p->nrewrite; i++) {
		const char *cerr, *repl = expand(p->rewrite[i].replace, p->rewrite[i].loc, &v);
		struct re *re = re_compile(p->rewrite[i].match, &cerr);
		struct buf out = BUF_INIT;
		int r;
		if (!re || !repl) {
			*err = aprintf("rewrite %d: %s", (int)i + 1, re ? "undefined variable" : cerr);
			re_free(re);
			free(text);
			return NULL;
		}
		if ((r = re_subst(re, text, *len, repl, REWRITE_MAX(*len), &out)) < 0) {
			*err = r == -2 ? aprintf("rewrite '%s' would make the text larger than %zu bytes "
						 "(4 times its %zu bytes and 4 MiB more; does it match the empty string?)",
						 p->rewrite[i].match, REWRITE_MAX(*len), *len)
				       : aprintf("rewrite '%s' failed", p->rewrite[i].match);
			re_free(re);
			buf_release(&out);
			free(text);
			return NULL;
		}
		re_free(re);
		free(text);
		*len = out.len;
		text = buf_detach(&out);
	}
	return text;
}

char *render_rewrite(const struct package *p, const struct step *s, const struct distro *d,
		     char *text, size_t *len, const char **err)
{
	return rewrite(p, s, d, text, len, err);
}

/* parse YAML text into objects; List kinds are expanded */
static int parse_objects(struct objects *o, const char *what, const char *text, size_t len, const char **err)
{
	struct ynode **docs;
	size_t n;
	int errs = 0;	/* this call's errors: workers share no count (issue 12 #3) */

	if (yaml_parse(o->pool, what, text, len, &docs, &n) < 0) {
		if (interrupted()) return *err = "interrupted", -1;
		*err = aprintf("%s: malformed YAML (see above)", what);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (interrupted()) return *err = "interrupted", -1;
		struct ynode *doc = docs[i], *kind = yget(doc, "kind"), *items = yget(doc, "items");
		if (doc->type != Y_MAP) {
			loc_error(doc->loc, "a Kubernetes object must be a map");
			errs++;
			continue;
		}
		if (kind && kind->type == Y_SCALAR && strlen(kind->s) > 4 &&
		    !strcmp(kind->s + strlen(kind->s) - 4, "List") && items && items->type == Y_SEQ) {
			for (size_t j = 0; j < items->n; j++)
				add_obj(o, items->v[j]);
			continue;
		}
		add_obj(o, doc);
	}
	if (errs) {
		*err = aprintf("%s: not a Kubernetes object (see above)", what);
		return -1;
	}
	return 0;
}

static int render_manifests(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	const struct tree *t = s->tree;

	for (size_t i = 0; t && i < t->n; i++) {
		if (interrupted()) return *err = "interrupted", -1;
		const char *path = aprintf("%s/%s", t->dir, t->v[i].path);
		size_t len;
		char *text = read_file(path, &len);
		if (!text) {
			*err = aprintf("cannot read %s: %s", path, strerror(errno));
			return -1;
		}
		if (!(text = rewrite(s->pkg, s, rc->d, text, &len, err)))
			return -1;
		if (parse_objects(o, path, text, len, err) < 0) {
			free(text);
			return -1;
		}
		free(text);
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

int run_rule(const struct render_ctx *rc, struct step *s, const char *const *argv, struct objects *o,
		    const char **err)
{
	struct buf out = BUF_INIT;
	struct proc p = { 0 };
	char *text;
	size_t len;

	p.argv = argv;
	p.log = s->log;
	p.out = &out;
	p.out_cap = (size_t)512 << 20;
	p.timeout = 600;
	s->command = proc_command(argv);
	if (rc->verbose)
		fprintf(stderr, "idpmake: %s: %s\n", s->id, s->command);
	if (proc_run(&p) < 0) {
		*err = proc_failure(&p);
		buf_release(&out);
		return -1;
	}
	len = out.len;
	text = buf_detach(&out);
	if (!(text = rewrite(s->pkg, s, rc->d, text, &len, err)))
		return -1;
	if (parse_objects(o, aprintf("output of %s", argv[0]), text, len, err) < 0) {
		free(text);
		return -1;
	}
	free(text);
	return 0;
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

/* nodes made by a renderer (renderers.h): no place in a file */
static struct loc noloc;

struct ynode *ynode_quoted(struct ypool *p, const char *s)
{
	return yscalar(p, s, YS_QUOTED, noloc);
}

struct ynode *ynode_plain(struct ypool *p, const char *s)
{
	return yscalar(p, s, YS_PLAIN, noloc);
}

void ynode_put(struct ypool *p, struct ynode *m, const char *k, struct ynode *v)
{
	yset(p, m, ynode_plain(p, k), v);
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
		o->extra = xrealloc(o->extra, (o->nextra + 1) * sizeof(*o->extra));
		o->extra[o->nextra].name = name;
		o->extra[o->nextra].data = astrndup(data, len);
		o->extra[o->nextra++].len = len;
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

/*
 * Object names become file names (KIND.NAME.yaml), so they are checked
 * against Kubernetes' own rules before any file is named after them (issue
 * 12 #5: a ConfigMap named x/../../../tmp/f was written outside `render -o`'s
 * folder; a name with a space made a bundle its reader refused).  Most kinds
 * take DNS-1123 subdomains; RBAC's four kinds take path segment names (no
 * '/' or '%', not . or ..), to which the bundle adds: no control character.
 * Kinds are DNS-1035 labels once lower-cased (CRD names.kind), namespaces
 * DNS-1123 labels.
 */
static int path_segment_kind(const char *api, const char *kind)
{
	return !strncmp(api, "rbac.authorization.k8s.io/", 26) &&
	       (!strcmp(kind, "Role") || !strcmp(kind, "ClusterRole") || !strcmp(kind, "RoleBinding") ||
		!strcmp(kind, "ClusterRoleBinding"));
}

/* NULL when the name is fine, else the rule it breaks */
static const char *bad_name(const char *api, const char *kind, const char *name)
{
	if (!path_segment_kind(api, kind))
		return is_dns_subdomain(name) ? NULL :
		       "a DNS-1123 subdomain: lower-case letters, digits, '-' and '.', starting and ending "
		       "with a letter or digit, at most 253 characters";
	if (!strcmp(name, ".") || !strcmp(name, "..") || strpbrk(name, "/%"))
		return "a path segment name: no '/' or '%', not '.' or '..'";
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "without control characters";
	return NULL;
}

static int bad_kind(const char *kind)
{
	size_t n = strlen(kind);
	if (!n || n > 63 || !isalpha((unsigned char)kind[0]) || !isalnum((unsigned char)kind[n - 1]))
		return 1;
	for (const char *c = kind; *c; c++)
		if (!isalnum((unsigned char)*c) && *c != '-')
			return 1;
	return 0;
}

/* where to point an error about node n: its place in a file, else the package */
static struct loc where(const struct step *s, const struct ynode *n, const struct ynode *obj)
{
	if (n && n->loc.file)
		return n->loc;
	if (obj && obj->loc.file)
		return obj->loc;
	return (struct loc){ aprintf("package '%s'", s->pkg->name), 0, 0 };
}

static int check_names(const struct step *s, const struct ynode *obj, const struct ynode *api,
		       const struct ynode *kind, const struct ynode *name, const struct ynode *nsn)
{
	const char *why;
	int errs = 0;

	if (bad_kind(kind->s)) {
		loc_error(where(s, kind, obj), "package '%s': kind '%s' is not a valid Kubernetes kind", s->pkg->name,
			  kind->s);
		errs++;
	} else if ((why = bad_name(api->s, kind->s, name->s))) {
		loc_error(where(s, name, obj), "package '%s': %s name '%s' is not valid in Kubernetes: it must be %s",
			  s->pkg->name, kind->s, name->s, why);
		errs++;
	}
	if (nsn && nsn->type == Y_SCALAR && !is_dns_label(nsn->s)) {
		loc_error(where(s, nsn, obj), "package '%s': %s '%s' has namespace '%s', which is not a DNS-1123 label "
			  "(lower-case letters, digits and '-', at most 63 characters)", s->pkg->name, kind->s, name->s, nsn->s);
		errs++;
	}
	return errs;
}

/* a file of an argocd-app folder: its name goes into the bundle's header line */
static int bad_extra_name(const char *name)
{
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return 1;
	return 0;
}

static int entcmp(const void *a, const void *b)
{
	return strcmp(((const struct bundle_entry *)a)->name, ((const struct bundle_entry *)b)->name);
}

/* object indexes ordered by file name, then namespace, then place (normalise) */
struct named {
	const char *base, *ns;
	size_t i;
};

static int namedcmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->base, y->base);

	if (!c)
		c = strcmp(x->ns, y->ns);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/*
 * Name every object by its kind and name, and by its namespace too where
 * two objects share kind and name; two with the same namespace as well are
 * an error.  Sorted once: a scan per object made a package of 40,000
 * objects cost 8 s of CPU.
 */
static int name_objects(const struct step *s, struct objects *o, const char **base, const char **ns, const char **names)
{
	struct named *v = xcalloc(o->n + 1, sizeof(*v));
	int errs = 0;

	for (size_t i = 0; i < o->n; i++)
		v[i] = (struct named){ base[i], ns[i], i };
	qsort(v, o->n, sizeof(*v), namedcmp);
	for (size_t a = 0, b; a < o->n; a = b) {
		for (b = a + 1; b < o->n && !strcmp(v[a].base, v[b].base); b++)
			;
		for (size_t k = a; k < b; k++) {
			names[v[k].i] = b - a > 1 ? aprintf("%s.%s", v[k].ns, v[k].base) : v[k].base;
			/* the first of a namespace's copies is the one the others point at */
			if (k > a && !strcmp(v[k].ns, v[k - 1].ns)) {
				size_t first = k - 1;
				while (first > a && !strcmp(v[first - 1].ns, v[k].ns))
					first--;
				loc_error(o->v[v[k].i]->loc, "package '%s': object %s is defined twice (also at %s:%d)",
					  s->pkg->name, v[k].base, o->v[v[first].i]->loc.file, o->v[v[first].i]->loc.line);
				errs++;
			}
		}
		if (interrupted())
			break;
	}
	free(v);
	return errs;
}

/* name and emit every object; fills b (entries point into arena strings) */
static int normalise(const struct step *s, struct objects *o, struct bundle *b, const char **err)
{
	const char **base = xcalloc(o->n + 1, sizeof(*base)), **ns = xcalloc(o->n + 1, sizeof(*ns));
	const char **names = xcalloc(o->n + 1, sizeof(*names));
	int errs = 0;	/* this call's errors, not the process-wide loc_errors */

	b->v = xcalloc(o->n + o->nextra + 1, sizeof(*b->v));
	for (size_t i = 0; i < o->n; i++) {
		struct ynode *obj = o->v[i], *api = yget(obj, "apiVersion"), *kind = yget(obj, "kind"),
			     *name = ypath(obj, "metadata.name"), *nsn = ypath(obj, "metadata.namespace");
		if (!api || !kind || !name || api->type != Y_SCALAR || kind->type != Y_SCALAR || name->type != Y_SCALAR ||
		    !name->slen) {
			loc_error(obj->loc, "a Kubernetes object needs apiVersion, kind and metadata.name");
			errs++;
			continue;
		}
		if (check_names(s, obj, api, kind, name, nsn)) {
			errs++;
			continue;
		}
		base[i] = o->single && o->n == 1 ? o->single : aprintf("%s.%s.yaml", lower(kind->s), lower(name->s));
		ns[i] = nsn && nsn->type == Y_SCALAR ? lower(nsn->s) : "_";
	}
	for (size_t i = 0; i < o->nextra; i++)
		if (bad_extra_name(o->extra[i].name)) {
			error("package '%s': file name '%s' holds a control character", s->pkg->name, o->extra[i].name);
			errs++;
		}
	if (errs) {
		*err = "objects without a valid apiVersion, kind, metadata.name or namespace (see above)";
		goto fail;
	}
	if (name_objects(s, o, base, ns, names)) {
		*err = "duplicate objects (see above)";
		goto fail;
	}
	for (size_t i = 0; i < o->n; i++) {
		struct buf out = BUF_INIT;
		if (interrupted()) {
			*err = "interrupted";
			goto fail;
		}
		if (yaml_emit(o->v[i], &out) < 0) {
			buf_release(&out);
			*err = aprintf("cannot emit %s", names[i]);
			goto fail;
		}
		b->v[b->n].name = names[i];
		b->v[b->n].data = astrndup(out.s, out.len);
		b->v[b->n++].len = out.len;
		buf_release(&out);
	}
	for (size_t i = 0; i < o->nextra; i++)
		b->v[b->n++] = o->extra[i];
	qsort(b->v, b->n, sizeof(*b->v), entcmp);
	/* a kind with a dot in its name's place: kind "a", name "configmap.x" is configmap x in namespace a's file */
	for (size_t i = 1; i < b->n; i++)
		if (!strcmp(b->v[i - 1].name, b->v[i].name)) {
			*err = aprintf("two objects would be written to the same file %s (rename one)", b->v[i].name);
			goto fail;
		}
	free(base);
	free(ns);
	free(names);
	return 0;
fail:
	free(base);
	free(ns);
	free(names);
	return -1;
}

int render_to_bundle(const struct render_ctx *rc, struct step *s, struct bundle *b, const char **err)
{
	struct objects o = { ypool_new(), NULL, 0, NULL, 0, NULL };
	const struct rule *r = s->pkg->rule;
	int ret;

	memset(b, 0, sizeof(*b));
	switch (r->builtin) {
	case RENDER_MANIFESTS:
		ret = render_manifests(rc, s, &o, err);
		break;
	case RENDER_HELM:
		ret = s->pkg->render_local ? render_helm_local(rc, s, &o, err) : render_helm_app(rc, s, &o, err);
		break;
	case RENDER_ARGOCD_APP:
		ret = render_argocd_app(rc, s, &o, err);
		break;
	default:
		ret = render_command(rc, s, &o, err);
		break;
	}
	if (!ret)
		ret = normalise(s, &o, b, err);
	if (ret < 0) {
		free(b->v);	/* callers free b->v only on success */
		b->v = NULL;
		b->n = 0;
	}
	ypool_free(o.pool);
	free(o.v);
	free(o.extra);
	return ret;
}

int render_step(const struct render_ctx *rc, struct step *s, struct hash *output, const char **err)
{
	struct bundle b;
	struct buf out = BUF_INIT;
	const char *path;
	struct stat st;

	if (render_to_bundle(rc, s, &b, err) < 0)
		return -1;
	bundle_write(b.v, b.n, &out);
	free(b.v);
	*output = hash_bytes(out.s, out.len);
	path = bundle_path(rc->statedir, *output);
	/* identical outputs share a file; one already there is reused only when it hashes right */
	if (stat(path, &st) < 0 || (size_t)st.st_size != out.len || bundle_check(rc->statedir, *output) < 0) {
		if (mkdirs(path_dir(path)) < 0 || write_file_atomic(path, out.s, out.len) < 0) {
			*err = aprintf("cannot write %s: %s", path, strerror(errno));
			buf_release(&out);
			return -1;
		}
	}
	buf_release(&out);
	return 0;
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
