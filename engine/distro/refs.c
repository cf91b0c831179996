/*
 * refs.c - what a distro's packages name, checked once it is converted
 * (manifest.c): each need is a package, a group or CLUSTER/PACKAGE of a
 * cluster that exists (with "did you mean", and the removal that took it
 * away, removal.c); no needs cycle; each profile names packages and each
 * cluster's profiles exist.  Names are looked up in a sorted index, so the
 * up to 100,000 references a file may make (aliases) stay cheap.
 */
#include <stdlib.h>
#include <string.h>

#include "distro/conv.h"
#include "distro/manifest.h"
#include "distro/refs.h"
#include "distro/removal.h"
#include "base/util.h"

/*
 * what `needs` and profiles may name: every package's name and group, sorted
 * (xmalloc'd), so that each of up to 100,000 references (aliases) costs a
 * binary search, not a scan of the packages
 */
struct named {
	const char *key;	/* a package's name or group */
	size_t pkg;		/* its index in d->packages */
};

struct names {
	struct named *v;
	size_t n;
};

static int namedcmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->key, y->key);
	return c ? c : (x->pkg > y->pkg) - (x->pkg < y->pkg);
}

static struct names package_names(const struct distro *d)
{
	struct names k = { xmalloc((2 * d->npackages + 1) * sizeof(*k.v)), 0 };

	for (size_t i = 0; i < d->npackages; i++) {
		k.v[k.n++] = (struct named){ d->packages[i].name, i };
		if (d->packages[i].group)
			k.v[k.n++] = (struct named){ d->packages[i].group, i };
	}
	qsort(k.v, k.n, sizeof(*k.v), namedcmp);
	return k;
}

/* the first entry of k named `name` (k->n when none); the others follow it */
static size_t first_named(const struct names *k, const char *name)
{
	size_t lo = 0, hi = k->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(k->v[mid].key, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->n && !strcmp(k->v[lo].key, name) ? lo : k->n;
}

static int has_package(const struct names *k, const char *name)
{
	return first_named(k, name) < k->n;
}

/* needs cycles, at package level: a -> b -> a */
static int visit(struct distro *d, const struct names *known, size_t i, int *mark, size_t *stack, size_t depth)
{
	struct package *p = &d->packages[i];

	mark[i] = 1;
	stack[depth] = i;
	for (size_t j = 0; j < p->needs.n; j++) {
		const char *name = strchr(p->needs.v[j], '/') ? strchr(p->needs.v[j], '/') + 1 : p->needs.v[j];
		for (size_t at = first_named(known, name); at < known->n && !strcmp(known->v[at].key, name); at++) {
		size_t k = known->v[at].pkg;
		struct package *q = &d->packages[k];
		if (at > 0 && known->v[at - 1].pkg == k && !strcmp(known->v[at - 1].key, name))
			continue;	/* its name and its group are the same */
		if (q->group && p->group && !strcmp(q->group, p->group))
			continue;
		if (mark[k] == 1) {
			struct buf b = BUF_INIT;
			size_t s = 0;
			while (stack[s] != k)
				s++;
			for (; s <= depth; s++)
				buf_addf(&b, "%s -> ", d->packages[stack[s]].name);
			buf_adds(&b, q->name);
			loc_error(p->needs.loc[j], "dependency cycle: %s", b.s);
			buf_release(&b);
			return -1;
		}
		if (!mark[k] && visit(d, known, k, mark, stack, depth + 1) < 0)
			return -1;
		}
	}
	mark[i] = 2;
	return 0;
}

/*
 * "did you mean" for every need that names no package, once per distinct
 * name: aliases can repeat a list of unknown names on every package
 * (100,000 needs), and a suggestion costs a distance to each package's name.
 * unknown[] (sorted, distinct) and sug[] are xmalloc'd; *n their count.
 */
static void unknown_needs(const struct distro *d, const struct names *known, const char ***unknown,
			  const char ***sug, size_t *n)
{
	const char **u = NULL, **s, **names;
	size_t nu = 0, cap = 0, k = 0;

	for (size_t i = 0; i < d->npackages; i++)
		for (size_t j = 0; j < d->packages[i].needs.n; j++) {
			const char *need = d->packages[i].needs.v[j], *slash = strchr(need, '/');
			const char *name = slash ? slash + 1 : need;
			if (has_package(known, name))
				continue;
			if (nu == cap)
				u = xrealloc(u, (cap = cap ? cap * 2 : 16) * sizeof(*u));
			u[nu++] = name;
		}
	if (nu)
		qsort(u, nu, sizeof(*u), strptrcmp);
	for (size_t i = 0; i < nu; i++)
		if (!k || strcmp(u[k - 1], u[i]))
			u[k++] = u[i];
	s = xmalloc((k ? k : 1) * sizeof(*s));
	names = xmalloc((d->npackages ? d->npackages : 1) * sizeof(*names));
	for (size_t i = 0; i < d->npackages; i++)
		names[i] = d->packages[i].name;
	for (size_t i = 0; i < k; i++)
		s[i] = closest(u[i], names, d->npackages);
	free(names);
	*unknown = u;
	*sug = s;
	*n = k;
}

void check_references(struct distro *d)
{
	int *mark;
	size_t *stack;
	const char **unknown, **sugs;
	size_t nunknown;
	struct names known = package_names(d);

	unknown_needs(d, &known, &unknown, &sugs, &nunknown);
	for (size_t i = 0; i < d->npackages; i++) {
		struct package *p = &d->packages[i];
		for (size_t j = 0; j < p->needs.n; j++) {
			const char *need = p->needs.v[j], *slash = strchr(need, '/');
			const char *name = slash ? slash + 1 : need;
			const char **at;
			if (slash) {
				char *cl = astrndup(need, (size_t)(slash - need));
				if (!find_cluster(d, cl))
					loc_error(p->needs.loc[j], "package '%s' needs '%s', but there is no cluster '%s'",
						  p->name, need, cl);
			}
			if ((at = nunknown ? bsearch(&name, unknown, nunknown, sizeof(*unknown), strptrcmp) : NULL) &&
			    removal_of(name)) {
				const struct loc *rl = removal_of(name);
				loc_error(*rl, "package '%s' is removed here, but '%s' needs it (%s:%d); remove '%s' too, "
					  "or override its needs", name, p->name, p->needs.loc[j].file, p->needs.loc[j].line, p->name);
			} else if (at) {
				const char *sug = sugs[at - unknown];
				loc_error(p->needs.loc[j], "package '%s' needs '%s', which is not a package of this distro%s%s%s",
					  p->name, name, sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
			} else if (!strcmp(name, p->name) && !slash) {
				loc_error(p->needs.loc[j], "dependency cycle: %s -> %s", p->name, p->name);
			}
		}
	}
	free(unknown);
	free(sugs);
	if (d->argocd.login.ref.name && !find_cluster(d, d->argocd.login.ref.cluster))
		loc_error(d->argocd.login.ref.loc, "argocd.login reads its Secret from the cluster Argo CD runs in, '%s', which is "
			  "not a cluster of this distro: name it with argocd.login.cluster", d->argocd.login.ref.cluster);
	if (d->git.credentials.ref.name && !find_cluster(d, d->git.credentials.ref.cluster))
		loc_error(d->git.credentials.ref.loc, "git.credentials reads its Secret from cluster '%s', which is not a "
			  "cluster of this distro: name it with git.credentials.cluster", d->git.credentials.ref.cluster);
	if (loc_errors) {
		free(known.v);
		return;
	}
	mark = xcalloc(d->npackages + 1, sizeof(int));
	stack = xcalloc(d->npackages + 1, sizeof(size_t));
	for (size_t i = 0; i < d->npackages; i++)
		if (!mark[i] && visit(d, &known, i, mark, stack, 0) < 0)
			break;
	free(mark);
	free(stack);
	for (size_t i = 0; i < d->nprofiles; i++)
		for (size_t j = 0; j < d->profiles[i].packages.n; j++)
			if (!has_package(&known, d->profiles[i].packages.v[j]))
				loc_error(d->profiles[i].packages.loc[j], "profile '%s' names '%s', which is not a package",
					  d->profiles[i].name, d->profiles[i].packages.v[j]);
	for (size_t i = 0; i < d->nclusters; i++)
		for (size_t j = 0; j < d->clusters[i].profiles.n; j++) {
			size_t k;
			for (k = 0; k < d->nprofiles; k++)
				if (!strcmp(d->profiles[k].name, d->clusters[i].profiles.v[j]))
					break;
			if (k == d->nprofiles)
				loc_error(d->clusters[i].profiles.loc[j], "cluster '%s' names profile '%s', which is not defined",
					  d->clusters[i].name, d->clusters[i].profiles.v[j]);
		}
	free(known.v);
}
