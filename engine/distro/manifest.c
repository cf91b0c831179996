/*
 * manifest.c - distro.yaml, format version 1 (../shared/spec/distro.md).
 *
 * Loading is two passes:
 *   1. read the file into a YAML tree (yaml.c); if it has `extends`, load the
 *      parent tree first and merge the child into it key by key (maps merge
 *      recursively, lists and scalars replace, null removes): extends.c;
 *   2. convert the merged tree into struct distro, checking every key
 *      against the schema below.  Every node keeps the file it came from,
 *      so relative paths resolve against the distro that wrote them and
 *      errors point at the right file.
 * Errors are collected (loc_error) rather than stopping at the first, so one
 * run of `validate` shows them all.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "distro/capi.h"
#include "distro/conv.h"
#include "distro/create.h"
#include "distro/extends.h"
#include "distro/fleet.h"
#include "distro/refs.h"
#include "distro/manifest.h"
#include "distro/repourl.h"
#include "pack/pack.h"
#include "base/re.h"
#include "distro/removal.h"
#include "distro/rule.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"

static struct ypool *pool;	/* the trees of every distro file, kept for the run */


static const char *file_dir(struct loc loc)
{
	return path_dir(loc.file);
}

/*
 * A path must stay inside the folder of the distro that wrote it: no '..'
 * out of it, not absolute, not through a symlink that leads out.  Returns
 * the path joined to that folder, or NULL after an error.
 */
static const char *inside(const struct ynode *n, const char *what, int must_exist)
{
	const char *dir = file_dir(n->loc), *p;
	char rdir[PATH_MAX], rp[PATH_MAX];
	int depth = 0;

	if (!n->slen) {
		loc_error(n->loc, "%s is empty", what);
		return NULL;
	}
	if (n->s[0] == '/') {
		loc_error(n->loc, "%s '%s' is absolute; paths are relative to the distro folder", what, n->s);
		return NULL;
	}
	for (const char *s = n->s; *s; ) {
		const char *e = strchr(s, '/');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == 2 && !memcmp(s, "..", 2))
			depth--;
		else if (len && !(len == 1 && *s == '.'))
			depth++;
		if (depth < 0) {
			loc_error(n->loc, "%s '%s' escapes the distro folder", what, n->s);
			return NULL;
		}
		s += len + (e ? 1 : 0);
		if (!e)
			break;
	}
	p = path_join(dir, n->s);
	{
		/*
		 * most paths of a distro share its folder: resolve that once; a
		 * copy of the folder's name, not a pointer into the arena, which
		 * the run may release (fuzz-distro: a use after free)
		 */
		static char last_dir[PATH_MAX], last_real[PATH_MAX];
		if (*last_dir && !strcmp(last_dir, dir)) {
			strcpy(rdir, last_real);
		} else {
			if (!realpath(dir, rdir))
				return p;
			*last_dir = 0;
			if (strlen(dir) < sizeof(last_dir)) {
				strcpy(last_dir, dir);
				strcpy(last_real, rdir);
			}
		}
	}
	if (!realpath(p, rp)) {
		if (must_exist) {
			loc_error(n->loc, "%s '%s' does not exist", what, n->s);
			return NULL;
		}
		return p;
	}
	if (strncmp(rp, rdir, strlen(rdir)) || (rp[strlen(rdir)] && rp[strlen(rdir)] != '/')) {
		loc_error(n->loc, "%s '%s' escapes the distro folder through a symlink (to %s)", what, n->s, rp);
		return NULL;
	}
	return p;
}

/* ---- conversion ---- */

static void conv_hooks(struct package *p, const struct ynode *n, struct hook **out, size_t *nout,
		       const char *phase)
{
	if (!n || yisnull(n) || !want(n, Y_SEQ, "hooks"))
		return;
	*out = amalloc(n->n * sizeof(**out) + 1);
	for (size_t i = 0; i < n->n; i++) {
		const struct ynode *h = n->v[i], *x;
		struct hook *hk = &(*out)[*nout];
		if (!want(h, Y_MAP, "a hook"))
			continue;
		CHECK_KEYS(h, "a hook", "name", "run", "inputs", "when", "timeout", "env", "vars");
		hk->loc = h->loc;
		hk->dir = file_dir(h->loc);
		if (!(x = yget(h, "name")) || !str(x, "hook name")) {
			loc_error(h->loc, "a %s hook of package '%s' needs a 'name'", phase, p->name);
			continue;
		}
		hk->name = label(x, "hook name");
		for (size_t j = 0; j < *nout; j++)
			if (!strcmp((*out)[j].name, hk->name))
				loc_error(x->loc, "%s hook '%s' of package '%s' is defined twice", phase, hk->name, p->name);
		if (!(hk->run = str(yget(h, "run"), "hook run"))) {
			loc_error(h->loc, "hook '%s' needs a 'run' command", hk->name);
			continue;
		}
		hk->inputs = strs(yget(h, "inputs"), "hook inputs");
		for (size_t j = 0; j < hk->inputs.n; j++) {
			const struct ynode *in = yget(h, "inputs")->v[j];
			const char *path = inside(in, "hook input", 1);
			if (path)
				hk->inputs.v[j] = path;
		}
		hk->when = WHEN_CHANGED;
		if ((x = yget(h, "when")) && str(x, "when")) {
			if (!strcmp(x->s, "changed"))
				hk->when = WHEN_CHANGED;
			else if (!strcmp(x->s, "once"))
				hk->when = WHEN_ONCE;
			else if (!strcmp(x->s, "always"))
				hk->when = WHEN_ALWAYS;
			else
				loc_error(x->loc, "when must be changed, once or always, not '%s'", x->s);
		}
		hk->timeout = integer(yget(h, "timeout"), "hook timeout", 0);
		/* env: names of variables handed on from idpmake's environment (hook.c) */
		hk->env = strs(yget(h, "env"), "hook env");
		for (size_t j = 0; j < hk->env.n; j++) {
			const char *e = hk->env.v[j];
			size_t k = strspn(e, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
			if (!*e || e[k] || (*e >= '0' && *e <= '9'))
				loc_error(hk->env.loc[j], "hook env '%s' is not a variable name (letters, digits and '_')", e);
		}
		/* vars: the distro variables its key holds beyond those it names (hookvars.h) */
		hk->has_vars = (x = yget(h, "vars")) && !yisnull(x);
		hk->vars = strs(x, "hook vars");
		for (size_t j = 0; j < hk->vars.n; j++) {
			const char *e = hk->vars.v[j];
			size_t k = strspn(e, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.");
			if (!*e || e[k])
				loc_error(hk->vars.loc[j], "hook vars '%s' is not a variable name (letters, digits, '_', '-', '.')", e);
		}
		(*nout)++;
	}
}

static struct rule *find_rule(struct distro *d, const char *name)
{
	for (size_t i = 0; i < d->nrules; i++)
		if (!strcmp(d->rules[i]->name, name))
			return d->rules[i];
	return NULL;
}

static void conv_package(struct distro *d, struct package *p, const struct ynode *key, const struct ynode *n)
{
	const struct ynode *x, *src;
	int nsrc = 0;

	p->name = label(key, "package name");
	p->loc = key->loc;
	p->dir = file_dir(key->loc);
	if (!want(n, Y_MAP, "a package"))
		return;
	CHECK_KEYS(n, "a package", "type", "description", "path", "git", "chart", "render", "values", "set",
		   "namespace", "needs", "labels", "rewrite", "sync", "hooks", "deploy");
	{
		/* the spec joins the render key, which the keys index publishes in the GitOps repository:
		 * a git: or chart: URL's user info (a password, or a token as user) is left out of it */
		struct buf b = BUF_INIT;
		struct ynode *urls[2] = { (struct ynode *)ypath(n, "git.url"), (struct ynode *)ypath(n, "chart.repo") };
		const char *saved[2] = { NULL, NULL };
		size_t savedlen[2] = { 0, 0 };
		for (int i = 0; i < 2; i++)
			if (urls[i] && urls[i]->type == Y_SCALAR && memchr(urls[i]->s, '@', urls[i]->slen)) {
				saved[i] = urls[i]->s;
				savedlen[i] = urls[i]->slen;
				urls[i]->s = url_strip(saved[i], 0);
				urls[i]->slen = strlen(urls[i]->s);
			}
		ycanon(n, &b);
		p->spec = astrdup(b.s);
		buf_release(&b);
		for (int i = 0; i < 2; i++)
			if (saved[i]) {
				urls[i]->s = saved[i];
				urls[i]->slen = savedlen[i];
			}
	}
	if (!(x = yget(n, "type")) || !(p->type = str(x, "type"))) {
		loc_error(n->loc, "package '%s' needs a 'type' (manifests, kustomize, helm, argocd-app or a rule name)", p->name);
		return;
	}
	if (!(p->rule = find_rule(d, p->type))) {
		const char **names = amalloc(d->nrules * sizeof(*names) + 1);
		const char *sug;
		for (size_t i = 0; i < d->nrules; i++)
			names[i] = d->rules[i]->name;
		sug = closest(p->type, names, d->nrules);
		loc_error(x->loc, "unknown package type '%s'%s%s%s", p->type, sug ? "; did you mean '" : "",
			  sug ? sug : "", sug ? "'?" : "");
	}
	if ((src = yget(n, "path")) && !yisnull(src)) {
		nsrc++;
		p->src = SRC_PATH;
		p->path_loc = src->loc;
		if (str(src, "path"))
			p->path = inside(src, "path", 1);
		if (p->path) {
			struct stat st;
			if (stat(p->path, &st) == 0 && !S_ISDIR(st.st_mode))
				loc_error(src->loc, "path '%s' is not a folder", src->s);
		}
	}
	if ((src = yget(n, "git")) && !yisnull(src)) {
		nsrc++;
		p->src = SRC_GIT;
		if (want(src, Y_MAP, "git")) {
			CHECK_KEYS(src, "a git source", "url", "ref", "path");
			p->git.loc = src->loc;
			p->git.url = str(yget(src, "url"), "git url");
			p->git.ref = str(yget(src, "ref"), "git ref");
			p->git.path = str(yget(src, "path"), "git path");
			if (!p->git.url)
				loc_error(src->loc, "a git source needs a 'url'");
			if (!p->git.ref)
				p->git.ref = "HEAD";
			if (!p->git.path)
				p->git.path = ".";
		}
	}
	if ((src = yget(n, "chart")) && !yisnull(src)) {
		nsrc++;
		p->src = SRC_CHART;
		if (want(src, Y_MAP, "chart")) {
			CHECK_KEYS(src, "a chart", "repo", "name", "version");
			p->chart.repo = str(yget(src, "repo"), "chart repo");
			p->chart.name = str(yget(src, "name"), "chart name");
			p->chart.version = str(yget(src, "version"), "chart version");
			if (!p->chart.repo || !p->chart.name)
				loc_error(src->loc, "a chart needs 'repo' and 'name'");
		}
	}
	if (nsrc != 1)
		loc_error(n->loc, "package '%s' needs exactly one source: 'path', 'git' or 'chart' (it has %d)", p->name, nsrc);
	if (p->rule && p->rule->builtin != RENDER_HELM && p->src == SRC_CHART)
		loc_error(yget(n, "chart")->loc, "'chart' is a source for helm packages only (this one is '%s')", p->type);
	if ((x = yget(n, "render")) && str(x, "render")) {
		if (!strcmp(x->s, "local"))
			p->render_local = 1;
		else if (strcmp(x->s, "argocd"))
			loc_error(x->loc, "render must be 'local' or 'argocd', not '%s'", x->s);
		if (p->rule && p->rule->builtin != RENDER_HELM)
			loc_error(x->loc, "'render' applies to helm packages only");
	}
	if (p->rule && p->rule->builtin == RENDER_HELM && p->src != SRC_CHART)
		p->render_local = 1;
	if ((x = yget(n, "deploy")) && str(x, "deploy")) {
		/* kubectl: applied by kubectl.c as a step of the graph, before the push (bootstrap) */
		if (!strcmp(x->s, "kubectl"))
			p->deploy_kubectl = 1;
		else if (strcmp(x->s, "argocd"))
			loc_error(x->loc, "deploy must be 'argocd' or 'kubectl', not '%s'", x->s);
		if (p->deploy_kubectl && p->rule && p->rule->builtin == RENDER_ARGOCD_APP)
			loc_error(x->loc, "'deploy: kubectl' applies manifests; an argocd-app package is Applications for Argo CD");
		if (p->deploy_kubectl && p->rule && p->rule->builtin == RENDER_HELM)
			p->render_local = 1;	/* kubectl applies the chart's objects, not an Application */
	}
	p->values = strs(yget(n, "values"), "values");
	for (size_t i = 0; i < p->values.n; i++) {
		const char *path = inside(yget(n, "values")->v[i], "values file", 1);
		if (path)
			p->values.v[i] = path;
	}
	p->set = kvs(yget(n, "set"), "set");
	p->namespace = str(yget(n, "namespace"), "namespace");
	if (p->namespace)
		p->namespace_loc = yget(n, "namespace")->loc;
	p->needs = strs(yget(n, "needs"), "needs");
	p->labels = kvs(yget(n, "labels"), "labels");
	if ((x = yget(n, "rewrite")) && !yisnull(x) && want(x, Y_SEQ, "rewrite")) {
		p->rewrite = amalloc(x->n * sizeof(*p->rewrite) + 1);
		for (size_t i = 0; i < x->n; i++) {
			const struct ynode *r = x->v[i];
			struct rewrite *rw = &p->rewrite[p->nrewrite];
			const char *err;
			struct re *re;
			if (!want(r, Y_MAP, "a rewrite"))
				continue;
			CHECK_KEYS(r, "a rewrite", "match", "replace");
			rw->loc = yget(r, "replace") ? yget(r, "replace")->loc : r->loc;
			rw->match = str(yget(r, "match"), "match");
			rw->replace = str(yget(r, "replace"), "replace");
			if (!rw->match || !rw->replace) {
				loc_error(r->loc, "a rewrite needs 'match' and 'replace'");
				continue;
			}
			if (!(re = re_compile(rw->match, &err)))
				loc_error(yget(r, "match")->loc, "bad regular expression: %s", err);
			re_free(re);
			p->nrewrite++;
		}
	}
	p->sync.wait_healthy = 1;
	p->sync.timeout = 300;
	if ((x = yget(n, "sync")) && !yisnull(x) && want(x, Y_MAP, "sync")) {
		const struct ynode *w;
		CHECK_KEYS(x, "sync", "wait", "timeout", "prune", "options", "automated", "self-heal", "fleet");
		if ((w = yget(x, "wait")) && str(w, "wait")) {
			if (!strcmp(w->s, "synced"))
				p->sync.wait_healthy = 0;
			else if (strcmp(w->s, "healthy"))
				loc_error(w->loc, "wait must be 'healthy' or 'synced', not '%s'", w->s);
		}
		p->sync.timeout = integer(yget(x, "timeout"), "sync timeout", 300);
		p->sync.prune = boolean(yget(x, "prune"), "prune", 0);
		p->sync.options = strs(yget(x, "options"), "sync options");
		p->sync.automated = boolean(yget(x, "automated"), "automated", 0);
		p->sync.self_heal = boolean(yget(x, "self-heal"), "self-heal", 0);
		if (p->sync.self_heal && !p->sync.automated)
			loc_error(yget(x, "self-heal")->loc, "self-heal needs automated: true");
		if ((w = yget(x, "fleet")) && str(w, "fleet")) {
			if (!strcmp(w->s, "applicationset"))
				p->sync.appset = 1;
			else if (strcmp(w->s, "applications"))
				loc_error(w->loc, "fleet must be 'applications' or 'applicationset', not '%s'", w->s);
		}
	}
	if ((x = yget(n, "hooks")) && !yisnull(x) && want(x, Y_MAP, "hooks")) {
		CHECK_KEYS(x, "hooks", "pre", "post");
		conv_hooks(p, yget(x, "pre"), &p->pre, &p->npre, "pre");
		conv_hooks(p, yget(x, "post"), &p->post, &p->npost, "post");
	}
}

/*
 * An argocd-app package is one package per Application (or ApplicationSet)
 * file at the top of its folder, as idpbuilder makes one CustomPackage per
 * file: PACKAGE-NAME (NAME: the object's metadata.name), in the group
 * PACKAGE, which `needs`, profiles and targets may name for all of them.
 * Like idpbuilder, other files (and files that do not parse) are skipped.
 */
static void expand_argocd_apps(struct distro *d)
{
	struct package *v = NULL;
	size_t n = 0;

	for (size_t i = 0; i < d->npackages; i++) {
		struct package *p = &d->packages[i];
		DIR *dd;
		struct dirent *e;
		const char *names[256];
		size_t nn = 0, made = 0;
		if (!p->rule || p->rule->builtin != RENDER_ARGOCD_APP || !p->path || !(dd = opendir(p->path))) {
			v = agrow(v, n, sizeof(*v));
			v[n++] = *p;
			continue;
		}
		while ((e = readdir(dd)) && nn < 256) {
			size_t l = strlen(e->d_name);
			if (e->d_name[0] != '.' && ((l > 5 && !strcmp(e->d_name + l - 5, ".yaml")) ||
						    (l > 4 && !strcmp(e->d_name + l - 4, ".yml"))))
				names[nn++] = astrdup(e->d_name);
		}
		closedir(dd);
		qsort(names, nn, sizeof(*names), strptrcmp);
		for (size_t k = 0; k < nn; k++) {
			const char *file = path_join(p->path, names[k]);
			struct ypool *yp = ypool_new();
			struct ynode **docs, *api, *kind, *name;
			size_t nd, len;
			char *text = read_file(file, &len);
			int before = loc_errors;
			const char *badname = NULL;
			loc_quiet++;
			if (text && yaml_parse(yp, file, text, len, &docs, &nd) == 0 && nd && docs[0]->type == Y_MAP &&
			    (api = yget(docs[0], "apiVersion")) && api->type == Y_SCALAR && !strncmp(api->s, "argoproj.io/", 12) &&
			    (kind = yget(docs[0], "kind")) && (ystr_eq(kind, "Application") || ystr_eq(kind, "ApplicationSet")) &&
			    (name = ypath(docs[0], "metadata.name")) && name->type == Y_SCALAR) {
				struct package q = *p;
				q.name = aprintf("%s-%s", p->name, name->s);
				for (char *c = (char *)q.name; *c; c++)
					*c = *c >= 'A' && *c <= 'Z' ? (char)(*c - 'A' + 'a') : *c;
				if (!is_dns_label(q.name))
					badname = q.name;	/* said below, where errors count */
				q.group = p->name;
				q.app_file = file;
				q.spec = aprintf("%s\napp %s", p->spec, names[k]);
				v = agrow(v, n, sizeof(*v));
				v[n++] = q;
				made++;
			}
			loc_quiet--;
			loc_errors = before;	/* idpbuilder skips what does not parse */
			if (badname)
				loc_error(p->loc, "package '%s': its Application %s makes the package name '%s', "
					  "which is not a DNS-1123 label", p->name, file, badname);
			free(text);
			ypool_free(yp);
		}
		if (!made) {
			v = agrow(v, n, sizeof(*v));
			v[n++] = *p;
		}
	}
	d->packages = v;
	d->npackages = n;
}

/*
 * every ${var} a package uses must be defined on each cluster it goes to;
 * its namespace, expanded, must be a DNS-1123 label (Argo CD refuses any
 * other at sync: issue 37 item 5), said once per package
 */
static void check_vars(struct distro *d)
{
	char *said = amalloc(d->npackages + 1);

	for (size_t c = 0; c < d->nclusters; c++)
		for (size_t i = 0; i < d->npackages; i++) {
			struct cluster *cl = &d->clusters[c];
			struct package *p = &d->packages[i];
			struct vars v;
			const char *ns;
			int before;
			if (!cluster_has(d, cl, p))
				continue;
			if (!(ns = package_namespace(d, cl, p)))
				continue;
			if (p->namespace && !said[i] && !is_dns_label(ns)) {
				said[i] = 1;
				loc_error(p->namespace_loc, "namespace '%s'%s is not a DNS-1123 label (lower-case letters, "
					  "digits and '-', starting and ending with a letter or digit, at most 63 "
					  "characters): Argo CD refuses it at sync", ns, strcmp(ns, p->namespace) ?
					  aprintf(" (%s on cluster '%s')", p->namespace, cl->name) : "");
			}
			before = loc_errors;	/* a namespace's error is said for each package */
			vars_init(&v, d, cl, p, ns);
			for (size_t j = 0; j < p->set.n; j++)
				expand(p->set.v[j].value, p->set.v[j].loc, &v);
			for (size_t j = 0; j < p->nrewrite; j++)
				expand(p->rewrite[j].replace, p->rewrite[j].loc, &v);
			if (d->git.path)
				expand(d->git.path, d->git.path_loc, &v);
			if (p->src == SRC_GIT && p->git.path)
				expand(p->git.path, p->git.loc, &v);
			if (p->src == SRC_CHART) {
				expand(p->chart.repo, p->loc, &v);
				expand(p->chart.name, p->loc, &v);
				if (p->chart.version)
					expand(p->chart.version, p->loc, &v);
			}
			if (loc_errors > before)
				return;	/* once is enough */
		}
}
/* secret: NS/NAME and cluster: NAME of a map (argocd.login, git.credentials) into r; 0, or -1 (printed) */
static int secret_ref(const struct ynode *x, const char *what, const char *example, struct secretref *r)
{
	const struct ynode *a;
	const char *slash;

	r->loc = x->loc;
	r->cluster = "in-cluster";
	if (!(a = yget(x, "secret")) || !str(a, "secret")) {
		if (!a)
			loc_error(x->loc, "%s needs 'secret: NAMESPACE/NAME', the Secret to read (e.g. %s)", what, example);
		return -1;
	}
	slash = strchr(a->s, '/');
	if (!slash || slash == a->s || !slash[1] || strchr(slash + 1, '/') ||
	    !is_dns_label(astrndup(a->s, (size_t)(slash - a->s))) || !is_dns_subdomain(slash + 1)) {
		loc_error(a->loc, "%s.secret must be NAMESPACE/NAME of a Secret (e.g. %s), not '%s'", what, example, a->s);
		return -1;
	}
	r->ns = astrndup(a->s, (size_t)(slash - a->s));
	r->name = slash + 1;
	if ((a = yget(x, "cluster")) && str(a, "cluster")) {
		r->cluster = a->s;
		r->loc = a->loc;
	}
	return 0;
}

/* a key of a Secret's data ([-._a-zA-Z0-9]+, as Kubernetes takes them) at a, or NULL (printed) */
static const char *secret_key(const struct ynode *a, const char *what)
{
	if (!str(a, what))
		return NULL;
	if (!*a->s || strspn(a->s, "-._abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789") != strlen(a->s)) {
		loc_error(a->loc, "%s must be a key of a Secret's data (letters, digits, '-', '_', '.'), not '%s'", what, a->s);
		return NULL;
	}
	return a->s;
}

/* argocd.login: {secret: NS/NAME, key: password, user: admin, cluster: in-cluster} */
static void login(struct distro *d, const struct ynode *x)
{
	const struct ynode *a;

	CHECK_KEYS(x, "login", "secret", "key", "user", "cluster");
	d->argocd.login.key = "password";
	d->argocd.login.user = "admin";
	if (secret_ref(x, "argocd.login", "argocd/argocd-initial-admin-secret", &d->argocd.login.ref) < 0)
		return;
	if ((a = yget(x, "key")) && secret_key(a, "argocd.login.key"))
		d->argocd.login.key = a->s;
	if ((a = yget(x, "user")) && str(a, "user"))
		d->argocd.login.user = a->s;
}

/* git.credentials: {secret: NS/NAME, username-key: username, password-key: password, cluster: in-cluster} */
static void git_credentials(struct distro *d, const struct ynode *x)
{
	const struct ynode *a;

	CHECK_KEYS(x, "credentials", "secret", "username-key", "password-key", "cluster");
	d->git.credentials.user_key = "username";
	d->git.credentials.password_key = "password";
	if (secret_ref(x, "git.credentials", "gitea/gitea-credential", &d->git.credentials.ref) < 0)
		return;
	if ((a = yget(x, "username-key")) && secret_key(a, "git.credentials.username-key"))
		d->git.credentials.user_key = a->s;
	if ((a = yget(x, "password-key")) && secret_key(a, "git.credentials.password-key"))
		d->git.credentials.password_key = a->s;
}

static void conv_distro(struct distro *d, const struct ynode *root, const char *statedir)
{
	const struct ynode *x;
	struct rule **builtin;
	size_t nbuiltin;

	CHECK_KEYS(root, "the distro", "idpmake", "name", "description", "extends", "vars", "git", "argocd",
		   "clusters", "profiles", "rules", "packages", "rollout", "tls", "urls");
	if (!(x = yget(root, "name")) || !str(x, "name"))
		loc_error(root->loc, "the distro needs a 'name'");
	else
		d->name = label(x, "distro name");
	d->description = str(yget(root, "description"), "description");
	d->vars = kvs(yget(root, "vars"), "vars");
	d->urls = kvs(yget(root, "urls"), "urls");
	for (size_t i = 0; i < d->vars.n; i++)
		if (!strcmp(d->vars.v[i].key, "cluster") || !strcmp(d->vars.v[i].key, "package") ||
		    !strcmp(d->vars.v[i].key, "namespace"))
			loc_error(d->vars.v[i].loc, "'%s' is a built-in variable and cannot be set", d->vars.v[i].key);

	d->git.branch = "main";
	d->git.path = "${cluster}/${package}";
	d->git.path_loc = (struct loc){ d->file, 0, 0 };
	d->git.author_name = "idpmake";
	d->git.author_email = "idpmake@localhost";
	if ((x = yget(root, "git")) && !yisnull(x) && want(x, Y_MAP, "git")) {
		const struct ynode *a;
		CHECK_KEYS(x, "git", "remote", "branch", "path", "author", "ca-file", "credentials");
		if ((a = yget(x, "credentials")) && !yisnull(a) && want(a, Y_MAP, "credentials"))
			git_credentials(d, a);
		d->git.remote = str(yget(x, "remote"), "remote");
		if (d->git.remote)
			d->git.remote_loc = yget(x, "remote")->loc;
		/* a relative path, not git's host:path or user@host:path (repourl.c) */
		if (d->git.remote && !strstr(d->git.remote, "://") && d->git.remote[0] != '/' &&
		    remote_is_local(d->git.remote))
			d->git.remote = path_join(file_dir(yget(x, "remote")->loc), d->git.remote);
		if (yget(x, "branch"))
			d->git.branch = str(yget(x, "branch"), "branch");
		if (yget(x, "path")) {
			d->git.path = str(yget(x, "path"), "path");
			d->git.path_loc = yget(x, "path")->loc;
		}
		if ((a = yget(x, "ca-file")) && str(a, "ca-file"))
			d->git.ca_file = path_join(file_dir(a->loc), a->s);
		if ((a = yget(x, "author")) && !yisnull(a) && want(a, Y_MAP, "author")) {
			CHECK_KEYS(a, "author", "name", "email");
			if (yget(a, "name"))
				d->git.author_name = str(yget(a, "name"), "author name");
			if (yget(a, "email"))
				d->git.author_email = str(yget(a, "email"), "author email");
		}
	}
	d->argocd.namespace = "argocd";
	d->argocd.project = "default";
	d->argocd.app_name = "${cluster}-${package}";
	if ((x = yget(root, "argocd")) && !yisnull(x) && want(x, Y_MAP, "argocd")) {
		const struct ynode *a;
		CHECK_KEYS(x, "argocd", "server", "namespace", "project", "app-name", "insecure", "token-file", "ca-file",
			   "repository", "fleet", "login", "grpc-web-root-path", "repo-url");
		d->argocd.loc = x->loc;
		repo_url_conv(d, yget(x, "repo-url"));
		if ((a = yget(x, "grpc-web-root-path")) && str(a, "grpc-web-root-path")) {
			/* a path of the server's, nothing a URL would read as its query, fragment or a way up */
			if (a->s[0] != '/' || strspn(a->s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._~/-") !=
						      strlen(a->s) || strstr(a->s, "/../") || strstr(a->s, "//") ||
			    (strlen(a->s) >= 3 && !strcmp(a->s + strlen(a->s) - 3, "/..")))
				loc_error(a->loc, "argocd.grpc-web-root-path must be a path such as /argocd (letters, digits, "
					  "'.', '_', '~', '-' between '/'), not '%s'", a->s);
			else
				d->argocd.grpc_web_root_path = a->s;
		}
		if ((a = yget(x, "login")) && !yisnull(a) && want(a, Y_MAP, "login"))
			login(d, a);
		if ((a = yget(x, "repository")) && str(a, "repository")) {
			if (!strcmp(a->s, "registered"))
				d->argocd.repo_registered = 1;
			else if (strcmp(a->s, "register"))
				loc_error(a->loc, "repository must be 'register' (idpmake registers the GitOps repository "
					  "with its credentials, the default) or 'registered' (Argo CD already has it), not '%s'", a->s);
		}
		if ((a = yget(x, "fleet")) && str(a, "fleet")) {
			if (!strcmp(a->s, "applicationset"))
				d->argocd.fleet_appset = 1;
			else if (strcmp(a->s, "applications"))
				loc_error(a->loc, "fleet must be 'applications' (one Application per cluster and package, "
					  "the default) or 'applicationset', not '%s'", a->s);
		}
		d->argocd.server = str(yget(x, "server"), "server");
		/* its own Argo CD, or where one reads it: ARGOCD_* then fill in (argoserver.c, repourl.h) */
		d->argocd.named = d->argocd.server || d->argocd.repo_url;
		if (d->argocd.server && url_userinfo(d->argocd.server))
			loc_error(yget(x, "server")->loc, "argocd.server must not hold a user name or password ('%s'): Argo CD "
				  "takes a token, from ARGOCD_AUTH_TOKEN or argocd.token-file", url_userinfo(d->argocd.server));
		if (yget(x, "namespace"))
			d->argocd.namespace = str(yget(x, "namespace"), "namespace");
		if (yget(x, "project"))
			d->argocd.project = str(yget(x, "project"), "project");
		if (yget(x, "app-name")) {
			d->argocd.app_name = str(yget(x, "app-name"), "app-name");
			d->argocd.app_name_loc = yget(x, "app-name")->loc;
		}
		d->argocd.insecure = boolean(yget(x, "insecure"), "insecure", 0);
		if ((a = yget(x, "token-file")) && str(a, "token-file"))
			d->argocd.token_file = path_join(file_dir(a->loc), a->s);
		if ((a = yget(x, "ca-file")) && str(a, "ca-file"))
			d->argocd.ca_file = path_join(file_dir(a->loc), a->s);
	}

	repo_url_check(d);	/* a remote Argo CD cannot read (repourl.h) */

	/* rules: built-ins, then the distro's rules/ folder, then `rules:` */
	builtin = rules_builtin(&nbuiltin);
	d->rules = amalloc((nbuiltin + 64) * sizeof(*d->rules));
	for (size_t i = 0; i < nbuiltin; i++)
		d->rules[d->nrules++] = builtin[i];
	if ((x = yget(root, "rules")) && !yisnull(x) && want(x, Y_SEQ, "rules")) {
		for (size_t i = 0; i < x->n && d->nrules < nbuiltin + 64; i++) {
			const char *path;
			char *text;
			size_t len;
			struct rule *r;
			if (!str(x->v[i], "a rule file") || !(path = inside(x->v[i], "rule file", 1)))
				continue;
			if (!(text = read_file(path, &len))) {
				loc_error(x->v[i]->loc, "cannot read rule file '%s': %s", x->v[i]->s, strerror(errno));
				continue;
			}
			if ((r = rule_load(astrdup(path), text, len))) {
				if (find_rule(d, r->name))
					loc_error(x->v[i]->loc, "rule '%s' is defined twice", r->name);
				d->rules[d->nrules++] = r;
			}
			free(text);
		}
	}

	/* the distro's own rules/ folder, read without being listed */
	{
		const char *rdir = path_join(d->dir, "rules");
		DIR *dd = opendir(rdir);
		struct dirent *e;
		const char *names[64];
		size_t nn = 0;
		while (dd && (e = readdir(dd)) && nn < 64) {
			size_t l = strlen(e->d_name);
			if (e->d_name[0] != '.' && l > 5 && !strcmp(e->d_name + l - 5, ".yaml"))
				names[nn++] = astrdup(e->d_name);
		}
		if (dd)
			closedir(dd);
		qsort(names, nn, sizeof(*names), strptrcmp);
		for (size_t i = 0; i < nn && d->nrules < nbuiltin + 64; i++) {
			const char *path = path_join(rdir, names[i]);
			char *text;
			size_t len;
			struct rule *r;
			int listed = 0;
			for (size_t k = nbuiltin; k < d->nrules; k++)
				if (d->rules[k]->loc.file && !strcmp(d->rules[k]->loc.file, path))
					listed = 1;
			if (listed || !(text = read_file(path, &len)))
				continue;
			if ((r = rule_load(path, text, len)) && !find_rule(d, r->name))
				d->rules[d->nrules++] = r;
			free(text);
		}
	}
	if ((x = yget(root, "clusters")) && !yisnull(x) && want(x, Y_MAP, "clusters")) {
		d->clusters = amalloc(x->n * sizeof(*d->clusters) + 1);
		for (size_t i = 0; i < x->n; i++)
			conv_cluster(&d->clusters[d->nclusters++], x->k[i], x->v[i]);
	}
	if (!d->nclusters) {
		d->clusters = amalloc(sizeof(*d->clusters));
		d->clusters[0].name = "in-cluster";
		d->clusters[0].server = "https://kubernetes.default.svc";
		d->clusters[0].loc = root->loc;
		d->nclusters = 1;
	}
	conv_rollout(d, yget(root, "rollout"));
	conv_tls(d, yget(root, "tls"));
	if ((x = yget(root, "profiles")) && !yisnull(x) && want(x, Y_MAP, "profiles")) {
		d->profiles = amalloc(x->n * sizeof(*d->profiles) + 1);
		for (size_t i = 0; i < x->n; i++) {
			struct profile *pr = &d->profiles[d->nprofiles++];
			pr->name = label(x->k[i], "profile name");
			pr->loc = x->k[i]->loc;
			pr->packages = strs(x->v[i], "a profile");
			strs_uniq(&pr->packages);
		}
	}
	if ((x = yget(root, "packages")) && !yisnull(x) && want(x, Y_MAP, "packages")) {
		d->packages = amalloc(x->n * sizeof(*d->packages) + 1);
		for (size_t i = 0; i < x->n; i++)
			conv_package(d, &d->packages[d->npackages++], x->k[i], x->v[i]);
	}
	if (loc_errors)
		return;
	expand_argocd_apps(d);
	if (loc_errors)
		return;
	capi_finish(d);	/* created clusters' Cluster packages (capi.c) */
	if (loc_errors)
		return;
	check_references(d);
	if (!loc_errors)
		check_vars(d);
	(void)statedir;
}

static const char *last_chain[17];
static size_t last_nchain;

size_t manifest_chain(const char *const **files)
{
	*files = last_chain;
	return last_nchain;
}

struct distro *manifest_load(const char *file, const char *statedir)
{
	struct distro *d = amalloc(sizeof(*d));
	const char **chain = last_chain;
	struct ynode *root;

	if (!pool)
		pool = ypool_new();
	d->file = file;
	d->dir = path_dir(file);
	removals_reset();
	memset(last_chain, 0, sizeof(last_chain));
	if (!(root = extends_load(pool, file, statedir, chain)))
		return NULL;
	for (last_nchain = 0; last_nchain < 17 && last_chain[last_nchain]; last_nchain++)
		;
	conv_distro(d, root, statedir);
	return loc_errors ? NULL : d;
}

void manifest_unload(void)
{
	ypool_free(pool);
	pool = NULL;
}
