/*
 * capiclass.c - a ClusterClass's revisions (spec/capi.md "Upgrades and
 * linked classes").
 *
 * Cluster API reads a ClusterClass and its templates whenever it
 * reconciles a Cluster that names them, so editing them in place changes
 * every cluster of the class at once, whatever its wave.  A class package's
 * render on its management cluster therefore makes a revision of them:
 *
 *   - <h8> is a hash of the ClusterClasses and of the templates of the
 *     render they name (templateRef, v1beta1's ref), as the package
 *     renders them;
 *   - each is renamed NAME-<h8>, annotated idpmake.io/class-revision (and
 *     a ClusterClass idpmake.io/class: NAME), its references rewritten, and
 *     written under <h8>/ in the package's folder (synced with
 *     directory.recurse); CAPI_REVISION_FILE names <h8>;
 *   - the revisions that the synced Clusters on this management cluster
 *     name (s->class_keep, from the rows MGMT/cluster-NAME:class the syncs
 *     record, plan.c) stay, copied from the render's last output: a wave
 *     not moved yet, a cloned cluster not promoted, a Cluster being
 *     deleted.  A revision no synced Cluster names leaves the folder when
 *     the class renders next (its key holds class_keep).
 *
 * The Cluster renders name the current revision (capicheck.c), so a class
 * change reaches each cluster with its Cluster's sync, in its wave (CAPI's
 * "rebase").  Everything else the package renders stays where it was.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hash.h"
#include "base/util.h"
#include "base/yaml.h"
#include "render/bundle.h"
#include "render/capicheck.h"
#include "render/capiclass.h"
#include "render/renderers.h"

struct member {
	size_t i;			/* o->v[i] */
	struct ynode *doc;
	const char *kind, *name, *ns;	/* as written; ns NULL when none */
};

/* the render's objects by file base name (KIND.NAME.yaml, lower case), to find what a reference names */
struct by_base {
	const char *base;
	size_t i;
};

struct revise {
	struct ypool *p;
	const struct objects *o;
	struct member *v;
	size_t n;
	long *member;			/* o->v[i]'s index in v, or -1 */
	struct by_base *idx;		/* sorted by base */
};

static const char *lowered(const char *s)
{
	char *r = astrdup(s);
	for (char *c = r; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return r;
}

static int base_cmp(const void *a, const void *b)
{
	return strcmp(((const struct by_base *)a)->base, ((const struct by_base *)b)->base);
}

/* parse o->v[i] into a member; 0, or -1 with *err */
static int add_member(struct revise *r, size_t i, const char **err)
{
	const struct objects *o = r->o;
	char *tmp = NULL;
	size_t cap = 0, nd;
	const char *data = objects_data(o, i, &tmp, &cap);
	struct ynode **docs;
	struct member m = { .i = i };

	if (!data || yaml_parse(r->p, o->v[i].base, data, o->v[i].len, &docs, &nd) < 0 || nd != 1) {
		*err = aprintf("cannot read back the rendered object %s: %s", o->v[i].base,
			       data ? "not one document" : strerror(errno ? errno : EIO));
		free(tmp);
		return -1;
	}
	free(tmp);
	m.doc = docs[0];
	m.kind = yget(m.doc, "kind")->s;
	m.name = ypath(m.doc, "metadata.name")->s;
	m.ns = ypath(m.doc, "metadata.namespace") && ypath(m.doc, "metadata.namespace")->type == Y_SCALAR ?
	       ypath(m.doc, "metadata.namespace")->s : NULL;
	r->member[i] = (long)r->n;
	r->v = agrow(r->v, r->n, sizeof(*r->v));
	r->v[r->n++] = m;
	return 0;
}

/*
 * A reference of a ClusterClass to a template: the value of a templateRef
 * (v1beta2) or ref (v1beta1) key, a map with kind and name, the kind a
 * ...Template.  Nothing else is taken for one: a patch's value or a
 * variable's default naming an object is left as it is.
 */
static int is_ref(const struct ynode *key, const struct ynode *n)
{
	const struct ynode *kind = n->type == Y_MAP ? yget(n, "kind") : NULL, *name = kind ? yget(n, "name") : NULL;

	return (ystr_eq(key, "templateRef") || ystr_eq(key, "ref")) && kind && kind->type == Y_SCALAR &&
	       kind->slen > 8 && !strcmp(kind->s + kind->slen - 8, "Template") && name && name->type == Y_SCALAR;
}

/*
 * The object of the render a reference names, or -1: its kind and name,
 * and its namespace that of the reference, else the ClusterClass's (an
 * object or a class with none matches any: the package's namespace is
 * given to both by the Application).
 */
static long referenced(const struct revise *r, const struct ynode *ref, const char *class_ns)
{
	const struct ynode *rns = yget(ref, "namespace");
	const char *want = rns && rns->type == Y_SCALAR ? rns->s : class_ns;
	struct by_base key = { aprintf("%s.%s.yaml", lowered(yget(ref, "kind")->s), lowered(yget(ref, "name")->s)), 0 };
	struct by_base *hit = bsearch(&key, r->idx, r->o->n, sizeof(*r->idx), base_cmp);

	if (!hit)
		return -1;
	while (hit > r->idx && !strcmp(hit[-1].base, key.base))
		hit--;
	for (; hit < r->idx + r->o->n && !strcmp(hit->base, key.base); hit++) {
		const char *ns = r->o->v[hit->i].ns;
		if (!strcmp(ns, "_") || !want || !strcmp(ns, lowered(want)))
			return (long)hit->i;
	}
	return -1;
}

/* the templates a ClusterClass names that this render holds, as members */
static int add_refs(struct revise *r, const struct ynode *n, const char *class_ns, const char **err)
{
	if (n->type == Y_SCALAR)
		return 0;
	for (size_t i = 0; i < n->n; i++) {
		long at;
		if (n->k && is_ref(n->k[i], n->v[i]) && (at = referenced(r, n->v[i], class_ns)) >= 0 &&
		    r->member[at] < 0 && add_member(r, (size_t)at, err) < 0)
			return -1;
		if (add_refs(r, n->v[i], class_ns, err) < 0)
			return -1;
	}
	return 0;
}

static void rewrite_refs(struct revise *r, struct ynode *n, const char *class_ns, const char *h8)
{
	if (n->type == Y_SCALAR)
		return;
	for (size_t i = 0; i < n->n; i++) {
		long at;
		if (n->k && is_ref(n->k[i], n->v[i]) && (at = referenced(r, n->v[i], class_ns)) >= 0 &&
		    r->member[at] >= 0)
			yset(r->p, n->v[i], yscalar(r->p, "name", YS_PLAIN, n->v[i]->loc),
			     yscalar(r->p, aprintf("%s-%s", r->v[r->member[at]].name, h8), YS_PLAIN, n->v[i]->loc));
		rewrite_refs(r, n->v[i], class_ns, h8);
	}
}

static struct ynode *annotations(struct ypool *p, struct ynode *doc)
{
	struct ynode *md = yget(doc, "metadata"), *an = yget(md, "annotations");

	if (!an || yisnull(an)) {
		an = ynew(p, Y_MAP, doc->loc);
		yset(p, md, yscalar(p, "annotations", YS_PLAIN, doc->loc), an);
	}
	return an->type == Y_MAP ? an : NULL;
}

static int by_index(const void *a, const void *b)
{
	size_t i = ((const struct member *)a)->i, j = ((const struct member *)b)->i;
	return (i > j) - (i < j);
}

/* is name the name of one of this render's ClusterClasses (as the package renders it)? */
static int a_class(const struct revise *r, size_t nclass, const char *name)
{
	for (size_t k = 0; k < nclass; k++)
		if (!strcmp(r->v[k].name, name))
			return 1;
	return 0;
}

/* is the entry name of the last output at the top of the folder now (an object this render has there)? */
static int on_top(const struct objects *o, const char *name)
{
	for (size_t i = 0; i < o->n; i++)
		if (!strcmp(o->v[i].base, name) || !strcmp(aprintf("%s.%s", o->v[i].ns, o->v[i].base), name))
			return 1;
	return !strcmp(name, CAPI_REVISION_FILE);
}

/*
 * The earlier revisions that the synced Clusters name (s->class_keep), from
 * the last output (s->class_from): a revision NAME-<h8>'s folder <h8>/; a
 * class named without one (the layout before revisions) the top-level
 * files this render no longer has there.  A revision of one of this
 * render's classes that the last output does not hold is an error: it is
 * never dropped (the class's sync prunes).  0, or -1 with *err.
 */
struct names {
	const char **v;
	size_t n;
};

static void names_add(struct names *l, const char *s)
{
	l->v = agrow(l->v, l->n, sizeof(*l->v));
	l->v[l->n++] = s;
}

/* copy the folder of revision rev (8 hex) of b into o, once: 1 if b has it, else 0 */
static int copy_revision(struct objects *o, const struct bundle *b, const char *rev, struct names *copied)
{
	int found = 0;

	for (size_t i = 0; i < copied->n; i++)
		if (!strcmp(copied->v[i], rev))
			return 1;
	for (size_t i = 0; i < b->n; i++) {
		const char *e = b->v[i].name, *slash = strchr(e, '/');
		if (slash && slash - e == 8 && !strncmp(e, rev, 8)) {
			objects_add_file(o, e, b->v[i].data, b->v[i].len);
			found = 1;
		}
	}
	if (found)
		names_add(copied, rev);
	return found;
}

/* a class from before revisions (the top of the folder): its files that this render no longer has there, once */
static void copy_legacy(struct objects *o, const struct bundle *b, int *done)
{
	if ((*done)++)
		return;
	for (size_t i = 0; i < b->n; i++)
		if (!strchr(b->v[i].name, '/') && !on_top(o, b->v[i].name))
			objects_add_file(o, b->v[i].name, b->v[i].data, b->v[i].len);
}

/* is b a folder of before revisions (a ClusterClass on top, no REVISION)? */
static int legacy_layout(const struct bundle *b)
{
	int cls = 0;

	for (size_t i = 0; i < b->n; i++) {
		if (!strcmp(b->v[i].name, CAPI_REVISION_FILE))
			return 0;
		cls |= !strchr(b->v[i].name, '/') && !strncmp(b->v[i].name, "clusterclass.", 13);
	}
	return cls;
}

static int legacy_class(const struct bundle *b, const char *name)
{
	const char *file = aprintf("clusterclass.%s.yaml", lowered(name));

	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->v[i].name, file))
			return 1;
	return 0;
}

/*
 * The earlier revisions that the synced Clusters may name (s->class_keep),
 * from what the folder held (s->class_from): a revision NAME-<h8>'s folder
 * <h8>/, each once; a class named without one (the layout before
 * revisions, or a name that only looks like one) the top-level files this
 * render no longer has there.  CAPI_KEEP_ALL keeps all of them.  A class
 * of this render's that a Cluster names and the folder did not hold, or a
 * folder not known at all, is an error: never dropped.  0, or -1 with *err.
 */
static int keep_earlier(const char *statedir, int readonly, const struct step *s, struct objects *o,
			const struct revise *r, size_t nclass, const char *h8, const char **err)
{
	struct bundle b = { 0 };
	struct names copied = { 0 };
	const char *p = s->class_keep, *missing = NULL;
	int legacy = 0;

	if (!p || !*p)
		return 0;
	if (!s->class_from_known && readonly)
		return 0;	/* validate, plan: nothing is pushed from here */
	if (!s->class_from_known) {
		*err = aprintf("the state has no record of what the folder of class package '%s' holds, and the GitOps "
			       "repository was not read: not rendered, so that no revision a Cluster names is dropped",
			       s->pkg->name);
		return -1;
	}
	if (!hash_zero(s->class_from) && bundle_read(bundle_path(statedir, s->class_from), &b) < 0) {
		*err = aprintf("cannot read the last render of class package '%s', which holds the revisions its "
			       "Clusters name", s->pkg->name);
		return -1;
	}
	names_add(&copied, h8);	/* the current one is this render's */
	if (!strcmp(p, CAPI_KEEP_ALL)) {
		/* what the Clusters name is not known (a state without their rows): everything stays */
		for (size_t i = 0; i < b.n; i++) {
			const char *e = b.v[i].name, *slash = strchr(e, '/');
			if (slash && slash - e == 8)
				copy_revision(o, &b, astrndup(e, 8), &copied);
		}
		if (legacy_layout(&b))
			copy_legacy(o, &b, &legacy);
		p = "";
	}
	while (*p) {
		size_t n = strcspn(p, " ");
		int soft = *p == '?';	/* a Cluster of another class package: kept when here, never missing */
		const char *name = soft ? astrndup(p + 1, n - 1) : astrndup(p, n), *rev = capi_class_revision_of(name);
		const char *base = rev ? astrndup(name, strlen(name) - 9) : name;
		int found;
		p += n + (p[n] == ' ');
		found = rev && copy_revision(o, &b, rev, &copied);
		if (!found && legacy_layout(&b) && legacy_class(&b, name)) {
			copy_legacy(o, &b, &legacy);
			found = 1;
		}
		if (!found && !soft && (a_class(r, nclass, base) || a_class(r, nclass, name)) && !missing)
			missing = name;
	}
	bundle_free(&b);
	if (missing) {
		*err = aprintf("a synced Cluster names ClusterClass '%s', which the last render of class package '%s' "
			       "no longer holds: not dropped (its sync would delete it); render it back (`idpmake forget "
			       "%s` alone loses it), or move the Clusters off it", missing, s->pkg->name, s->id);
		return -1;
	}
	return 0;
}

int capi_class_revise(const char *statedir, int readonly, const struct step *s, struct objects *o, const char **err)
{
	struct revise r = { .p = o->pool, .o = o };
	struct hasher *h;
	char hex[33];
	const char *h8;
	size_t nclass;

	r.member = amalloc((o->n + 1) * sizeof(*r.member));
	r.idx = amalloc((o->n + 1) * sizeof(*r.idx));
	for (size_t i = 0; i < o->n; i++) {
		r.member[i] = -1;
		r.idx[i] = (struct by_base){ o->v[i].base, i };
	}
	qsort(r.idx, o->n, sizeof(*r.idx), base_cmp);
	for (size_t i = 0; i < o->n; i++)
		if (!strncmp(o->v[i].base, "clusterclass.", 13)) {
			if (add_member(&r, i, err) < 0)
				return -1;
			if (strncmp(yget(r.v[r.n - 1].doc, "apiVersion")->s, "cluster.x-k8s.io/", 17)) {
				r.member[i] = -1;	/* another group's ClusterClass: not Cluster API's */
				r.n--;
			}
		}
	nclass = r.n;
	for (size_t k = 0; k < nclass; k++)
		if (add_refs(&r, yget(r.v[k].doc, "spec") ? yget(r.v[k].doc, "spec") : r.v[k].doc, r.v[k].ns, err) < 0)
			return -1;
	if (!nclass)
		return 0;	/* no class: capicheck.c says so for the Cluster that names one */
	/* the revision: the members' bytes as rendered, in the render's order */
	qsort(r.v + nclass, r.n - nclass, sizeof(*r.v), by_index);
	h = hasher_new();
	for (size_t k = 0; k < r.n; k++) {
		char *tmp = NULL;
		size_t cap = 0;
		const char *data = objects_data(o, r.v[k].i, &tmp, &cap);
		hasher_adds(h, o->v[r.v[k].i].base);
		hasher_adds(h, o->v[r.v[k].i].ns);
		if (data)
			hasher_add(h, data, o->v[r.v[k].i].len);
		free(tmp);
		if (!data) {
			hasher_end(h);
			*err = aprintf("cannot read back the rendered objects: %s", strerror(errno ? errno : EIO));
			return -1;
		}
	}
	hash_hex(hasher_end(h), hex);
	h8 = astrndup(hex, 8);
	for (size_t k = 0; k < r.n; k++) {
		struct member *m = &r.v[k];
		struct ynode *an = annotations(r.p, m->doc);
		const char *name = aprintf("%s-%s", m->name, h8);
		struct buf out = BUF_INIT;
		if (strlen(name) > 253) {
			*err = aprintf("%s:%d:%d: package '%s': %s '%s' is too long to take its revision's suffix (-%s): "
				       "at most 244 characters", m->doc->loc.file, m->doc->loc.line, m->doc->loc.col,
				       s->pkg->name, m->kind, m->name, h8);
			return -1;
		}
		if (!an) {
			*err = aprintf("%s:%d:%d: package '%s': %s '%s' has annotations that are not a map",
				       m->doc->loc.file, m->doc->loc.line, m->doc->loc.col, s->pkg->name, m->kind, m->name);
			return -1;
		}
		if (k < nclass) {
			yset(r.p, an, yscalar(r.p, "idpmake.io/class", YS_PLAIN, m->doc->loc),
			     yscalar(r.p, m->name, YS_QUOTED, m->doc->loc));
			rewrite_refs(&r, yget(m->doc, "spec") ? yget(m->doc, "spec") : m->doc, m->ns, h8);
		}
		yset(r.p, an, yscalar(r.p, "idpmake.io/class-revision", YS_PLAIN, m->doc->loc),
		     yscalar(r.p, h8, YS_QUOTED, m->doc->loc));
		yset(r.p, yget(m->doc, "metadata"), yscalar(r.p, "name", YS_PLAIN, m->doc->loc),
		     yscalar(r.p, name, YS_PLAIN, m->doc->loc));
		if (yaml_emit(m->doc, &out) < 0) {
			buf_release(&out);
			*err = aprintf("cannot write %s '%s'", m->kind, name);
			return -1;
		}
		objects_add_file(o, aprintf("%s/%s%s.%s.yaml", h8, m->ns ? aprintf("%s.", lowered(m->ns)) : "",
					    lowered(m->kind), lowered(name)), out.s, out.len);
		buf_release(&out);
	}
	/* out of the folder's top, last index first */
	qsort(r.v, r.n, sizeof(*r.v), by_index);
	for (size_t k = r.n; k-- > 0;)
		objects_drop(o, r.v[k].i);
	objects_add_file(o, CAPI_REVISION_FILE, aprintf("%s\n", h8), 9);
	/* the names of the classes, for keep_earlier: the members are sorted by index now */
	{
		struct revise cl = r;
		size_t nc = 0;
		cl.v = amalloc((r.n + 1) * sizeof(*cl.v));
		for (size_t k = 0; k < r.n; k++)
			if (!strcmp(r.v[k].kind, "ClusterClass") && !strncmp(yget(r.v[k].doc, "apiVersion")->s, "cluster.x-k8s.io/", 17))
				cl.v[nc++] = r.v[k];
		return keep_earlier(statedir, readonly, s, o, &cl, nc, h8, err);
	}
}

const char *capi_cluster_class(const char *statedir, struct hash output)
{
	struct bundle b = { 0 };
	struct ypool *p;
	const char *ret = NULL;

	if (hash_zero(output) || bundle_read(bundle_path(statedir, output), &b) < 0)
		return NULL;
	p = ypool_new();
	for (size_t i = 0; i < b.n && !ret; i++) {
		struct ynode **docs;
		size_t nd;
		if (strncmp(b.v[i].name, "cluster.", 8) || yaml_parse(p, b.v[i].name, b.v[i].data, b.v[i].len, &docs, &nd) < 0)
			continue;
		for (size_t k = 0; k < nd && !ret; k++) {
			const struct ynode *t = ypath(docs[k], "spec.topology"), *n;
			if (!ystr_eq(yget(docs[k], "kind"), "Cluster") || !t)
				continue;
			if ((n = ypath(t, "classRef.name")) && n->type == Y_SCALAR)
				ret = astrdup(n->s);
			else if ((n = yget(t, "class")) && n->type == Y_SCALAR)
				ret = astrdup(n->s);
		}
	}
	ypool_free(p);
	bundle_free(&b);
	return ret;
}
