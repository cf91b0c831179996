/*
 * fleet.c - clusters as a fleet (../shared/spec/fleet.md).
 *
 * A cluster carries labels, a mode (linked: follows the distro; cloned:
 * keeps its copy until promoted) and optionally `register`, the credential
 * idpmake registers it in Argo CD with.  The credential itself is never
 * read here: only where it comes from (a variable's name, a kubeconfig and
 * context), so that neither it nor a hash of it can reach a key, the state
 * or an export.
 *
 * `rollout.waves` orders the clusters: a cluster belongs to the first wave
 * whose `clusters` (name globs) or `selector` (labels, all must match)
 * selects it; clusters no wave selects form a last wave named `rest`, never
 * dropped.  Without `rollout`, every cluster is in one implicit wave.
 */
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

#include "distro/conv.h"
#include "distro/create.h"
#include "distro/fleet.h"
#include "base/hash.h"
#include "distro/manifest.h"
#include "base/util.h"

void conv_cluster(struct cluster *c, const struct ynode *key, const struct ynode *n)
{
	const struct ynode *x;

	c->name = label(key, "cluster name");
	c->loc = key->loc;
	if (yisnull(n))
		return;
	if (!want(n, Y_MAP, "a cluster"))
		return;
	CHECK_KEYS(n, "a cluster", "server", "name", "profiles", "vars", "labels", "mode", "register",
		   "kube-context", "create");
	c->server = str(yget(n, "server"), "server");
	c->kube_context = str(yget(n, "kube-context"), "kube-context");
	c->argo_name = str(yget(n, "name"), "cluster name");
	if (c->server && c->argo_name)
		loc_error(n->loc, "cluster '%s' has both 'server' and 'name'; give one", c->name);
	c->profiles = strs(yget(n, "profiles"), "profiles");
	strs_uniq(&c->profiles);
	conv_create(c, yget(n, "create"));
	c->vars = kvs(yget(n, "vars"), "vars");
	c->labels = kvs(yget(n, "labels"), "label");
	if ((x = yget(n, "mode")) && str(x, "mode")) {
		if (!strcmp(x->s, "cloned"))
			c->mode = MODE_CLONED;
		else if (strcmp(x->s, "linked"))
			loc_error(x->loc, "mode must be 'linked' or 'cloned', not '%s'", x->s);
	}
	if ((x = yget(n, "register")) && !yisnull(x) && want(x, Y_MAP, "register")) {
		const struct ynode *f;
		CHECK_KEYS(x, "register", "token-env", "ca-file", "insecure", "kubeconfig", "context");
		c->reg.set = 1;
		c->reg.loc = x->loc;
		c->reg.token_env = str(yget(x, "token-env"), "token-env");
		if ((f = yget(x, "ca-file")) && str(f, "ca-file"))
			c->reg.ca_file = path_join(path_dir(f->loc.file), f->s);
		c->reg.insecure = boolean(yget(x, "insecure"), "insecure", 0);
		if ((f = yget(x, "kubeconfig")) && str(f, "kubeconfig")) {
			/* ~/ as the shell would; otherwise relative to the distro */
			const char *home = getenv("HOME");
			if (!strncmp(f->s, "~/", 2) && home)
				c->reg.kubeconfig = path_join(home, f->s + 2);
			else
				c->reg.kubeconfig = path_join(path_dir(f->loc.file), f->s);
		}
		c->reg.context = str(yget(x, "context"), "context");
		if (!c->reg.token_env == !c->reg.kubeconfig)
			loc_error(x->loc, "register needs either 'token-env' (a variable holding a bearer token) "
				  "or 'kubeconfig' (with 'context'), not %s", c->reg.token_env ? "both" : "neither");
		if (c->reg.context && !c->reg.kubeconfig)
			loc_error(yget(x, "context")->loc, "'context' needs 'kubeconfig'");
		if (c->reg.token_env && !c->server && !c->argo_name)
			loc_error(x->loc, "cluster '%s' registers with a token but has no 'server'", c->name);
		if (c->argo_name && !c->server)
			loc_error(x->loc, "cluster '%s' is named only by 'name' (already known to Argo CD), "
				  "so it cannot be registered; give 'server'", c->name);
		if (c->create.kind)
			loc_error(x->loc, "cluster '%s' is created (create.kind) and Argo CD runs inside it: it takes no "
				  "register", c->name);
	}
}

static int kv_has(const struct kvlist *l, const char *key, size_t klen, const char *value)
{
	for (size_t j = 0; j < l->n; j++)
		if (strlen(l->v[j].key) == klen && !strncmp(l->v[j].key, key, klen) &&
		    (!value || !strcmp(l->v[j].value, value)))
			return 1;
	return 0;
}

int unit_labels_match(const struct cluster *c, const struct package *p, const struct strlist *labels)
{
	for (size_t i = 0; labels && i < labels->n; i++) {
		const char *eq = strchr(labels->v[i], '=');
		size_t kl = eq ? (size_t)(eq - labels->v[i]) : strlen(labels->v[i]);
		const char *val = eq ? eq + 1 : NULL;
		if (!(p && kv_has(&p->labels, labels->v[i], kl, val)) && !(c && kv_has(&c->labels, labels->v[i], kl, val)))
			return 0;
	}
	return 1;
}

int cluster_name_match(const char *pattern, const char *name)
{
	return !fnmatch(pattern, name, 0);
}

static int wave_selects(const struct wave *w, const struct cluster *c)
{
	for (size_t i = 0; i < w->clusters.n; i++)
		if (cluster_name_match(w->clusters.v[i], c->name))
			return 1;
	if (!w->selector.n)
		return 0;
	for (size_t i = 0; i < w->selector.n; i++)
		if (!kv_has(&c->labels, w->selector.v[i].key, strlen(w->selector.v[i].key), w->selector.v[i].value))
			return 0;
	return 1;
}

/* max-failed: a count (3) or a percentage (10%) */
static void max_failed(struct wave *w, const struct ynode *n)
{
	char *end;
	long v;

	if (!n || yisnull(n) || n->type != Y_SCALAR) {
		if (n && !yisnull(n))
			loc_error(n->loc, "max-failed must be a count or a percentage such as 10%%");
		return;
	}
	v = strtol(n->s, &end, 10);
	if (end == n->s || v < 0 || v > 1000000 || (*end && strcmp(end, "%")) || (*end && v > 100)) {
		loc_error(n->loc, "max-failed must be a count or a percentage such as 10%%, not '%s'", n->s);
		return;
	}
	w->max_failed = (int)v;
	w->max_failed_pct = *end == '%';
}

static void conv_wave(struct wave *w, const struct ynode *n, size_t i)
{
	const struct ynode *x;

	w->loc = n->loc;
	w->name = aprintf("wave-%zu", i + 1);	/* named even when the wave is not a map */
	if (!want(n, Y_MAP, "a wave"))
		return;
	CHECK_KEYS(n, "a wave", "name", "clusters", "selector", "max-parallel", "bake", "max-failed", "check");
	if ((x = yget(n, "name")) && str(x, "wave name"))
		w->name = label(x, "wave name");
	w->clusters = strs(yget(n, "clusters"), "clusters");
	w->selector = kvs(yget(n, "selector"), "selector");
	if (!w->clusters.n && !w->selector.n)
		loc_error(n->loc, "wave '%s' selects no cluster: give 'clusters' (name globs) or 'selector' (labels)", w->name);
	w->max_parallel = integer(yget(n, "max-parallel"), "max-parallel", 0);
	w->bake = integer(yget(n, "bake"), "bake", 0);
	max_failed(w, yget(n, "max-failed"));
	if ((x = yget(n, "check")) && !yisnull(x) && want(x, Y_MAP, "check")) {
		const struct ynode *r;
		CHECK_KEYS(x, "check", "run", "timeout");
		w->check = amalloc(sizeof(*w->check));
		w->check->name = "check";
		w->check->when = WHEN_ALWAYS;
		w->check->dir = path_dir(x->loc.file);
		w->check->loc = x->loc;
		w->check->timeout = integer(yget(x, "timeout"), "check timeout", 600);
		if (!(r = yget(x, "run")) || !(w->check->run = str(r, "check run")))
			loc_error(x->loc, "a check needs 'run' (a command for /bin/sh -c)");
	}
}

void conv_rollout(struct distro *d, const struct ynode *n)
{
	const struct ynode *waves = NULL;
	size_t nw = 0;
	int rest = 0;

	if (n && !yisnull(n) && want(n, Y_MAP, "rollout")) {
		CHECK_KEYS(n, "rollout", "waves");
		if ((waves = yget(n, "waves")) && !yisnull(waves) && want(waves, Y_SEQ, "waves"))
			nw = waves->n;
		else
			waves = NULL;
	}
	d->waves = amalloc((nw + 1) * sizeof(*d->waves));
	for (size_t i = 0; i < nw; i++) {
		conv_wave(&d->waves[i], waves->v[i], i);
		for (size_t j = 0; j < i; j++)
			if (!strcmp(d->waves[i].name, d->waves[j].name))
				loc_error(waves->v[i]->loc, "wave '%s' is defined twice", d->waves[i].name);
	}
	d->nwaves = nw;
	d->rollout = nw > 0;
	for (size_t c = 0; c < d->nclusters; c++) {
		struct cluster *cl = &d->clusters[c];
		for (size_t i = 0; i < nw && !cl->wave; i++)
			if (wave_selects(&d->waves[i], cl))
				cl->wave = &d->waves[i];
		if (!cl->wave)
			rest = 1;
	}
	if (rest) {
		/* never drop a cluster: the unmatched ones form the last wave */
		struct wave *w = &d->waves[d->nwaves++];
		for (size_t i = 0; i < nw; i++)
			if (!strcmp(d->waves[i].name, "rest"))
				loc_error(d->waves[i].loc, "wave 'rest' is the name of the wave of unmatched clusters; "
					  "select them with clusters: ['*'] instead");
		w->name = nw ? "rest" : "all";
		w->implicit = 1;
		w->loc = n && !yisnull(n) ? n->loc : (struct loc){ d->file, 0, 0 };
		for (size_t c = 0; c < d->nclusters; c++)
			if (!d->clusters[c].wave)
				d->clusters[c].wave = w;
	}
	for (size_t c = 0; c < d->nclusters; c++)
		d->clusters[c].wave->nclusters++;
}

size_t fleet_unmatched(const struct distro *d)
{
	const struct wave *w = d->nwaves ? &d->waves[d->nwaves - 1] : NULL;
	/* without rollout, the one implicit wave holds every cluster and warns of nothing */
	return w && w->implicit && d->nwaves > 1 ? w->nclusters : 0;
}

/*
 * Linked clusters share a package's folder (fleet.md "Renders once, stored
 * once"): with the default git.path, the linked clusters on which a package
 * renders alike (same variables used, same namespace, and a renderer whose
 * output does not name the cluster) form a group, and each group of two or
 * more is written once, to one folder that its clusters' Applications point
 * at:
 *   - _shared/PACKAGE when one group holds every linked cluster of the
 *     package (the layout before groups: such repositories do not churn);
 *   - _shared/PACKAGE-XXXXXXXX otherwise, XXXXXXXX the first 8 hex digits of
 *     the hash of what the group renders alike on (the namespace, the
 *     variables the package uses and their values).  It names no cluster
 *     and no file: it stays when the package's files change (one folder
 *     changed, one commit), is the same on every machine, and a cluster
 *     whose values change moves to its new group's folder.
 * '_' starts no cluster name, so the folders cannot collide with
 * CLUSTER/PACKAGE; a name that another package's folder already takes (a
 * package named PACKAGE-XXXXXXXX) leaves that group a folder per cluster.
 * A cluster alone with its values, and cloned clusters, keep their own.
 */
/* what a package's render depends on, on a cluster (zero: it names the cluster, as helm and argocd-app do) */
static struct hash variant(const struct distro *d, const struct cluster *c, const struct package *p)
{
	struct hasher *h;
	const char *ns;
	char hex[33];

	if (p->rule->builtin == RENDER_HELM || p->rule->builtin == RENDER_ARGOCD_APP || p->values.n ||
	    !(ns = package_namespace(d, c, p)))
		return (struct hash){ 0, 0 };
	h = hasher_new();
	hasher_adds(h, ns);
	/* as hex, not the struct's bytes: the folder's name is the same on every machine */
	hash_hex(vars_hash(d, c, p, ns, 0), hex);
	hasher_adds(h, hex);
	return hasher_end(h);
}

int fleet_renders_alike(const struct distro *d, const struct cluster *a, const struct cluster *b, const struct package *p)
{
	struct hash x = variant(d, a, p);
	return !hash_zero(x) && hash_eq(x, variant(d, b, p));
}

static int hash_cmp(const void *a, const void *b)
{
	const struct hash *x = a, *y = b;
	if (x->hi != y->hi)
		return x->hi < y->hi ? -1 : 1;
	return (x->lo > y->lo) - (x->lo < y->lo);
}

/* the folder of a group: _shared/PACKAGE-XXXXXXXX, from the hash of its render inputs */
static const char *group_folder(const struct package *p, struct hash k)
{
	return aprintf("_shared/%s-%08x", p->name, (unsigned)(k.hi >> 32));
}

const char **fleet_linked_folders(const struct distro *d)
{
	size_t nc = d->nclusters, np = d->npackages;
	const char **v = amalloc((nc * np + 1) * sizeof(*v));
	struct hash *k, *u;
	const char **taken, **gf;

	if (d->git.path_loc.line)
		return v;	/* git.path as written: the user's layout */
	k = xcalloc(nc + 1, sizeof(*k));
	u = xcalloc(nc + 1, sizeof(*u));
	gf = amalloc((nc + 1) * sizeof(*gf));
	taken = amalloc((np + 1) * sizeof(*taken));
	for (size_t pi = 0; pi < np; pi++)
		taken[pi] = aprintf("_shared/%s", d->packages[pi].name);
	qsort(taken, np, sizeof(*taken), strptrcmp);
	for (size_t pi = 0; pi < np; pi++) {
		const struct package *p = &d->packages[pi];
		size_t n = 0, nu = 0, nzero = 0;
		for (size_t ci = 0; ci < nc; ci++) {
			const struct cluster *c = &d->clusters[ci];
			k[ci] = (struct hash){ 0, 0 };
			if (c->mode != MODE_LINKED || !cluster_has(d, c, p))
				continue;
			k[ci] = variant(d, c, p);
			if (hash_zero(k[ci]))
				nzero++;
			else
				u[nu++] = k[ci];
			n++;
		}
		if (!nu)
			continue;
		qsort(u, nu, sizeof(*u), hash_cmp);
		if (!nzero && n >= 2 && hash_eq(u[0], u[nu - 1])) {
			/* one group holds them all */
			const char *all = aprintf("_shared/%s", p->name);
			for (size_t ci = 0; ci < nc; ci++)
				if (!hash_zero(k[ci]))
					v[ci * np + pi] = all;
			continue;
		}
		for (size_t i = 0, j; i < nu; i = j) {
			const char *f = NULL;
			unsigned top = (unsigned)(u[i].hi >> 32);
			for (j = i + 1; j < nu && hash_eq(u[j], u[i]); j++)
				;
			/* a group of two or more (one alone keeps its own folder), unless another
			 * group has the same 8 digits (sorted: they are next to it) or another
			 * package is named PACKAGE-XXXXXXXX */
			if (j - i >= 2 && !(i && (unsigned)(u[i - 1].hi >> 32) == top) &&
			    !(j < nu && (unsigned)(u[j].hi >> 32) == top)) {
				f = group_folder(p, u[i]);
				if (bsearch(&f, taken, np, sizeof(*taken), strptrcmp))
					f = NULL;
			}
			for (size_t m = i; m < j; m++)
				gf[m] = f;
		}
		for (size_t ci = 0; ci < nc; ci++) {
			const struct hash *x;
			if (!hash_zero(k[ci]) && (x = bsearch(&k[ci], u, nu, sizeof(*u), hash_cmp)))
				v[ci * np + pi] = gf[x - u];
		}
	}
	free(k);
	free(u);
	return v;
}
