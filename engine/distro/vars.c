/*
 * vars.c - the variables a package sees on a cluster (distro.md "Values and
 * variables"): the builtins cluster, package and namespace, then the
 * cluster's vars, then the distro's; ${name} expanded from them. A created
 * cluster's package cluster-NAME renders with NAME's (create.spec), though
 * it goes to the management cluster's folder and Application name
 * (vars_init_place).
 */
#include <string.h>

#include "base/buf.h"
#include "base/hash.h"
#include "distro/manifest.h"
#include "base/util.h"

void vars_init(struct vars *v, const struct distro *d, const struct cluster *c,
	       const struct package *p, const char *namespace)
{
	if (p && p->capi_of)	/* cluster-NAME renders on its management cluster with NAME's variables */
		c = p->capi_of;
	vars_init_place(v, d, c, p, namespace);
}

void vars_init_place(struct vars *v, const struct distro *d, const struct cluster *c,
		     const struct package *p, const char *namespace)
{
	v->builtin[0] = (struct kv){ "cluster", c ? c->name : "", { 0 } };
	v->builtin[1] = (struct kv){ "package", p ? p->name : "", { 0 } };
	v->builtin[2] = (struct kv){ "namespace", namespace ? namespace : "", { 0 } };
	v->builtins.v = v->builtin;
	v->builtins.n = namespace ? 3 : 2;
	v->n = 0;
	v->layer[v->n++] = &v->builtins;
	if (c)
		v->layer[v->n++] = &c->vars;
	v->layer[v->n++] = &d->vars;
}

const char *vars_get(const struct vars *v, const char *name)
{
	for (size_t i = 0; i < v->n; i++)
		for (size_t j = 0; j < v->layer[i]->n; j++)
			if (!strcmp(v->layer[i]->v[j].key, name))
				return v->layer[i]->v[j].value;
	return NULL;
}

const char *expand(const char *s, struct loc loc, const struct vars *v)
{
	struct buf b = BUF_INIT;
	const char *r;

	if (!strstr(s, "${"))
		return s;
	for (const char *p = s; *p; ) {
		const char *e, *val;
		char *name;
		if (p[0] != '$' || p[1] != '{') {
			buf_addc(&b, *p++);
			continue;
		}
		if (!(e = strchr(p + 2, '}'))) {
			loc_error(loc, "unterminated '${' in '%s'", s);
			buf_release(&b);
			return NULL;
		}
		name = astrndup(p + 2, (size_t)(e - p - 2));
		if (!(val = vars_get(v, name))) {
			loc_error(loc, "undefined variable '${%s}' (define it under 'vars:' of the distro or the cluster)", name);
			buf_release(&b);
			return NULL;
		}
		buf_adds(&b, val);
		p = e + 1;
	}
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

const char *package_namespace(const struct distro *d, const struct cluster *c, const struct package *p)
{
	struct vars v;

	if (!p->namespace)
		return p->name;
	vars_init(&v, d, c, p, NULL);
	return expand(p->namespace, p->namespace_loc, &v);
}

struct hash vars_hash(const struct distro *d, const struct cluster *c, const struct package *p, const char *ns, int all)
{
	struct hasher *h = hasher_new();
	struct vars v;

	if (p && p->capi_of)	/* as vars_init */
		c = p->capi_of;
	if (all) {
		for (size_t i = 0; i < c->vars.n; i++) {
			hasher_adds(h, c->vars.v[i].key);
			hasher_adds(h, c->vars.v[i].value);
		}
		hasher_adds(h, "");
		for (size_t i = 0; i < d->vars.n; i++) {
			hasher_adds(h, d->vars.v[i].key);
			hasher_adds(h, d->vars.v[i].value);
		}
		hasher_adds(h, c->name);
		return hasher_end(h);
	}
	vars_init(&v, d, c, p, ns);
	for (int t = 0; t < 2; t++) {
		const char *text = t ? p->rule->definition : p->spec;
		for (const char *q = text ? strstr(text, "${") : NULL; q; q = strstr(q, "${")) {
			const char *e = strchr(q + 2, '}'), *val;
			char *name;
			if (!e)
				break;
			name = astrndup(q + 2, (size_t)(e - q - 2));
			val = vars_get(&v, name);
			hasher_adds(h, name);
			hasher_adds(h, val ? val : "\001(undefined)");
			q = e + 1;
		}
	}
	return hasher_end(h);
}
