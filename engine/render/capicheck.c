/*
 * capicheck.c - a created cluster's Cluster against its ClusterClass
 * (capi.h; spec/capi.md "Format"), when MGMT/cluster-NAME renders: the
 * class package's render (an in-step) is read from its bundle, and each
 * mismatch is a located error at the distro's field, before anything is
 * pushed:
 *
 *   - a worker whose class is not one of the class's machineDeployments;
 *   - a variable the class does not declare, or whose value is not of the
 *     type (or not one of the enum) of its openAPIV3Schema;
 *   - a variable the class requires, with no default, that is not given.
 *
 * Cluster API's webhook would say the same once the Cluster is synced;
 * here it is said in the distro's terms, and nothing reaches the cluster.
 *
 * With create.spec (a package of raw manifests), its render must hold the
 * Cluster NAME, at create.api, in create.namespace, at create.version when
 * that is given; that Cluster gets idpmake's labels and annotations.
 */
#define _GNU_SOURCE	/* memmem */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "base/buf.h"
#include "base/yaml.h"
#include "distro/capi.h"
#include "render/bundle.h"
#include "render/capicheck.h"
#include "render/capiclass.h"
#include "base/util.h"

/* a located error of this check (a render runs on a worker: its own count, not the loader's) */
static __thread int nbad;

static void bad(struct loc l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void bad(struct loc l, const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	va_list ap;

	va_start(ap, fmt);
	buf_addf(&b, "%s:%d:%d: error: ", l.file, l.line, l.col);
	buf_vaddf(&b, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", b.s);
	buf_release(&b);
	nbad++;
}

static const struct ynode *find_class(struct ypool *p, const struct bundle *b, const char *name)
{
	for (size_t i = 0; i < b->n; i++) {
		struct ynode **docs;
		size_t nd;
		if (!memmem(b->v[i].data, b->v[i].len, "ClusterClass", 12) ||
		    yaml_parse(p, b->v[i].name, b->v[i].data, b->v[i].len, &docs, &nd) < 0)
			continue;
		for (size_t k = 0; k < nd; k++)
			if (ystr_eq(yget(docs[k], "kind"), "ClusterClass") && ystr_eq(ypath(docs[k], "metadata.name"), name))
				return docs[k];
	}
	return NULL;
}

/* "a, b, c" of field `f` of each item of seq (at most 20) */
static const char *names(const struct ynode *seq, const char *f)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; seq && seq->type == Y_SEQ && i < seq->n && i < 20; i++) {
		const struct ynode *x = yget(seq->v[i], f);
		if (x && x->type == Y_SCALAR)
			buf_addf(&b, "%s%s", b.len ? ", " : "", x->s);
	}
	r = astrdup(b.len ? b.s : "none");
	buf_release(&b);
	return r;
}

static const struct ynode *item(const struct ynode *seq, const char *f, const char *v)
{
	for (size_t i = 0; seq && seq->type == Y_SEQ && i < seq->n; i++)
		if (ystr_eq(yget(seq->v[i], f), v))
			return seq->v[i];
	return NULL;
}

/* is value v of the openAPIV3Schema type t? */
static int typed(const struct ynode *v, const char *t)
{
	int truth;
	enum ykind k = v->type == Y_SCALAR ? yresolve(v, &truth) : YK_OTHER;

	if (!t)
		return 1;
	if (!strcmp(t, "object"))
		return v->type == Y_MAP;
	if (!strcmp(t, "array"))
		return v->type == Y_SEQ;
	if (v->type != Y_SCALAR)
		return 0;
	if (!strcmp(t, "string"))
		return k == YK_STR;
	if (!strcmp(t, "integer"))
		return k == YK_INT;
	if (!strcmp(t, "number"))
		return k == YK_INT || k == YK_FLOAT;
	if (!strcmp(t, "boolean"))
		return k == YK_BOOL;
	return 1;
}

static const char *type_of(const struct ynode *v)
{
	int truth;

	if (v->type == Y_MAP)
		return "object";
	if (v->type == Y_SEQ)
		return "array";
	switch (yresolve(v, &truth)) {
	case YK_INT: return "integer";
	case YK_FLOAT: return "number";
	case YK_BOOL: return "boolean";
	case YK_NULL: return "null";
	default: return "string";
	}
}

const char *capi_check_class(const char *statedir, const struct step *s, const struct step *cls_step, const char **err)
{
	const struct cluster *c = s->pkg->capi_of;
	const struct capi *k = c->create.capi;
	struct ypool *p = ypool_new();
	struct bundle b = { 0 };
	const struct ynode *cls, *mds, *decl, *given;
	struct ynode **docs, *cl = NULL, *ref;
	const char *rev, *ret = NULL;
	size_t nd;

	nbad = 0;
	if (cls_step->rendered)
		b = (struct bundle){ .v = cls_step->rendered->v, .n = cls_step->rendered->n };	/* borrowed */
	else if (bundle_read(bundle_path(statedir, cls_step->output), &b) < 0) {
		*err = aprintf("cannot read the render of class package '%s'", k->class_pkg);
		goto out;
	}
	/* its current revision (capiclass.c) */
	rev = capi_class_current(&b);
	if (!(cls = find_class(p, &b, rev ? aprintf("%s-%s", k->class_name, rev) : k->class_name))) {
		bad(k->loc, "create.class: package '%s' renders no ClusterClass '%s'", k->class_pkg, k->class_name);
		goto done;
	}
	mds = ypath(cls, "spec.workers.machineDeployments");
	if (!k->cni.n && ystr_eq(ypath(cls, "spec.controlPlane.templateRef.kind"), "KubeadmControlPlaneTemplate"))
		loc_warn(k->loc, "cluster '%s' has a kubeadm control plane (ClusterClass '%s') and no create.cni: its nodes "
			 "stay NotReady, and its packages Progressing, until a CNI lands", c->name, k->class_name);
	decl = ypath(cls, "spec.variables");
	for (size_t i = 0; i < k->nworkers; i++)
		if (k->workers[i].class && !item(mds, "class", k->workers[i].class))
			bad(k->workers[i].loc, "worker '%s': class '%s' is not a machineDeployments class of "
				  "ClusterClass '%s' (it has: %s)", k->workers[i].name, k->workers[i].class, k->class_name,
				  names(mds, "class"));
	/* the values as rendered (variables expanded) against the declarations */
	if (yaml_parse(p, s->id, k->text, strlen(k->text), &docs, &nd) < 0 || nd != 1) {
		*err = "cannot read the Cluster back";
		goto out;
	}
	cl = docs[0];
	if (rev && (ref = ypath(cl, "spec.topology.classRef")) && ref->type == Y_MAP)
		yset(p, ref, yscalar(p, "name", YS_PLAIN, k->loc),
		     yscalar(p, aprintf("%s-%s", k->class_name, rev), YS_PLAIN, k->loc));
	else if (rev && ypath(cl, "spec.topology"))
		yset(p, ypath(cl, "spec.topology"), yscalar(p, "class", YS_PLAIN, k->loc),
		     yscalar(p, aprintf("%s-%s", k->class_name, rev), YS_PLAIN, k->loc));
	given = ypath(cl, "spec.topology.variables");
	for (size_t i = 0; given && given->type == Y_SEQ && i < given->n; i++) {
		const struct ynode *nm = yget(given->v[i], "name"), *val = yget(given->v[i], "value"), *d, *sch, *t, *en;
		struct loc at = k->loc;
		for (size_t j = 0; k->vars && nm && j < k->vars->n; j++)
			if (!strcmp(k->vars->k[j]->s, nm->s))
				at = k->vars->k[j]->loc;	/* where the distro gives it */
		if (!nm || !val)
			continue;
		if (!(d = item(decl, "name", nm->s))) {
			bad(at, "variable '%s' is not declared by ClusterClass '%s' (it declares: %s)", nm->s,
				  k->class_name, names(decl, "name"));
			continue;
		}
		sch = ypath(d, "schema.openAPIV3Schema");
		t = sch ? yget(sch, "type") : NULL;
		if (t && t->type == Y_SCALAR && !typed(val, t->s))
			bad(at, "variable '%s' is %s, and ClusterClass '%s' declares it %s", nm->s, type_of(val),
				  k->class_name, t->s);
		if (sch && (en = yget(sch, "enum")) && en->type == Y_SEQ && val->type == Y_SCALAR) {
			size_t j = 0;
			while (j < en->n && !(en->v[j]->type == Y_SCALAR && !strcmp(en->v[j]->s, val->s)))
				j++;
			if (j == en->n)
				bad(at, "variable '%s' is '%s', not one of ClusterClass '%s''s values", nm->s, val->s,
					  k->class_name);
		}
	}
	for (size_t i = 0; decl && decl->type == Y_SEQ && i < decl->n; i++) {
		const struct ynode *d = decl->v[i], *nm = yget(d, "name");
		if (!nm || nm->type != Y_SCALAR || !ystr_eq(yget(d, "required"), "true") ||
		    ypath(d, "schema.openAPIV3Schema.default") || item(given, "name", nm->s))
			continue;
		bad(k->loc, "ClusterClass '%s' requires variable '%s': give create.vars.%s", k->class_name, nm->s,
			  nm->s);
	}
done:
	if (nbad) {
		*err = aprintf("the Cluster of '%s' does not fit ClusterClass '%s' (see above)", c->name, k->class_name);
	} else {
		struct buf out = BUF_INIT;
		if (yaml_emit(cl, &out) < 0)
			*err = aprintf("cannot write the Cluster of '%s'", c->name);
		else
			ret = astrdup(out.s);
		buf_release(&out);
	}
out:
	if (!cls_step->rendered)
		bundle_free(&b);
	ypool_free(p);
	return ret;
}

const struct step *capi_class_render(const struct step *s)
{
	const struct capi *k = s->pkg && s->pkg->capi_of ? s->pkg->capi_of->create.capi : NULL;

	for (size_t i = 0; k && k->class_pkg && i < s->nin; i++)
		if (s->in[i]->kind == STEP_RENDER && package_is(s->in[i]->pkg, k->class_pkg))
			return s->in[i];
	return NULL;
}

/* metadata.FIELD of n as a map (made when absent); NULL when it is not a map */
static struct ynode *meta_map(struct ypool *p, struct ynode *n, const char *field)
{
	struct ynode *md = yget(n, "metadata"), *m = yget(md, field);

	if (!m || yisnull(m)) {	/* labels: ~ is none, as for Kubernetes */
		m = ynew(p, Y_MAP, n->loc);
		yset(p, md, yscalar(p, field, YS_PLAIN, n->loc), m);
	}
	return m->type == Y_MAP ? m : NULL;
}

static void put_str(struct ypool *p, struct ynode *m, const char *k, const char *v, struct loc l)
{
	yset(p, m, yscalar(p, k, YS_PLAIN, l), yscalar(p, v, YS_QUOTED, l));
}

/* a KubeadmControlPlane's or MachineDeployment's version (at path) against create.version; -1: refused */
static int version_of(const struct capi *k, const struct ynode *n, const char *path)
{
	const struct ynode *ver = ypath(n, path);

	if (!k->version || !ver || ystr_eq(ver, k->version))
		return 0;
	nbad = 0;
	bad(ver->loc, "%s '%s' renders version %s, and create.version is %s (%s:%d:%d): give the spec package the same "
	    "version (the skew rule reads create.version)", yget(n, "kind")->s, ypath(n, "metadata.name")->s,
	    ver->type == Y_SCALAR ? ver->s : "(not a string)", k->version, k->version_loc.file, k->version_loc.line,
	    k->version_loc.col);
	return -1;
}

/* the Cluster's sync-options with Prune=false instead of any Prune= option */
static const char *prune_false(const char *opts)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (const char *q = opts; *q;) {
		size_t l = strcspn(q, ",");
		const char *o = q;
		while (l && (*o == ' ')) {
			o++;
			l--;
		}
		if (l && strncmp(o, "Prune=", 6))
			buf_addf(&b, "%.*s,", (int)l, o);
		q = o + l;
		q += *q == ',';
	}
	buf_adds(&b, "Prune=false");
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

int capi_spec_object(struct ypool *p, const struct step *s, struct ynode *n)
{
	const struct cluster *c = s->pkg->capi_of;
	const struct capi *k = c->create.capi;
	const struct ynode *api = yget(n, "apiVersion"), *name = ypath(n, "metadata.name"), *ns, *ver;
	struct ynode *lb, *an, *opt;
	const char *want = aprintf("cluster.x-k8s.io/%s", k->api), *sl = k->spec_loc.file;

	if (ystr_eq(yget(n, "kind"), "KubeadmControlPlane") && api && api->type == Y_SCALAR &&
	    !strncmp(api->s, "controlplane.cluster.x-k8s.io/", 30)) {
		if (!k->cni.n)
			loc_warn(k->spec_loc, "cluster '%s' has a kubeadm control plane (create.spec '%s') and no create.cni: "
				 "its nodes stay NotReady, and its packages Progressing, until a CNI lands", c->name, k->spec_pkg);
		return version_of(k, n, "spec.version");
	}
	if (ystr_eq(yget(n, "kind"), "MachineDeployment") && api && api->type == Y_SCALAR &&
	    !strncmp(api->s, "cluster.x-k8s.io/", 17))
		return version_of(k, n, "spec.template.spec.version");
	if (!ystr_eq(yget(n, "kind"), "Cluster") || !api || api->type != Y_SCALAR ||
	    strncmp(api->s, "cluster.x-k8s.io/", 17))
		return 0;
	nbad = 0;
	if (!ystr_eq(name, c->name))
		bad(name->loc, "create.spec '%s' (%s:%d) renders Cluster '%s': a created cluster's spec renders one Cluster, "
		    "named ${cluster} ('%s')", k->spec_pkg, sl, k->spec_loc.line, name && name->s ? name->s : "",
		    c->name);
	else if (strcmp(api->s, want))
		bad(api->loc, "the Cluster '%s' is %s, and create.api (%s:%d) says %s: set create.api: %s", c->name,
		    api->s, sl, k->spec_loc.line, k->api, api->s + 17);
	else if ((ns = ypath(n, "metadata.namespace")) && ns->type == Y_SCALAR && strcmp(ns->s, k->namespace))
		bad(ns->loc, "the Cluster '%s' is in namespace %s, and create.namespace (%s:%d) is %s", c->name, ns->s,
		    sl, k->spec_loc.line, k->namespace);
	else if (k->version && (ver = ypath(n, "spec.topology.version")) && !ystr_eq(ver, k->version))
		bad(ver->loc, "the Cluster '%s' renders version %s, and create.version is %s (%s:%d): give the spec "
		    "package the same version", c->name, ver->type == Y_SCALAR ? ver->s : "?", k->version,
		    k->version_loc.file, k->version_loc.line);
	if (nbad)
		return -1;
	if (!(lb = meta_map(p, n, "labels")) || !(an = meta_map(p, n, "annotations"))) {
		bad(n->loc, "the Cluster '%s' has labels or annotations that are not maps", c->name);
		return -1;
	}
	put_str(p, lb, "cluster.x-k8s.io/cluster-name", c->name, n->loc);
	put_str(p, lb, "idpmake.io/cluster", c->name, n->loc);
	put_str(p, lb, "idpmake.io/distro", k->distro, n->loc);
	put_str(p, an, "idpmake.io/home", k->home, n->loc);	/* and where it pushes (capiowner.c) */
	/* as for a class: Argo CD deletes the Cluster before its templates, and no prune destroys it */
	put_str(p, an, "argocd.argoproj.io/sync-wave", "1", n->loc);
	opt = yget(an, "argocd.argoproj.io/sync-options");
	put_str(p, an, "argocd.argoproj.io/sync-options", opt && opt->type == Y_SCALAR ? prune_false(opt->s) :
		"Prune=false", n->loc);
	return 1;
}

int capi_spec_done(const struct step *s, int seen, const char **err)
{
	const struct cluster *c = s->pkg->capi_of;
	const struct capi *k = c ? c->create.capi : NULL;

	if (!k || !k->spec_pkg || seen == 1)
		return 0;
	*err = seen ? aprintf("create.spec '%s' (%s:%d:%d) renders the Cluster '%s' %d times", k->spec_pkg,
			      k->spec_loc.file, k->spec_loc.line, k->spec_loc.col, c->name, seen)
		    : aprintf("create.spec '%s' (%s:%d:%d) renders no Cluster '%s' (cluster.x-k8s.io/%s, with ${cluster} = "
			      "%s)", k->spec_pkg, k->spec_loc.file, k->spec_loc.line, k->spec_loc.col, c->name, k->api,
			      c->name);
	return -1;
}

/* ---- class revisions (capiclass.c makes them) ---- */

const char *capi_class_current(const struct bundle *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].name, CAPI_REVISION_FILE) && b->v[i].len == 9 && b->v[i].data[8] == '\n')
			return capi_class_revision_of(aprintf("-%.8s", b->v[i].data));
	return NULL;
}

const char *capi_class_revision_of(const char *name)
{
	size_t n = name ? strlen(name) : 0;

	if (n < 9 || name[n - 9] != '-')
		return NULL;
	for (size_t i = n - 8; i < n; i++)
		if (!isdigit((unsigned char)name[i]) && !(name[i] >= 'a' && name[i] <= 'f'))
			return NULL;
	return astrdup(name + n - 8);
}
