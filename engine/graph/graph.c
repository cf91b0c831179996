/*
 * graph.c - the steps of a distro and their edges (engine.md "The graph").
 *
 * Per cluster and package that goes to it:
 *
 *     render -> push -> pre:A -> pre:B -> sync -> post:C
 *
 * push is one step for the whole run.  `needs: [X]` adds an edge from X's
 * last step (its last post hook, or its sync) to the package's first step
 * after push (its first pre hook, or its sync).  steps[] is sorted so that
 * every step comes after the steps it depends on.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "distro/fleet.h"
#include "distro/capi.h"
#include "distro/create.h"
#include "graph/graph.h"
#include "distro/manifest.h"
#include "base/util.h"

static void edge(struct step *from, struct step *to)
{
	/* needs may name a package twice; the push's in-edges are all distinct */
	for (size_t i = 0; to->kind != STEP_PUSH && i < to->nin; i++)
		if (to->in[i] == from)
			return;
	to->in = agrow(to->in, to->nin, sizeof(*to->in));
	to->in[to->nin++] = from;
	from->out = agrow(from->out, from->nout, sizeof(*from->out));
	from->out[from->nout++] = to;
}

static struct step *new_step(struct graph *g, enum step_kind kind, struct cluster *c,
			     struct package *p, struct hook *h, const char *id)
{
	struct step *s = amalloc(sizeof(*s));

	s->kind = kind;
	s->cluster = c;
	s->pkg = p;
	s->hook = h;
	s->id = id;
	g->steps = agrow(g->steps, g->nsteps, sizeof(*g->steps));
	g->steps[g->nsteps++] = s;
	return s;
}

/* the package's steps on one cluster: first after push, last */
struct unit {
	struct cluster *c;
	struct package *p;
	struct step *render, *first, *last;
};

/*
 * The index graph_build resolves `needs` with, so that the graph costs
 * O(units + needs log packages), not units x units: packages by name (and
 * by group, for argocd-app packages), clusters by name, and per cluster
 * the unit of each package (units are made cluster by cluster).
 */
struct named {
	const char *name;
	size_t i;
};

static int named_cmp(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

/* the first entry named name in the sorted v[n], or NULL */
static const struct named *named_find(const struct named *v, size_t n, const char *name)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (strcmp(v[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && !strcmp(v[lo].name, name) ? &v[lo] : NULL;
}

/* a remote Argo CD is not given credentials for: a local path or file:// */
static int is_local_remote(const char *url)
{
	/* and ssh: its credentials are keys in an agent, not a token */
	return strncmp(url, "https://", 8) && strncmp(url, "http://", 7);
}

static int unit_folder_cmp(const void *a, const void *b)
{
	const struct unit *x = *(const struct unit *const *)a, *y = *(const struct unit *const *)b;
	return strcmp(x->render->gitpath, y->render->gitpath);
}

/*
 * Two renders never share a folder unless they are one render: a package
 * that renders alike on linked clusters (fleet.c's _shared/PACKAGE[-XXXXXXXX], or a
 * git.path without ${cluster}).  Otherwise a git.path that does not tell
 * two clusters (or packages) apart would make one push drop the other's
 * render, and every later run flip between them.
 */
static void check_folders(const struct distro *d, struct unit *units, size_t nunits)
{
	const struct unit **v = xcalloc(nunits + 1, sizeof(*v));

	for (size_t i = 0; i < nunits; i++)
		v[i] = &units[i];
	qsort(v, nunits, sizeof(*v), unit_folder_cmp);
	for (size_t i = 1; i < nunits; i++) {
		const struct unit *a = v[i - 1], *b = v[i];
		if (strcmp(a->render->gitpath, b->render->gitpath) ||
		    (a->p == b->p && a->c->mode == MODE_LINKED && b->c->mode == MODE_LINKED &&
		     fleet_renders_alike(d, a->c, b->c, a->p)))
			continue;
		loc_error(d->git.path_loc, "git.path gives %s/%s and %s/%s the same folder '%s'; make it tell them "
			  "apart (${cluster}/${package} does)", a->c->name, a->p->name, b->c->name, b->p->name,
			  a->render->gitpath);
		break;
	}
	free(v);
}

/*
 * A cluster Cluster API makes (capi.h): its class package, then its
 * Cluster's sync on the management cluster, then its provision; and on it,
 * its cni packages before every other package.
 */
static void capi_edges(struct graph *g, struct unit *units, size_t nunits)
{
	for (size_t i = 0; i < nunits; i++) {
		struct cluster *made = capi_cluster_of(units[i].p), *c = units[i].c;
		if (made) {
			struct step *prov = graph_find(g, aprintf("%s:provision", made->name));
			struct step *chk = graph_find(g, aprintf("%s:capi-check", c->name));
			const char *cls = made->create.capi->class_pkg;
			if (!chk) {
				/* what the management cluster has of Cluster API: before its class and Clusters sync
				 * (capimgmt.c), after the providers the distro installs there */
				chk = new_step(g, STEP_CAPICHECK, c, NULL, NULL, aprintf("%s:capi-check", c->name));
				for (size_t j = 0; j < nunits; j++)
					if (units[j].c == c && !strcmp(units[j].p->name, "capi-providers"))
						edge(units[j].last, chk);
			}
			edge(chk, units[i].first);
			if (prov)
				edge(units[i].last, prov);
			for (size_t j = 0; cls && j < nunits; j++)
				if (units[j].c == c && package_is(units[j].p, cls)) {
					units[j].render->capi_class = 1;	/* its revisions (capiclass.c) */
					edge(chk, units[j].first);
					edge(units[j].last, units[i].first);
					edge(units[j].render, units[i].render);	/* checked against it (capicheck.c) */
				}
		}
		if (!c->create.capi)
			continue;
		if (c->create.capi->ready_available) {
			/* ready: available: NAME:ready after its provision and the cni, before every other package */
			struct step *ready = graph_find(g, aprintf("%s:ready", c->name));
			if (!ready) {
				ready = new_step(g, STEP_READY, c, NULL, NULL, aprintf("%s:ready", c->name));
				edge(graph_find(g, aprintf("%s:provision", c->name)), ready);
			}
			if (capi_is_cni(c, units[i].p))
				edge(units[i].last, ready);
			else
				edge(ready, units[i].first);
			continue;
		}
		if (!c->create.capi->cni.n || capi_is_cni(c, units[i].p))
			continue;
		for (size_t j = 0; j < nunits; j++)
			if (units[j].c == c && capi_is_cni(c, units[j].p))
				edge(units[j].last, units[i].first);
	}
}

/* CLUSTER/PKG of a step, or its id (push, wave:NAME), for the cycle message */
static const char *unit_name(const struct step *s)
{
	return s->pkg ? aprintf("%s/%s", s->cluster->name, s->pkg->name) : s->id;
}

struct graph *graph_build(struct distro *d)
{
	struct graph *g = amalloc(sizeof(*g));
	struct unit *units = NULL;
	size_t nunits = 0, order = 0;
	struct step **sorted, **queue;
	size_t qh = 0, qt = 0;
	int *indeg;
	size_t *uof;		/* uof[cluster * npackages + package]: unit index + 1, or 0 */
	struct step *repo = NULL;
	const char **linked = fleet_linked_folders(d);

	g->d = d;
	uof = xcalloc(d->nclusters * d->npackages + 1, sizeof(*uof));
	g->push = new_step(g, STEP_PUSH, NULL, NULL, NULL, "push");
	/* the distro's certificate (tlscert.c): before every hook, which may put it in a cluster */
	if (d->tls.hosts.n)
		g->tls = new_step(g, STEP_TLS, NULL, NULL, NULL, "tls");
	/* the repository's credentials for Argo CD: before every sync (register.c) */
	if (d->git.remote && !d->argocd.repo_registered && !is_local_remote(d->git.remote))
		repo = new_step(g, STEP_REGISTER, NULL, NULL, NULL, "repository:register");
	for (size_t ci = 0; ci < d->nclusters; ci++) {
		struct cluster *c = &d->clusters[ci];
		struct step *reg = c->reg.set || c->create.capi ? new_step(g, STEP_REGISTER, c, NULL, NULL, aprintf("%s:register", c->name)) : NULL;
		/* a cluster idpmake makes: before every step that reaches it (the syncs, hooks, apply); through
		 * Cluster API, its provision (the Cluster's status, after its sync on the management cluster) */
		struct step *make = c->create.kind ? new_step(g, STEP_CREATE, c, NULL, NULL, aprintf("%s:kind", c->name)) :
				    c->create.capi ? new_step(g, STEP_PROVISION, c, NULL, NULL, aprintf("%s:provision", c->name)) : NULL;
		if (make && reg && c->create.capi)
			edge(make, reg);
		for (size_t pi = 0; pi < d->npackages; pi++) {
			struct package *p = &d->packages[pi];
			struct unit u = { c, p, NULL, NULL, NULL };
			struct step *prev;
			struct vars v;
			size_t first = g->nsteps;
			if (!cluster_has(d, c, p))
				continue;
			u.render = new_step(g, STEP_RENDER, c, p, NULL, aprintf("%s/%s:render", c->name, p->name));
			u.render->render = u.render;
			u.render->namespace = package_namespace(d, c, p);
			vars_init_place(&v, d, c, p, u.render->namespace);
			u.render->gitpath = linked[ci * d->npackages + pi] ? linked[ci * d->npackages + pi] :
					    expand(d->git.path, d->git.path_loc, &v);
			if (!u.render->namespace || !u.render->gitpath) {
				free(uof);
				return NULL;
			}
			/* deploy: kubectl (kubectl.c): applied from the render, before the push and every registration */
			if (!p->deploy_kubectl)
				edge(u.render, g->push);
			prev = p->deploy_kubectl ? u.render : g->push;
			for (size_t h = 0; h < p->npre; h++) {
				struct step *s = new_step(g, STEP_PRE, c, p, &p->pre[h],
							  aprintf("%s/%s:pre:%s", c->name, p->name, p->pre[h].name));
				edge(prev, s);
				if (!u.first)
					u.first = s;
				prev = s;
			}
			{
				struct step *s = new_step(g, STEP_SYNC, c, p, NULL, aprintf("%s/%s:sync", c->name, p->name));
				s->gitpath = u.render->gitpath;
				s->namespace = u.render->namespace;
				edge(prev, s);
				if (reg && !p->deploy_kubectl)
					edge(reg, s);
				if (repo && !p->deploy_kubectl)
					edge(repo, s);
				if (!u.first)
					u.first = s;
				prev = s;
			}
			for (size_t h = 0; h < p->npost; h++) {
				struct step *s = new_step(g, STEP_POST, c, p, &p->post[h],
							  aprintf("%s/%s:post:%s", c->name, p->name, p->post[h].name));
				edge(prev, s);
				prev = s;
			}
			u.last = prev;
			if (p->deploy_kubectl) {
				edge(prev, g->push);
				if (reg)
					edge(prev, reg);
				if (repo)
					edge(prev, repo);
			}
			for (size_t i = first; i < g->nsteps; i++)
				if (g->steps[i]->pkg == p && g->steps[i]->cluster == c) {
					if (make && g->steps[i]->kind != STEP_RENDER)
						edge(make, g->steps[i]);
					if (g->tls && tls_hook_uses(g->steps[i]->hook))
						edge(g->tls, g->steps[i]);
					g->steps[i]->render = u.render;
					g->steps[i]->namespace = u.render->namespace;
					g->steps[i]->gitpath = u.render->gitpath;
				}
			units = agrow(units, nunits, sizeof(*units));
			units[nunits++] = u;
			uof[ci * d->npackages + pi] = nunits;
		}
	}
	check_folders(d, units, nunits);
	capi_edges(g, units, nunits);
	appnames_check(g);	/* one Application name, one step (appnames.c) */
	{
		struct named *pk = xcalloc(2 * d->npackages + 1, sizeof(*pk)), *cl = xcalloc(d->nclusters + 1, sizeof(*cl));
		size_t npk = 0;
		for (size_t pi = 0; pi < d->npackages; pi++) {
			pk[npk++] = (struct named){ d->packages[pi].name, pi };
			if (d->packages[pi].group && strcmp(d->packages[pi].group, d->packages[pi].name))
				pk[npk++] = (struct named){ d->packages[pi].group, pi };
		}
		qsort(pk, npk, sizeof(*pk), named_cmp);
		for (size_t ci = 0; ci < d->nclusters; ci++)
			cl[ci] = (struct named){ d->clusters[ci].name, ci };
		qsort(cl, d->nclusters, sizeof(*cl), named_cmp);
		for (size_t i = 0; i < nunits; i++) {
			struct package *p = units[i].p;
			for (size_t j = 0; j < p->needs.n; j++) {
				const char *need = p->needs.v[j], *slash = strchr(need, '/');
				const char *cname = slash ? astrndup(need, (size_t)(slash - need)) : units[i].c->name;
				const char *pname = slash ? slash + 1 : need;
				const struct named *c = named_find(cl, d->nclusters, cname);
				const struct named *x = c ? named_find(pk, npk, pname) : NULL;
				int found = 0;
				/* a group (an argocd-app package) is every Application of it */
				for (; x && x < pk + npk && !strcmp(x->name, pname); x++) {
					size_t u = uof[c->i * d->npackages + x->i];
					if (!u)
						continue;
					found = 1;
					if (&units[u - 1] != &units[i])
						edge(units[u - 1].last, units[i].first);
				}
				if (!found)
					loc_error(p->needs.loc[j], "package '%s' needs '%s', which does not go to cluster '%s' "
						  "(check the cluster's profiles)", p->name, need, cname);
			}
		}
		free(pk);
		free(cl);
		free(uof);
	}
	if (d->rollout) {
		/* a gate per wave: all of a wave's packages, then the gate, then the next wave's */
		struct step **gate = xcalloc(d->nwaves + 1, sizeof(*gate));
		for (size_t w = 0; w < d->nwaves; w++) {
			gate[w] = new_step(g, STEP_WAVE, NULL, NULL, d->waves[w].check, aprintf("wave:%s", d->waves[w].name));
			gate[w]->wave = &d->waves[w];
			if (w)
				edge(gate[w - 1], gate[w]);	/* an empty wave still keeps the order */
		}
		for (size_t i = 0; i < nunits; i++) {
			/* a created cluster's Cluster (and so its upgrades) goes in that cluster's wave */
			struct cluster *made = capi_cluster_of(units[i].p);
			size_t w = (size_t)((made ? made : units[i].c)->wave - d->waves);
			edge(units[i].last, gate[w]);
			if (w)
				edge(gate[w - 1], units[i].first);
			if (made && graph_find(g, aprintf("%s:provision", made->name)))
				edge(graph_find(g, aprintf("%s:provision", made->name)), gate[w]);
			if (made && graph_find(g, aprintf("%s:ready", made->name)))
				edge(graph_find(g, aprintf("%s:ready", made->name)), gate[w]);
		}
		free(gate);
	}
	if (loc_errors)
		return NULL;

	/* Kahn's algorithm; the manifest already refused package cycles */
	sorted = amalloc(g->nsteps * sizeof(*sorted));
	queue = amalloc(g->nsteps * sizeof(*queue));
	indeg = xcalloc(g->nsteps, sizeof(int));
	for (size_t i = 0; i < g->nsteps; i++) {
		g->steps[i]->index = (int)i;
		indeg[i] = (int)g->steps[i]->nin;
		if (!indeg[i])
			queue[qt++] = g->steps[i];
	}
	while (qh < qt) {
		struct step *s = queue[qh++];
		sorted[order++] = s;
		for (size_t i = 0; i < s->nout; i++)
			if (--indeg[s->out[i]->index] == 0)
				queue[qt++] = s->out[i];
	}
	if (order != g->nsteps) {
		/*
		 * A cycle through clusters (the manifest refuses cycles within
		 * one): walk in-edges among the steps left over until one
		 * repeats, and print the packages on that loop, a -> b -> a.
		 */
		struct buf b = BUF_INIT;
		int *seen = xcalloc(g->nsteps, sizeof(int)), pos = 1;
		struct step **path = xcalloc(g->nsteps + 1, sizeof(*path)), *s = NULL;
		for (size_t i = 0; i < g->nsteps && !s; i++)
			if (indeg[i] > 0)
				s = g->steps[i];
		while (s && !seen[s->index]) {
			struct step *next = NULL;
			seen[s->index] = pos;
			path[pos++ - 1] = s;
			for (size_t k = 0; k < s->nin && !next; k++)
				if (indeg[s->in[k]->index] > 0)
					next = s->in[k];
			s = next;
		}
		if (s) {
			/* path[seen[s]-1 .. pos-2] is the loop, walked against the edges */
			const char *last = NULL;
			for (int k = pos - 2; k >= seen[s->index] - 1; k--) {
				const char *name = unit_name(path[k]);
				if (last && !strcmp(last, name))
					continue;
				buf_addf(&b, "%s%s", b.len ? " -> " : "", name);
				last = name;
			}
			buf_addf(&b, " -> %s", unit_name(path[pos - 2]));
		}
		loc_error((struct loc){ d->file, 0, 0 }, "dependency cycle across clusters%s: %s", d->rollout ? " (or against the order of rollout.waves)" : "", b.s);
		buf_release(&b);
		free(seen);
		free(path);
		free(indeg);
		return NULL;
	}
	free(indeg);
	g->steps = sorted;
	for (size_t i = 0; i < g->nsteps; i++)
		g->steps[i]->index = (int)i;
	return g;
}

struct cluster *step_cluster(const struct step *s)
{
	struct cluster *made = s->pkg ? capi_cluster_of(s->pkg) : NULL;
	return made ? made : s->cluster;
}

int step_talks_to_argocd(const struct step *s)
{
	return (s->kind == STEP_SYNC && !s->pkg->deploy_kubectl) || s->kind == STEP_WAVE ||
	       s->kind == STEP_REGISTER || s->kind == STEP_PROVISION || s->kind == STEP_READY;
}

struct step *graph_find(struct graph *g, const char *id)
{
	for (size_t i = 0; i < g->nsteps; i++)
		if (!strcmp(g->steps[i]->id, id))
			return g->steps[i];
	return NULL;
}

int step_prunes(const struct step *s)
{
	return s->pkg && (s->pkg->sync.prune || (s->render && s->render->capi_class));
}
