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

struct revise {
	struct ypool *p;
	struct member *v;
	size_t n;
};

static const char *lowered(const char *s)
{
	char *r = astrdup(s);
	for (char *c = r; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	return r;
}

/* is o->v[i] the object KIND NAME (its file's base name, lower case)? */
static int is_obj(const struct objects *o, size_t i, const char *kind, const char *name)
{
	return !strcmp(o->v[i].base, aprintf("%s.%s.yaml", lowered(kind), lowered(name)));
}

static int has(const struct revise *r, size_t i)
{
	for (size_t k = 0; k < r->n; k++)
		if (r->v[k].i == i)
			return 1;
	return 0;
}

/* parse o->v[i] into a member; 0, or -1 with *err */
static int add_member(const struct objects *o, struct revise *r, size_t i, const char **err)
{
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
	r->v = agrow(r->v, r->n, sizeof(*r->v));
	r->v[r->n++] = m;
	return 0;
}

/* a reference in a ClusterClass: a map with kind and name (templateRef, ref) */
static int is_ref(const struct ynode *n)
{
	return n->type == Y_MAP && yget(n, "kind") && yget(n, "kind")->type == Y_SCALAR && yget(n, "name") &&
	       yget(n, "name")->type == Y_SCALAR;
}

/* the templates a ClusterClass names that this render holds, as members */
static int add_refs(const struct objects *o, struct revise *r, const struct ynode *n, const char **err)
{
	if (n->type == Y_SCALAR)
		return 0;
	if (is_ref(n))
		for (size_t i = 0; i < o->n; i++)
			if (!has(r, i) && is_obj(o, i, yget(n, "kind")->s, yget(n, "name")->s) &&
			    add_member(o, r, i, err) < 0)
				return -1;
	for (size_t i = 0; i < n->n; i++)
		if (add_refs(o, r, n->v[i], err) < 0)
			return -1;
	return 0;
}

/* the member a reference names, or NULL */
static const struct member *named(const struct revise *r, const struct ynode *ref, const char *ns)
{
	const struct ynode *rns = yget(ref, "namespace");

	for (size_t k = 0; k < r->n; k++) {
		const struct member *m = &r->v[k];
		if (strcmp(m->kind, yget(ref, "kind")->s) || strcmp(m->name, yget(ref, "name")->s))
			continue;
		if (rns && rns->type == Y_SCALAR ? !m->ns || strcmp(m->ns, rns->s) :
		    (m->ns && ns && strcmp(m->ns, ns)))
			continue;
		return m;
	}
	return NULL;
}

static void rewrite_refs(struct revise *r, struct ynode *n, const char *ns, const char *h8)
{
	const struct member *m;

	if (n->type == Y_SCALAR)
		return;
	if (is_ref(n) && (m = named(r, n, ns)))
		yset(r->p, n, yscalar(r->p, "name", YS_PLAIN, n->loc),
		     yscalar(r->p, aprintf("%s-%s", m->name, h8), YS_PLAIN, n->loc));
	for (size_t i = 0; i < n->n; i++)
		rewrite_refs(r, n->v[i], ns, h8);
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

/* is h one of the revisions s->class_keep names? */
static int kept(const struct step *s, const char *h)
{
	const char *p = s->class_keep;

	while (p && *p) {
		size_t n = strcspn(p, " ");
		const char *rev = capi_class_revision_of(astrndup(p, n));
		if (rev && !strcmp(rev, h))
			return 1;
		p += n + (p[n] == ' ');
	}
	return 0;
}

/* the earlier revisions still named, from the last output; 0, or -1 with *err */
static int keep_earlier(const char *statedir, const struct step *s, struct objects *o, const char *h8,
			const char **err)
{
	struct bundle b = { 0 };

	if (!s->class_keep || !*s->class_keep || hash_zero(s->old_output))
		return 0;
	if (bundle_read(bundle_path(statedir, s->old_output), &b) < 0) {
		*err = aprintf("cannot read the last render of class package '%s', which holds the revisions its "
			       "Clusters name", s->pkg->name);
		return -1;
	}
	for (size_t i = 0; i < b.n; i++) {
		const char *slash = strchr(b.v[i].name, '/');
		const char *h = slash ? astrndup(b.v[i].name, (size_t)(slash - b.v[i].name)) : NULL;
		if (h && strlen(h) == 8 && strcmp(h, h8) && kept(s, h))
			objects_add_file(o, b.v[i].name, b.v[i].data, b.v[i].len);
	}
	bundle_free(&b);
	return 0;
}

int capi_class_revise(const char *statedir, const struct step *s, struct objects *o, const char **err)
{
	struct revise r = { .p = o->pool };
	struct hasher *h;
	char hex[33];
	const char *h8;
	size_t nclass;

	for (size_t i = 0; i < o->n; i++)
		if (!strncmp(o->v[i].base, "clusterclass.", 13) && add_member(o, &r, i, err) < 0)
			return -1;
	nclass = r.n;
	for (size_t k = 0; k < nclass; k++)
		if (add_refs(o, &r, yget(r.v[k].doc, "spec") ? yget(r.v[k].doc, "spec") : r.v[k].doc, err) < 0)
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
			loc_error(m->doc->loc, "package '%s': %s '%s' is too long to take its revision's suffix (-%s): "
				  "at most 244 characters", s->pkg->name, m->kind, m->name, h8);
			return -1;
		}
		if (!an) {
			loc_error(m->doc->loc, "package '%s': %s '%s' has annotations that are not a map", s->pkg->name,
				  m->kind, m->name);
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
	return keep_earlier(statedir, s, o, h8, err);
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
