/*
 * capi.c - clusters.NAME.create through Cluster API, as written (capi.h;
 * the contract is spec/capi.md "Format"): the fields read with located
 * errors, then, once the distro is loaded (capi_finish), the management
 * cluster resolved and the cluster's `Cluster` rendered into the text of a
 * package cluster-NAME that goes to the management cluster alone.
 *
 * With `spec:`, cluster-NAME is a copy of that package instead (its
 * renderer, source and values), rendered with the created cluster's
 * variables; the template itself goes to no cluster.
 *
 * Not yet: linked class revisions (quick-start-<h8>).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/hash.h"
#include "base/url.h"
#include "distro/capi.h"
#include "distro/conv.h"
#include "distro/manifest.h"
#include "base/util.h"

static struct ypool *pool;

/* vMAJOR.MINOR.PATCH[-PRE][+BUILD], as CAPI's topology version */
static int semver(const char *s, int *minor)
{
	int maj, min, pat, n = 0;

	if (*s != 'v' || sscanf(s + 1, "%d.%d.%d%n", &maj, &min, &pat, &n) != 3 || maj < 0 || min < 0 || pat < 0)
		return 0;
	s += 1 + n;
	if (*s && *s != '-' && *s != '+')
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || strchr(".-+", *s)))
			return 0;
	if (minor)
		*minor = min;
	return 1;
}

static int replicas(const struct ynode *m, const char *what)
{
	const struct ynode *x = m ? yget(m, "replicas") : NULL;
	int v;

	if (!x || yisnull(x))
		return -1;
	v = integer(x, what, -1);
	if (v > 1000)
		loc_error(x->loc, "%s must be 0 to 1000", what);
	return v;
}

void conv_capi(struct cluster *c, const struct ynode *n)
{
	struct capi *k = amalloc(sizeof(*k));
	const struct ynode *x;

	CHECK_KEYS(n, "create", "management", "namespace", "class", "spec", "version", "api", "control-plane", "workers",
		   "vars", "cni", "credential", "aws", "ready", "timeout", "delete-timeout");
	c->create.capi = k;
	c->create.loc = k->loc = n->loc;
	k->cp_replicas = -1;
	if ((x = yget(n, "management")) && str(x, "management")) {
		k->management = x->s;
		k->management_loc = x->loc;
	} else {
		loc_error(n->loc, "create needs 'management': the cluster of this distro where Cluster API makes '%s'",
			  c->name);
	}
	k->namespace = c->name;
	if ((x = yget(n, "namespace")) && str(x, "namespace"))
		k->namespace = label(x, "namespace");
	if ((x = yget(n, "spec")) && !yisnull(x) && str(x, "create.spec")) {
		k->spec_pkg = x->s;
		k->spec_loc = x->loc;
		if (yget(n, "class") && !yisnull(yget(n, "class")))
			loc_error(x->loc, "create has both 'class' and 'spec': a cluster is made from a ClusterClass or "
				  "from a package of raw Cluster API manifests, not both");
		static const char *const topo[] = { "control-plane", "workers", "vars" };
		for (size_t i = 0; i < 3; i++)
			if (yget(n, topo[i]) && !yisnull(yget(n, topo[i])))
				loc_error(yget(n, topo[i])->loc, "create.%s is a topology field (create.class): with "
					  "create.spec, package '%s' renders the cluster as it is", topo[i], x->s);
	} else if ((x = yget(n, "class")) && !yisnull(x) && want(x, Y_MAP, "create.class")) {
		CHECK_KEYS(x, "create.class", "package", "name");
		k->class_pkg = str(yget(x, "package"), "class.package");
		k->class_name = str(yget(x, "name"), "class.name");
		if (!k->class_name)
			loc_error(x->loc, "create.class needs 'name': the ClusterClass");
	} else if (!yget(n, "class") || yisnull(yget(n, "class"))) {
		loc_error(n->loc, "create needs 'class' ({package: P, name: CLUSTERCLASS}): the ClusterClass the cluster "
			  "is made from (or 'spec': a package of raw Cluster API manifests)");
	}
	if ((x = yget(n, "version")) && str(x, "version")) {
		k->version = x->s;
		k->version_loc = x->loc;
	} else if (!k->spec_pkg) {
		loc_error(n->loc, "create needs 'version': the cluster's Kubernetes version (v1.33.2)");
	}
	k->api = "v1beta2";
	if ((x = yget(n, "api")) && str(x, "api")) {
		if (strcmp(x->s, "v1beta2") && strcmp(x->s, "v1beta1"))
			loc_error(x->loc, "create.api must be v1beta2 (Cluster API >= 1.11) or v1beta1, not '%s'", x->s);
		k->api = x->s;
	}
	if ((x = yget(n, "control-plane")) && !yisnull(x) && want(x, Y_MAP, "control-plane")) {
		CHECK_KEYS(x, "control-plane", "replicas");
		k->cp_replicas = replicas(x, "control-plane.replicas");
	}
	if ((x = yget(n, "workers")) && !yisnull(x) && want(x, Y_MAP, "workers")) {
		k->workers = amalloc((x->n + 1) * sizeof(*k->workers));
		for (size_t i = 0; i < x->n; i++) {
			struct capi_worker *w = &k->workers[k->nworkers++];
			const struct ynode *v = x->v[i];
			w->name = label(x->k[i], "worker name");
			w->loc = x->k[i]->loc;
			w->replicas = -1;
			if (!want(v, Y_MAP, "a worker"))
				continue;
			CHECK_KEYS(v, "a worker", "class", "replicas");
			if (!(w->class = str(yget(v, "class"), "class")))
				loc_error(v->loc, "worker '%s' needs 'class': a machineDeployments class of the ClusterClass",
					  w->name);
			w->replicas = replicas(v, "replicas");
		}
	}
	if ((x = yget(n, "vars")) && !yisnull(x) && want(x, Y_MAP, "create.vars"))
		k->vars = x;
	k->cni = strs(yget(n, "cni"), "cni");
	if ((x = yget(n, "credential")) && str(x, "credential")) {
		static const char *const names[] = { "service-account", "kubeconfig", "aws", "external" };
		size_t i = 0;
		while (i < 4 && strcmp(x->s, names[i]))
			i++;
		if (i == 4)
			loc_error(x->loc, "credential must be service-account, kubeconfig, aws or external, not '%s'", x->s);
		k->credential = i < 4 ? (enum capi_credential)i : CRED_SERVICE_ACCOUNT;
	}
	if ((x = yget(n, "aws")) && !yisnull(x) && want(x, Y_MAP, "create.aws")) {
		const struct ynode *r;
		CHECK_KEYS(x, "create.aws", "role-arn", "cluster-name");
		k->aws_role = str(r = yget(x, "role-arn"), "role-arn");
		k->aws_cluster = str(yget(x, "cluster-name"), "cluster-name");
		if (k->credential != CRED_AWS)
			loc_error(x->loc, "create.aws goes with credential: aws");
		if (k->aws_role && strncmp(k->aws_role, "arn:", 4))
			loc_error(r->loc, "create.aws.role-arn '%s' is not an ARN (arn:aws:iam::ACCOUNT:role/NAME)", k->aws_role);
	}
	if (k->credential == CRED_AWS && !k->aws_role)
		loc_error(n->loc, "credential: aws needs create.aws.role-arn: the role Argo CD assumes for '%s'", c->name);
	if ((x = yget(n, "ready")) && str(x, "ready")) {
		if (!strcmp(x->s, "available"))
			k->ready_available = 1;
		else if (strcmp(x->s, "initialized"))
			loc_error(x->loc, "ready must be initialized or available, not '%s'", x->s);
	}
	k->timeout = integer(yget(n, "timeout"), "timeout", 2400);
	k->delete_timeout = integer(x = yget(n, "delete-timeout"), "delete-timeout", 3600);
	if (x && (k->delete_timeout < 1 || k->delete_timeout > 604800))
		loc_error(x->loc, "delete-timeout is seconds from 1 to 604800 (7 days), not %d", k->delete_timeout);
	if (c->server || c->argo_name || c->kube_context)
		loc_error(n->loc, "cluster '%s' is created (create.management): drop '%s'; its Applications go to "
			  "destination.name %s, and idpmake learns its server from Cluster API", c->name,
			  c->server ? "server" : c->argo_name ? "name" : "kube-context", c->name);
}

/* ---- the Cluster, rendered once the distro is loaded ----------------------- */

static struct ynode *S(const char *s, struct loc l)
{
	return yscalar(pool, s, YS_PLAIN, l);
}

static struct ynode *Q(const char *s, struct loc l)
{
	return yscalar(pool, s, YS_QUOTED, l);
}

static void put(struct ynode *m, const char *k, struct ynode *v)
{
	yset(pool, m, S(k, v->loc), v);
}

static struct ynode *map(struct loc l)
{
	return ynew(pool, Y_MAP, l);
}

/* a copy of a topology variable's value with every scalar's ${name} expanded; NULL after an error */
static struct ynode *expand_value(const struct ynode *n, const struct vars *v)
{
	struct ynode *r;

	if (n->type == Y_SCALAR) {
		const char *s = expand(n->s, n->loc, v);
		return s ? yscalar(pool, s, n->style, n->loc) : NULL;
	}
	r = ynew(pool, n->type, n->loc);
	for (size_t i = 0; i < n->n; i++) {
		struct ynode *e = expand_value(n->v[i], v);
		if (!e)
			return NULL;
		if (n->type == Y_MAP)
			yset(pool, r, ycopy(pool, n->k[i]), e);
		else
			ypush(pool, r, e);
	}
	return r;
}

/* create.version expanded and checked (NULL stays NULL: spec: without version); 0, or -1 (reported) */
static int expand_version(const struct distro *d, struct cluster *c)
{
	struct capi *k = c->create.capi;
	struct vars v;
	const char *version;
	int minor;

	if (!k->version)
		return 0;
	vars_init(&v, d, c, NULL, k->namespace);
	if (!(version = expand(k->version, k->version_loc, &v)))
		return -1;
	if (!semver(version, &minor)) {
		loc_error(k->version_loc, "create.version '%s' is not a Kubernetes version (vMAJOR.MINOR.PATCH, e.g. "
			  "v1.33.2)", version);
		return -1;
	}
	k->version = version;
	return 0;
}

static const char *render_cluster(const struct distro *d, struct cluster *c)
{
	struct capi *k = c->create.capi;
	struct ynode *doc = map(k->loc), *md = map(k->loc), *lb = map(k->loc), *an = map(k->loc);
	struct ynode *spec = map(k->loc), *top = map(k->loc);
	struct vars v;
	struct buf out = BUF_INIT;
	const char *version;

	vars_init(&v, d, c, NULL, k->namespace);
	if (!(version = k->version))
		return NULL;
	put(doc, "apiVersion", S(aprintf("cluster.x-k8s.io/%s", k->api), k->loc));
	put(doc, "kind", S("Cluster", k->loc));
	put(md, "name", S(c->name, k->loc));
	put(md, "namespace", S(k->namespace, k->loc));
	put(lb, "cluster.x-k8s.io/cluster-name", S(c->name, k->loc));
	put(lb, "idpmake.io/cluster", S(c->name, k->loc));
	put(lb, "idpmake.io/distro", S(d->name, k->loc));
	put(md, "labels", lb);
	/* whose it is: the distro's name above, and where it pushes (capiowner.c) */
	put(an, "idpmake.io/home", Q(k->home, k->loc));
	/* Argo CD deletes higher waves first: the Cluster before its templates (notes/capi.md §2.2) */
	put(an, "argocd.argoproj.io/sync-wave", Q("1", k->loc));
	/* and no sync of anyone's prunes it either (a prune would destroy the cluster) */
	put(an, "argocd.argoproj.io/sync-options", Q("Prune=false", k->loc));
	put(md, "annotations", an);
	put(doc, "metadata", md);
	if (!strcmp(k->api, "v1beta2")) {
		struct ynode *ref = map(k->loc);
		put(ref, "name", S(k->class_name, k->loc));
		put(top, "classRef", ref);
	} else {
		put(top, "class", S(k->class_name, k->loc));
	}
	put(top, "version", S(version, k->version_loc));
	if (k->cp_replicas >= 0) {
		struct ynode *cp = map(k->loc);
		put(cp, "replicas", S(aprintf("%d", k->cp_replicas), k->loc));
		put(top, "controlPlane", cp);
	}
	if (k->nworkers) {
		struct ynode *w = map(k->loc), *mds = ynew(pool, Y_SEQ, k->loc);
		for (size_t i = 0; i < k->nworkers; i++) {
			struct ynode *e = map(k->workers[i].loc);
			put(e, "class", S(k->workers[i].class, k->workers[i].loc));
			put(e, "name", S(k->workers[i].name, k->workers[i].loc));
			if (k->workers[i].replicas >= 0)
				put(e, "replicas", S(aprintf("%d", k->workers[i].replicas), k->workers[i].loc));
			ypush(pool, mds, e);
		}
		put(w, "machineDeployments", mds);
		put(top, "workers", w);
	}
	if (k->vars && k->vars->n) {
		struct ynode *vs = ynew(pool, Y_SEQ, k->vars->loc);
		for (size_t i = 0; i < k->vars->n; i++) {
			struct ynode *e = map(k->vars->k[i]->loc), *val = expand_value(k->vars->v[i], &v);
			if (!val)
				return NULL;
			put(e, "name", S(k->vars->k[i]->s, k->vars->k[i]->loc));
			put(e, "value", val);
			ypush(pool, vs, e);
		}
		put(top, "variables", vs);
	}
	put(spec, "topology", top);
	put(doc, "spec", spec);
	if (yaml_emit(doc, &out) < 0) {
		loc_error(k->loc, "cannot write the Cluster of '%s'", c->name);
		buf_release(&out);
		return NULL;
	}
	{
		const char *t = astrdup(out.s);
		buf_release(&out);
		return t;
	}
}

/*
 * the package cluster-NAME, synced to the management cluster, never automated:
 * the Cluster's text (class:), or a copy of the spec: package (tmpl), which
 * renders with the created cluster's variables (vars.c) and has none of the
 * template's needs, hooks or sync settings
 */
/* a create.spec copy's key: what its check and its labels read too (capicheck.c) */
static const char *spec_key(const struct distro *d, const struct cluster *c, const struct package *tmpl)
{
	const struct capi *k = c->create.capi;

	return aprintf("%s\ncreate.spec of %s: api %s, namespace %s, version %s, distro %s, home %s",
		       tmpl->spec ? tmpl->spec : "", c->name, k->api, k->namespace, k->version ? k->version : "-",
		       d->name, k->home);
}

static void add_package(struct distro *d, struct cluster *c, struct package *p, const struct package *tmpl)
{
	struct capi *k = c->create.capi;
	static struct rule rule = { .name = "capi-cluster", .description = "a Cluster API Cluster idpmake renders",
				    .definition = "capi-cluster v1", .builtin = RENDER_CAPI };

	memset(p, 0, sizeof(*p));
	if (tmpl) {
		p->type = tmpl->type;
		p->rule = tmpl->rule;
		p->src = tmpl->src;
		p->path = tmpl->path;
		p->git = tmpl->git;
		p->chart = tmpl->chart;
		p->render_local = tmpl->render_local;
		p->values = tmpl->values;
		p->set = tmpl->set;
		p->labels = tmpl->labels;
		p->rewrite = tmpl->rewrite;
		p->nrewrite = tmpl->nrewrite;
		p->dir = tmpl->dir;
		p->spec = spec_key(d, c, tmpl);
	} else {
		p->type = "capi-cluster";
		p->rule = &rule;
		p->src = SRC_NONE;
		p->dir = d->dir;
		p->spec = k->text;
	}
	p->name = aprintf("cluster-%s", c->name);
	p->namespace = k->namespace;
	p->namespace_loc = k->loc;
	p->sync.wait_healthy = 0;	/* Synced, never health: Argo CD's health of a Cluster says nothing (§2.1) */
	p->sync.timeout = 300;
	p->sync.prune = 0;	/* never: a Cluster pruned is a cluster destroyed (capiprune.c deletes, in order) */
	p->sync.options.v = amalloc(3 * sizeof(*p->sync.options.v));
	p->sync.options.loc = amalloc(3 * sizeof(*p->sync.options.loc));
	p->sync.options.v[p->sync.options.n++] = "RespectIgnoreDifferences=true";
	p->sync.options.v[p->sync.options.n++] = "PruneLast=true";
	p->sync.options.v[p->sync.options.n++] = "CreateNamespace=true";
	p->capi_of = c;
	p->loc = tmpl ? k->spec_loc : k->loc;
	k->pkg = p;
}

void capi_finish(struct distro *d)
{
	size_t n = 0;
	struct package *pk;

	for (size_t i = 0; i < d->nclusters; i++)
		n += d->clusters[i].create.capi != NULL;
	if (!n)
		return;
	if (!pool)
		pool = ypool_new();
	/* the packages move: nothing points into d->packages yet (the graph is built after the load) */
	pk = amalloc((d->npackages + n + 1) * sizeof(*pk));
	memcpy(pk, d->packages, d->npackages * sizeof(*pk));
	d->packages = pk;
	/* create.spec's templates first: what a class or a profile names is checked against all of them */
	for (size_t i = 0; i < d->nclusters; i++) {
		const struct capi *k = d->clusters[i].create.capi;
		struct package *t = k && k->spec_pkg ? find_package(d, k->spec_pkg) : NULL;
		if (t && !t->capi_of)
			t->capi_spec = 1;
	}
	for (size_t j = 0; j < d->nprofiles; j++)
		for (size_t m = 0; m < d->profiles[j].packages.n; m++) {
			const struct package *t = find_package(d, d->profiles[j].packages.v[m]);
			if (t && t->capi_spec)
				loc_error(d->profiles[j].packages.loc[m], "package '%s' is a created cluster's create.spec: "
					  "it renders as cluster-NAME on the management cluster, and goes to no cluster "
					  "itself; drop it from profile '%s'", t->name, d->profiles[j].name);
		}
	for (size_t i = 0; i < d->nclusters; i++) {
		struct cluster *c = &d->clusters[i];
		struct capi *k = c->create.capi;
		struct package *cls = NULL;
		if (!k)
			continue;
		if (c->reg.set)
			loc_error(c->reg.loc, "cluster '%s' is created (create.management): drop 'register'; idpmake "
				  "registers it with the credential create.credential names", c->name);
		k->distro = d->name;
		k->home = capi_home(d);
		c->argo_name = c->name;	/* destination.name: a cluster made again keeps its Applications */
		if (k->management && !(k->mgmt = find_cluster(d, k->management)))
			loc_error(k->management_loc, "create.management '%s' is not a cluster of this distro",
				  k->management);
		else if (k->mgmt == c)
			loc_error(k->management_loc, "cluster '%s' cannot be its own management cluster", c->name);
		else if (k->mgmt && k->mgmt->create.capi)
			loc_error(k->management_loc, "the management cluster '%s' is itself made through Cluster API: "
				  "not supported yet", k->management);
		if (k->class_pkg && (cls = find_package(d, k->class_pkg)) && cls->capi_spec)
			loc_error(k->loc, "create.class.package '%s' is also a created cluster's create.spec: a package is "
				  "one or the other", k->class_pkg);
		else if (k->class_pkg && !(cls = find_package(d, k->class_pkg)))
			loc_error(k->loc, "create.class.package '%s' is not a package of this distro", k->class_pkg);
		else if (k->class_pkg && k->mgmt && !cluster_has(d, k->mgmt, cls))
			loc_error(k->loc, "create.class.package '%s' does not go to the management cluster '%s' (check its "
				  "profiles)", k->class_pkg, k->management);
		for (size_t j = 0; j < k->cni.n; j++) {
			struct package *p = find_package(d, k->cni.v[j]);
			if (!p)
				loc_error(k->cni.loc[j], "cni package '%s' is not a package of this distro", k->cni.v[j]);
			else if (!cluster_has(d, c, p))
				loc_error(k->cni.loc[j], "cni package '%s' does not go to cluster '%s' (check its profiles)",
					  k->cni.v[j], c->name);
			else if (!p->sync.wait_healthy)
				loc_error(k->cni.loc[j], "cni package '%s' waits for Synced only (sync.wait: synced): the "
					  "packages after it need its nodes Ready; drop wait: synced", k->cni.v[j]);
		}
		if (find_package(d, aprintf("cluster-%s", c->name)))
			loc_error(c->loc, "the package cluster-%s holds the Cluster of created cluster '%s': rename the "
				  "distro's package of that name", c->name, c->name);
		if (strlen(c->name) > 55)
			loc_error(c->loc, "a created cluster's name has at most 55 characters (its package is cluster-NAME)");
		if (k->spec_pkg) {
			struct package *t = find_package(d, k->spec_pkg);
			if (!t || t->capi_of)	/* cluster-NAME: not a package of the distro as written */
				loc_error(k->spec_loc, "create.spec '%s' is not a package of this distro", k->spec_pkg);
			else if (t->rule && t->rule->builtin == RENDER_ARGOCD_APP)
				loc_error(k->spec_loc, "create.spec '%s' is an Argo CD Application package: give a package "
					  "that renders the Cluster API manifests (manifests, kustomize, helm)", k->spec_pkg);
			else if (t->deploy_kubectl)
				loc_error(k->spec_loc, "create.spec '%s' has deploy: kubectl: a created cluster's manifests "
					  "go through Argo CD, which idpmake reads the Cluster through", k->spec_pkg);
			else if (t->rule && t->rule->builtin == RENDER_HELM && t->src == SRC_CHART && !t->render_local)
				loc_error(k->spec_loc, "create.spec '%s' is a chart Argo CD would render: give it render: local, "
					  "so that idpmake renders the Cluster and checks it", k->spec_pkg);
			if (loc_errors || expand_version(d, c) < 0)
				continue;
			add_package(d, c, &d->packages[d->npackages++], t);
			continue;
		}
		if (loc_errors || expand_version(d, c) < 0 || !(k->text = render_cluster(d, c)))
			continue;
		add_package(d, c, &d->packages[d->npackages++], NULL);
	}
}

const char *capi_home(const struct distro *d)
{
	struct hasher *h = hasher_new();
	char hex[33];

	hasher_adds(h, "idpmake home");
	hasher_adds(h, d->git.remote ? url_owner_form(d->git.remote) : "");
	hasher_adds(h, d->git.branch ? d->git.branch : "main");
	hasher_adds(h, d->git.path ? d->git.path : "${cluster}/${package}");
	hash_hex(hasher_end(h), hex);
	return aprintf("%.16s", hex);
}


struct cluster *capi_cluster_of(const struct package *p)
{
	return p ? p->capi_of : NULL;
}

int capi_is_cni(const struct cluster *c, const struct package *p)
{
	const struct capi *k = c->create.capi;

	for (size_t i = 0; k && i < k->cni.n; i++)
		if (package_is(p, k->cni.v[i]))
			return 1;
	return 0;
}

void capi_rehome(struct distro *d)
{
	for (size_t i = 0; i < d->nclusters; i++) {
		struct cluster *c = &d->clusters[i];
		struct capi *k = c->create.capi;
		const char *h = capi_home(d);
		if (!k || !k->pkg || (k->home && !strcmp(h, k->home)))
			continue;
		k->home = h;
		if (k->spec_pkg) {
			const struct package *tmpl = find_package(d, k->spec_pkg);
			if (tmpl)
				k->pkg->spec = spec_key(d, c, tmpl);
		} else if (k->text && (k->text = render_cluster(d, c))) {
			k->pkg->spec = k->text;
		}
	}
}
