/*
 * t-manifest.c - manifest.c against distros written to a scratch folder:
 * the defaults, every field of a package, located errors (counted in
 * loc_errors, printed as "file:line:col: error:" with "did you mean"),
 * extends (maps merged key by key, lists replaced, null removes; relative
 * paths resolved against the distro that wrote them; built-in distros),
 * rule files, closest(), and variables (cluster over distro, the built-ins,
 * undefined names).
 */
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "distro/manifest.h"
#include "distro/rule.h"
#include "base/util.h"
#include "scratch.h"
#include "test.h"

static const char *err;		/* what the last load() printed */

static void folder(const char *rel)
{
	if (mkdirs(path_join(tmp, rel)) < 0) {
		perror(rel);
		exit(2);
	}
}

/* the real path of p, or p */
static const char *real(const char *p)
{
	char r[PATH_MAX];

	return p && realpath(p, r) ? astrdup(r) : p ? p : "(null)";
}

/* load tmp/rel with loc_errors reset; what it printed is in `err` */
static struct distro *load(const char *rel)
{
	struct distro *d;

	loc_errors = 0;
	capture_start();
	d = manifest_load(path_join(tmp, rel), statedir);
	err = capture_end();
	return d;
}

/* did the last load print `s`? (shows what it printed when not) */
static int printed(const char *s)
{
	if (strstr(err, s))
		return 1;
	fprintf(stderr, "  expected \"%s\" in:\n%s", s, err);
	return 0;
}

/* "DIR/distro.yaml:LINE:COL: error: " of tmp/rel */
static const char *at(const char *rel, int line, int col)
{
	return aprintf("%s:%d:%d: error: ", path_join(tmp, rel), line, col);
}

static const struct kv *kv_find(const struct kvlist *l, const char *key)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i].key, key))
			return &l->v[i];
	return NULL;
}

static const char *kv_get(const struct kvlist *l, const char *key)
{
	const struct kv *kv = kv_find(l, key);
	return kv ? kv->value : "(none)";
}

static const char *join(const struct strlist *l)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; i < l->n; i++)
		buf_addf(&b, "%s%s", i ? " " : "", l->v[i]);
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

static const char *names(const struct distro *d)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; i < d->npackages; i++)
		buf_addf(&b, "%s%s", i ? " " : "", d->packages[i].name);
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

static int col_of(const char *text, int line, const char *token);

/* ---- defaults ---- */

static void test_defaults(void)
{
	struct distro *d;
	struct package *p;

	folder("mini/app");
	put("mini/distro.yaml",
	    "idpmake: 1\n"
	    "name: mini\n"
	    "packages:\n"
	    "  app:\n"
	    "    type: manifests\n"
	    "    path: app\n");
	d = load("mini/distro.yaml");
	CHECK(d != NULL);
	CHECK(loc_errors == 0);
	CHECK_STR(err, "");
	if (!d)
		return;
	CHECK_STR(d->file, path_join(tmp, "mini/distro.yaml"));
	CHECK_STR(d->dir, path_join(tmp, "mini"));
	CHECK_STR(d->name, "mini");
	CHECK(d->description == NULL);
	CHECK(d->vars.n == 0);
	CHECK(d->git.remote == NULL);
	CHECK_STR(d->git.branch, "main");
	CHECK_STR(d->git.path, "${cluster}/${package}");
	CHECK_STR(d->git.author_name, "idpmake");
	CHECK_STR(d->git.author_email, "idpmake@localhost");
	CHECK(d->git.ca_file == NULL);
	CHECK(d->argocd.server == NULL);
	CHECK_STR(d->argocd.namespace, "argocd");
	CHECK_STR(d->argocd.project, "default");
	CHECK_STR(d->argocd.app_name, "${cluster}-${package}");
	CHECK(d->argocd.token_file == NULL && !d->argocd.insecure);
	CHECK(d->nclusters == 1);
	CHECK_STR(d->clusters[0].name, "in-cluster");
	CHECK_STR(d->clusters[0].server, "https://kubernetes.default.svc");
	CHECK(d->clusters[0].argo_name == NULL && d->clusters[0].profiles.n == 0);
	CHECK(d->nprofiles == 0);
	/* the built-in rules, first */
	CHECK(d->nrules >= 4);
	if (d->nrules >= 4) {
		CHECK_STR(d->rules[0]->name, "manifests");
		CHECK(d->rules[0]->builtin == RENDER_MANIFESTS);
		CHECK_STR(d->rules[1]->name, "kustomize");
		CHECK_STR(d->rules[2]->name, "helm");
		CHECK_STR(d->rules[3]->name, "argocd-app");
		CHECK(d->rules[3]->builtin == RENDER_ARGOCD_APP);
	}
	CHECK(d->npackages == 1);
	p = &d->packages[0];
	CHECK_STR(p->name, "app");
	CHECK_STR(p->type, "manifests");
	CHECK(p->rule && p->rule == d->rules[0]);
	CHECK(p->src == SRC_PATH);
	CHECK_STR(p->path, path_join(tmp, "mini/app"));
	CHECK_STR(p->dir, path_join(tmp, "mini"));
	CHECK(p->namespace == NULL);
	CHECK_STR(package_namespace(d, &d->clusters[0], p), "app");
	CHECK(p->values.n == 0 && p->set.n == 0 && p->needs.n == 0 && p->labels.n == 0);
	CHECK(p->nrewrite == 0 && p->npre == 0 && p->npost == 0);
	CHECK(p->sync.wait_healthy == 1 && p->sync.timeout == 300 && p->sync.prune == 0 && p->sync.options.n == 0);
	CHECK(!p->render_local);
	CHECK(p->spec && *p->spec);
	CHECK(p->loc.line == 4 && p->loc.col == 3);
	CHECK(cluster_has(d, &d->clusters[0], p));
	CHECK(find_package(d, "app") == p && find_package(d, "ap") == NULL);
	CHECK(find_cluster(d, "in-cluster") == &d->clusters[0] && find_cluster(d, "x") == NULL);
}

/* ---- every field ---- */

static const char full_distro[] =
	"idpmake: 1\n"						/*  1 */
	"name: full\n"						/*  2 */
	"description: everything there is\n"			/*  3 */
	"vars:\n"						/*  4 */
	"  domain: example.com\n"				/*  5 */
	"  team: core\n"					/*  6 */
	"git:\n"						/*  7 */
	"  remote: https://git.example/idp/gitops.git\n"	/*  8 */
	"  branch: release\n"					/*  9 */
	"  path: \"clusters/${cluster}/${package}\"\n"		/* 10 */
	"  author: {name: bot, email: bot@example.com}\n"	/* 11 */
	"argocd:\n"						/* 12 */
	"  server: https://argocd.example\n"			/* 13 */
	"  namespace: gitops\n"					/* 14 */
	"  project: platform\n"					/* 15 */
	"  app-name: \"${package}-${cluster}\"\n"		/* 16 */
	"  insecure: true\n"					/* 17 */
	"  token-file: secrets/token\n"				/* 18 */
	"clusters:\n"						/* 19 */
	"  prod:\n"						/* 20 */
	"    server: https://prod.example:6443\n"		/* 21 */
	"    profiles: [core]\n"				/* 22 */
	"    vars: {domain: prod.example.com, region: eu}\n"	/* 23 */
	"  dev:\n"						/* 24 */
	"    name: dev-cluster\n"				/* 25 */
	"    vars: {region: us}\n"				/* 26 */
	"profiles:\n"						/* 27 */
	"  core: [backstage, keycloak]\n"			/* 28 */
	"packages:\n"						/* 29 */
	"  keycloak:\n"						/* 30 */
	"    type: manifests\n"					/* 31 */
	"    path: packages/keycloak\n"				/* 32 */
	"  backstage:\n"					/* 33 */
	"    type: kustomize\n"					/* 34 */
	"    description: the portal\n"				/* 35 */
	"    path: packages/backstage\n"			/* 36 */
	"    values: [values/a.yaml, values/b.yaml]\n"		/* 37 */
	"    set: {replicas: \"3\", host: \"bs.${domain}\"}\n"	/* 38 */
	"    namespace: \"bs-${cluster}\"\n"			/* 39 */
	"    needs: [keycloak, dev/keycloak]\n"			/* 40 */
	"    labels: {tier: apps, team: core}\n"		/* 41 */
	"    rewrite:\n"					/* 42 */
	"      - {match: 'cnoe\\.localtest\\.me', replace: '${domain}'}\n"	/* 43 */
	"      - {match: 'a(b+)', replace: 'x$1'}\n"		/* 44 */
	"    sync: {wait: synced, timeout: 600, prune: true, options: [CreateNamespace=true, ServerSideApply=true]}\n" /* 45 */
	"    hooks:\n"						/* 46 */
	"      pre:\n"						/* 47 */
	"        - name: realm\n"				/* 48 */
	"          run: ./hooks/realm.sh\n"			/* 49 */
	"          inputs: [hooks/realm.sh, config/realm.json]\n"	/* 50 */
	"          when: once\n"				/* 51 */
	"          timeout: 120\n"				/* 52 */
	"        - name: second\n"				/* 53 */
	"          run: echo hi\n"				/* 54 */
	"      post:\n"						/* 55 */
	"        - name: smoke\n"				/* 56 */
	"          run: ./hooks/smoke.sh\n"			/* 57 */
	"          when: always\n"				/* 58 */
	"        - {name: changed-one, run: 'true', when: changed}\n"	/* 59 */
	"  nginx:\n"						/* 60 */
	"    type: helm\n"					/* 61 */
	"    chart: {repo: https://charts.example, name: nginx, version: 1.2.3}\n"	/* 62 */
	"    values: [values/a.yaml]\n"				/* 63 */
	"  local-chart:\n"					/* 64 */
	"    type: helm\n"					/* 65 */
	"    chart: {repo: https://charts.example, name: \"x-${region}\"}\n"	/* 66 */
	"    render: local\n"					/* 67 */
	"  in-repo-chart:\n"					/* 68 */
	"    type: helm\n"					/* 69 */
	"    path: charts/mine\n"				/* 70 */
	"  remote:\n"						/* 71 */
	"    type: kustomize\n"					/* 72 */
	"    git: {url: https://github.com/cnoe-io/stacks, ref: v0.0.5, path: ref-implementation/backstage}\n" /* 73 */
	"  remote-head:\n"					/* 74 */
	"    type: argocd-app\n"				/* 75 */
	"    git: {url: https://example/x.git}\n";		/* 76 */

static void write_full(void)
{
	folder("full/packages/keycloak");
	folder("full/packages/backstage");
	folder("full/charts/mine");
	put("full/values/a.yaml", "a: 1\n");
	put("full/values/b.yaml", "b: 2\n");
	put("full/hooks/realm.sh", "#!/bin/sh\n");
	put("full/hooks/smoke.sh", "#!/bin/sh\n");
	put("full/config/realm.json", "{}\n");
	put("full/distro.yaml", full_distro);
}

static void test_full(void)
{
	struct distro *d;
	struct package *p;
	struct cluster *prod, *dev;
	const char *dir = path_join(tmp, "full");

	write_full();
	d = load("full/distro.yaml");
	CHECK(d != NULL);
	CHECK(loc_errors == 0);
	CHECK_STR(err, "");
	if (!d)
		return;
	CHECK_STR(d->name, "full");
	CHECK_STR(d->description, "everything there is");
	CHECK(d->vars.n == 2);
	CHECK_STR(kv_get(&d->vars, "domain"), "example.com");
	CHECK(d->vars.n == 2 && !strcmp(d->vars.v[0].key, "domain") && !strcmp(d->vars.v[1].key, "team"));
	CHECK(kv_find(&d->vars, "team") && kv_find(&d->vars, "team")->loc.line == 6 &&
	      kv_find(&d->vars, "team")->loc.col == 9);
	CHECK_STR(d->git.remote, "https://git.example/idp/gitops.git");
	CHECK_STR(d->git.branch, "release");
	CHECK_STR(d->git.path, "clusters/${cluster}/${package}");
	CHECK_STR(d->git.author_name, "bot");
	CHECK_STR(d->git.author_email, "bot@example.com");
	CHECK_STR(d->argocd.server, "https://argocd.example");
	CHECK_STR(d->argocd.namespace, "gitops");
	CHECK_STR(d->argocd.project, "platform");
	CHECK_STR(d->argocd.app_name, "${package}-${cluster}");
	CHECK(d->argocd.insecure == 1);
	CHECK_STR(d->argocd.token_file, path_join(dir, "secrets/token"));

	/* clusters, in the order written */
	CHECK(d->nclusters == 2);
	prod = find_cluster(d, "prod");
	dev = find_cluster(d, "dev");
	CHECK(prod == &d->clusters[0] && dev == &d->clusters[1]);
	if (!prod || !dev)
		return;
	CHECK_STR(prod->server, "https://prod.example:6443");
	CHECK(prod->argo_name == NULL);
	CHECK_STR(join(&prod->profiles), "core");
	CHECK_STR(kv_get(&prod->vars, "domain"), "prod.example.com");
	CHECK(prod->loc.line == 20 && prod->loc.col == 3);
	CHECK(dev->server == NULL);
	CHECK_STR(dev->argo_name, "dev-cluster");
	CHECK(dev->profiles.n == 0);
	CHECK(d->nprofiles == 1);
	CHECK_STR(d->profiles[0].name, "core");
	CHECK_STR(join(&d->profiles[0].packages), "backstage keycloak");
	CHECK(d->profiles[0].packages.n == 2 && d->profiles[0].packages.loc[1].line == 28 &&
	      d->profiles[0].packages.loc[1].col == col_of(full_distro, 28, "keycloak"));

	CHECK_STR(names(d), "keycloak backstage nginx local-chart in-repo-chart remote remote-head");
	p = find_package(d, "backstage");
	CHECK(p != NULL);
	if (!p)
		return;
	CHECK(p->loc.line == 33 && p->loc.col == 3);
	CHECK_STR(p->type, "kustomize");
	CHECK(p->rule && p->rule->builtin == RENDER_KUSTOMIZE);
	CHECK(p->src == SRC_PATH);
	CHECK_STR(p->path, path_join(dir, "packages/backstage"));
	CHECK(p->values.n == 2);
	CHECK_STR(join(&p->values), aprintf("%s/values/a.yaml %s/values/b.yaml", dir, dir));
	CHECK(p->values.n == 2 && p->values.loc[1].line == 37 && p->values.loc[1].col == col_of(full_distro, 37, "values/b"));
	CHECK(p->set.n == 2);
	CHECK_STR(kv_get(&p->set, "replicas"), "3");
	CHECK_STR(kv_get(&p->set, "host"), "bs.${domain}");	/* expanded per cluster, later */
	CHECK(kv_find(&p->set, "host") && kv_find(&p->set, "host")->loc.line == 38);
	CHECK_STR(p->namespace, "bs-${cluster}");
	CHECK_STR(package_namespace(d, prod, p), "bs-prod");
	CHECK_STR(package_namespace(d, dev, p), "bs-dev");
	CHECK_STR(join(&p->needs), "keycloak dev/keycloak");
	CHECK(p->needs.n == 2 && p->needs.loc[1].line == 40 && p->needs.loc[1].col == col_of(full_distro, 40, "dev/"));
	CHECK(p->labels.n == 2);
	CHECK_STR(kv_get(&p->labels, "tier"), "apps");
	CHECK_STR(kv_get(&p->labels, "team"), "core");
	CHECK(p->nrewrite == 2);
	if (p->nrewrite == 2) {
		CHECK_STR(p->rewrite[0].match, "cnoe\\.localtest\\.me");
		CHECK_STR(p->rewrite[0].replace, "${domain}");
		CHECK(p->rewrite[0].loc.line == 43 && p->rewrite[0].loc.col == 49);
		CHECK_STR(p->rewrite[1].match, "a(b+)");
		CHECK_STR(p->rewrite[1].replace, "x$1");
	}
	CHECK(p->sync.wait_healthy == 0);
	CHECK(p->sync.timeout == 600);
	CHECK(p->sync.prune == 1);
	CHECK_STR(join(&p->sync.options), "CreateNamespace=true ServerSideApply=true");
	CHECK(p->npre == 2 && p->npost == 2);
	if (p->npre == 2) {
		CHECK_STR(p->pre[0].name, "realm");
		CHECK_STR(p->pre[0].run, "./hooks/realm.sh");
		CHECK_STR(join(&p->pre[0].inputs), aprintf("%s/hooks/realm.sh %s/config/realm.json", dir, dir));
		CHECK(p->pre[0].when == WHEN_ONCE);
		CHECK(p->pre[0].timeout == 120);
		CHECK_STR(p->pre[0].dir, dir);
		CHECK(p->pre[0].loc.line == 48 && p->pre[0].loc.col == 11);
		CHECK_STR(p->pre[1].name, "second");
		CHECK_STR(p->pre[1].run, "echo hi");
		CHECK(p->pre[1].when == WHEN_CHANGED);	/* the default */
		CHECK(p->pre[1].timeout == 0 && p->pre[1].inputs.n == 0);
	}
	if (p->npost == 2) {
		CHECK_STR(p->post[0].name, "smoke");
		CHECK(p->post[0].when == WHEN_ALWAYS);
		CHECK_STR(p->post[1].name, "changed-one");
		CHECK_STR(p->post[1].run, "true");
		CHECK(p->post[1].when == WHEN_CHANGED);
	}
	CHECK(p->spec && strstr(p->spec, "realm"));
	CHECK(strcmp(p->spec, find_package(d, "keycloak")->spec) != 0);

	/* profiles: prod gets backstage and keycloak only, dev every package */
	CHECK(cluster_has(d, prod, p));
	CHECK(cluster_has(d, prod, find_package(d, "keycloak")));
	CHECK(!cluster_has(d, prod, find_package(d, "nginx")));
	CHECK(cluster_has(d, dev, find_package(d, "nginx")));

	/* helm: Argo CD renders a chart unless `render: local`; a folder is local */
	p = find_package(d, "nginx");
	CHECK(p && p->src == SRC_CHART && !p->render_local);
	CHECK(p && p->rule && p->rule->builtin == RENDER_HELM);
	CHECK_STR(p ? p->chart.repo : NULL, "https://charts.example");
	CHECK_STR(p ? p->chart.name : NULL, "nginx");
	CHECK_STR(p ? p->chart.version : NULL, "1.2.3");
	p = find_package(d, "local-chart");
	CHECK(p && p->src == SRC_CHART && p->render_local && p->chart.version == NULL);
	CHECK_STR(p ? p->chart.name : NULL, "x-${region}");
	p = find_package(d, "in-repo-chart");
	CHECK(p && p->src == SRC_PATH && p->render_local);
	/* git sources: ref and path default to HEAD and . */
	p = find_package(d, "remote");
	CHECK(p && p->src == SRC_GIT);
	CHECK_STR(p ? p->git.url : NULL, "https://github.com/cnoe-io/stacks");
	CHECK_STR(p ? p->git.ref : NULL, "v0.0.5");
	CHECK_STR(p ? p->git.path : NULL, "ref-implementation/backstage");
	p = find_package(d, "remote-head");
	CHECK(p && p->src == SRC_GIT && p->rule && p->rule->builtin == RENDER_ARGOCD_APP);
	CHECK_STR(p ? p->git.ref : NULL, "HEAD");
	CHECK_STR(p ? p->git.path : NULL, ".");
}

/* ---- errors ---- */

struct bad {
	const char *yaml;	/* after "idpmake: 1\nname: bad\n" */
	int errors;		/* loc_errors */
	int line;		/* of the first error, 0: any */
	const char *token;	/* the error's column: where this starts on that line */
	const char *msg;	/* in the message */
	const char *msg2;	/* and this too, or NULL */
};

/* the 1-based column of `token` on line `line` of `text`, or -1 */
static int col_of(const char *text, int line, const char *token)
{
	const char *s = text, *e, *t;

	for (int i = 1; i < line && s; i++)
		s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL;
	if (!s)
		return -1;
	e = strchr(s, '\n');
	t = strstr(s, token);
	if (!t || (e && t > e))
		return -1;
	return (int)(t - s) + 1;
}

static void test_errors(void)
{
	static const struct bad cases[] = {
		/* unknown keys, with and without a suggestion */
		{ "pakages: {}\n", 1, 3, "pakages", "unknown key 'pakages' in the distro", "did you mean 'packages'?" },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    namespce: x\n", 1, 7, "namespce",
		  "unknown key 'namespce'", "did you mean 'namespace'?" },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    sync: {wiat: healthy}\n", 1, 7, "wiat",
		  "unknown key 'wiat'", "did you mean 'wait'?" },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks:\n      pre:\n"
		  "        - {name: h, run: x, timout: 3}\n", 1, 9, "timout", "unknown key 'timout'", "did you mean 'timeout'?" },
		{ "zzzzzzzz: 1\n", 1, 3, "zzzzzzzz", "unknown key 'zzzzzzzz' in the distro", NULL },
		{ "git: {branhc: x}\n", 1, 3, "branhc", "did you mean 'branch'?", NULL },
		{ "argocd: {sever: x}\n", 1, 3, "sever", "did you mean 'server'?", NULL },
		{ "clusters:\n  c1: {severs: x}\n", 1, 4, "severs", "did you mean 'server'?", NULL },
		/* types, names */
		{ "packages:\n  a:\n    type: kustomise\n    path: p\n", 1, 5, "kustomise",
		  "unknown package type 'kustomise'", "did you mean 'kustomize'?" },
		{ "packages:\n  a:\n    path: p\n", 1, 5, "path", "package 'a' needs a 'type'", NULL },
		{ "packages:\n  Bad_Name:\n    type: manifests\n    path: p\n", 1, 4, "Bad_Name",
		  "package name 'Bad_Name' is not a DNS-1123 label", NULL },
		{ "packages:\n  -a:\n    type: manifests\n    path: p\n", 1, 4, "-a", "is not a DNS-1123 label", NULL },
		{ "name: Bad\n", 1, 3, "name", "duplicate key 'name'", NULL },
		/* needs */
		{ "packages:\n  keycloak: {type: manifests, path: p}\n  b: {type: manifests, path: p, needs: [keycloack]}\n",
		  1, 5, "keycloack", "needs 'keycloack', which is not a package", "did you mean 'keycloak'?" },
		{ "packages:\n  a: {type: manifests, path: p, needs: [nope/a]}\n", 1, 4, "nope/a", "no cluster 'nope'", NULL },
		{ "packages:\n  a: {type: manifests, path: p, needs: [b]}\n  b: {type: manifests, path: p, needs: [a]}\n",
		  1, 0, NULL, "dependency cycle: ", "a -> b -> a" },
		{ "packages:\n  a: {type: manifests, path: p, needs: [a]}\n", 1, 4, "a]", "dependency cycle: a -> a", NULL },
		/* sources */
		{ "packages:\n  a: {type: manifests, path: p, git: {url: u}}\n", 1, 4, "{type",
		  "needs exactly one source", "(it has 2)" },
		{ "packages:\n  a: {type: manifests}\n", 1, 4, "{type", "needs exactly one source", "(it has 0)" },
		{ "packages:\n  a: {type: manifests, path: missing}\n", 1, 4, "missing", "path 'missing' does not exist", NULL },
		{ "packages:\n  a: {type: manifests, path: ../outside}\n", 1, 4, "../outside", "escapes the distro folder", NULL },
		{ "packages:\n  a: {type: manifests, path: /etc}\n", 1, 4, "/etc", "is absolute", NULL },
		{ "packages:\n  a: {type: manifests, path: p/f.yaml}\n", 1, 4, "p/f.yaml", "is not a folder", NULL },
		{ "packages:\n  a: {type: manifests, chart: {repo: r, name: n}}\n", 1, 4, "{repo",
		  "'chart' is a source for helm packages only", NULL },
		{ "packages:\n  a: {type: manifests, path: p, render: local}\n", 1, 4, "local", "'render' applies to helm", NULL },
		{ "packages:\n  a: {type: helm, chart: {name: n}}\n", 1, 4, "{name", "a chart needs 'repo' and 'name'", NULL },
		{ "packages:\n  a: {type: kustomize, git: {ref: x}}\n", 1, 4, "{ref", "a git source needs a 'url'", NULL },
		/* values, sync, rewrite, labels */
		{ "packages:\n  a: {type: manifests, path: p, values: [nope.yaml]}\n", 1, 4, "nope.yaml",
		  "values file 'nope.yaml' does not exist", NULL },
		{ "packages:\n  a: {type: manifests, path: p, values: values.yaml}\n", 1, 4, "values.yaml",
		  "values must be a list", NULL },
		{ "packages:\n  a: {type: manifests, path: p, sync: {wait: forever}}\n", 1, 4, "forever",
		  "wait must be 'healthy' or 'synced'", NULL },
		{ "packages:\n  a: {type: manifests, path: p, sync: {timeout: -5}}\n", 1, 4, "-5",
		  "sync timeout must be a non-negative integer", NULL },
		{ "packages:\n  a: {type: manifests, path: p, sync: {prune: maybe}}\n", 1, 4, "maybe",
		  "prune must be true or false", NULL },
		{ "packages:\n  a: {type: manifests, path: p, rewrite: [{match: 'a(', replace: x}]}\n", 1, 4, "'a('",
		  "bad regular expression", NULL },
		{ "packages:\n  a: {type: manifests, path: p, rewrite: [{match: x}]}\n", 1, 4, "{match",
		  "a rewrite needs 'match' and 'replace'", NULL },
		{ "packages:\n  a: {type: manifests, path: p, labels: {tier: [a]}}\n", 1, 4, "[a]",
		  "labels 'tier' must be a string", NULL },
		/* hooks */
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {pre: [{name: h, run: x, when: sometimes}]}\n",
		  1, 7, "sometimes", "when must be changed, once or always, not 'sometimes'", NULL },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {post: [{name: h}]}\n",
		  1, 7, "{name", "hook 'h' needs a 'run' command", NULL },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {pre: [{run: x}]}\n",
		  1, 7, "{run", "a pre hook of package 'a' needs a 'name'", NULL },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {pre: [{name: h, run: x}, {name: h, run: y}]}\n",
		  1, 7, "h, run: y", "pre hook 'h' of package 'a' is defined twice", NULL },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {pre: [{name: h, run: x, timeout: soon}]}\n",
		  1, 7, "soon", "hook timeout must be a non-negative integer", NULL },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {pre: [{name: h, run: x, inputs: [nope.sh]}]}\n",
		  1, 7, "nope.sh", "hook input 'nope.sh' does not exist", NULL },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {during: []}\n",
		  1, 7, "during", "unknown key 'during' in hooks", NULL },
		{ "packages:\n  a:\n    type: manifests\n    path: p\n    hooks: {pre: [{name: Bad, run: x}]}\n",
		  1, 7, "Bad", "hook name 'Bad' is not a DNS-1123 label", NULL },
		/* clusters, profiles, vars */
		{ "clusters:\n  c1: {server: s, name: n}\n", 1, 4, "{server", "has both 'server' and 'name'", NULL },
		{ "clusters:\n  c1: {profiles: [nope]}\n", 1, 4, "nope", "cluster 'c1' names profile 'nope', which is not defined", NULL },
		{ "profiles:\n  core: [ghost]\npackages:\n  a: {type: manifests, path: p}\n", 1, 4, "ghost",
		  "profile 'core' names 'ghost', which is not a package", NULL },
		{ "vars: {cluster: x}\n", 1, 3, "x}", "'cluster' is a built-in variable", NULL },
		{ "packages:\n  a: {type: manifests, path: p, set: {k: \"${nope}\"}}\n", 1, 4, "\"${nope}\"",
		  "undefined variable '${nope}'", NULL },
		{ "packages:\n  a: {type: manifests, path: p, namespace: \"ns-${nope}\"}\n", 1, 4, "\"ns-",
		  "undefined variable '${nope}'", NULL },
		{ "packages:\n  a: {type: manifests, path: p, rewrite: [{match: x, replace: \"${nope}\"}]}\n", 1, 4, "\"${nope}",
		  "undefined variable '${nope}'", NULL },
		/* distro.md: ${var} is expanded in git.path (of a git source too) */
		{ "packages:\n  a: {type: kustomize, git: {url: u, path: \"x/${nope}\"}}\n", 1, 4, "{url",
		  "undefined variable '${nope}'", NULL },
		/* distro.md: every error names the file, line and column */
		{ "git: {path: \"${cluster}/${nope}\"}\npackages:\n  a: {type: manifests, path: p}\n", 1, 3, "\"${cluster}",
		  "undefined variable '${nope}'", NULL },
		/* several errors: all reported in one run */
		{ "pakages: {}\ndescripton: x\nvars: {a: [1]}\n", 3, 3, "pakages", "did you mean 'packages'?",
		  "did you mean 'description'?" },
		/* YAML errors */
		{ "packages: {a: 1\n", 1, 0, NULL, "malformed YAML", NULL },
		{ "packages: {}\npackages: {}\n", 1, 4, "packages", "duplicate key 'packages'", NULL },
	};
	static const char pre[] = "idpmake: 1\nname: bad\n";

	folder("bad/p");
	put("bad/p/f.yaml", "x: 1\n");
	put("bad/values.yaml", "x: 1\n");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct bad *c = &cases[i];
		const char *text = aprintf("%s%s", pre, c->yaml);
		struct distro *d;
		int before = t_failed;

		put("bad/distro.yaml", text);
		d = load("bad/distro.yaml");
		CHECK(d == NULL);
		CHECK(loc_errors == c->errors);
		if (c->line)
			CHECK(printed(at("bad/distro.yaml", c->line, col_of(text, c->line, c->token))));
		else
			CHECK(printed(aprintf("%s:", path_join(tmp, "bad/distro.yaml"))) && printed("error: "));
		CHECK(printed(c->msg));
		if (c->msg2)
			CHECK(printed(c->msg2));
		if (t_failed > before)
			fprintf(stderr, "  ^ in error case %zu: %s  loc_errors=%d\n", i, c->yaml, loc_errors);
	}

	put("bad/distro.yaml", "idpmake: 1\nname: Bad_Distro\n");
	CHECK(load("bad/distro.yaml") == NULL && loc_errors == 1);
	CHECK(printed(at("bad/distro.yaml", 2, 7)) && printed("distro name 'Bad_Distro' is not a DNS-1123 label"));
	put("bad/distro.yaml", "idpmake: 1\n");
	CHECK(load("bad/distro.yaml") == NULL && loc_errors == 1);
	CHECK(printed("the distro needs a 'name'"));

	/* hook names are unique per package and phase: pre and post may share one */
	put("bad/distro.yaml", "idpmake: 1\nname: ok\npackages:\n  a:\n    type: manifests\n    path: p\n"
	    "    hooks: {pre: [{name: h, run: x}], post: [{name: h, run: y}]}\n");
	CHECK(load("bad/distro.yaml") != NULL && loc_errors == 0);

	/* the file itself */
	put("bad/distro.yaml", "name: nover\n");
	CHECK(load("bad/distro.yaml") == NULL && loc_errors == 1);
	CHECK(printed(at("bad/distro.yaml", 1, 1)) && printed("missing format version"));
	put("bad/distro.yaml", "idpmake: 2\nname: v2\n");
	CHECK(load("bad/distro.yaml") == NULL && loc_errors == 1);
	CHECK(printed(at("bad/distro.yaml", 1, 10)) && printed("unsupported format version '2'"));
	put("bad/distro.yaml", "");
	CHECK(load("bad/distro.yaml") == NULL && loc_errors == 1);
	CHECK(printed("empty distro manifest"));
	put("bad/distro.yaml", "- a\n- b\n");
	CHECK(load("bad/distro.yaml") == NULL && loc_errors == 1);
	CHECK(printed("a distro is one YAML map"));
	put("bad/distro.yaml", "idpmake: 1\nname: a\n---\nidpmake: 1\nname: b\n");
	CHECK(load("bad/distro.yaml") == NULL && loc_errors == 1);
	CHECK(load("bad/none.yaml") == NULL);
	CHECK(printed("cannot read") && printed("none.yaml"));
	loc_errors = 0;
}

/* ---- extends ---- */

static void test_extends(void)
{
	struct distro *d;
	struct package *a, *b, *dd;

	folder("base/pkgs/a");
	folder("base/pkgs/b");
	folder("base/pkgs/c");
	put("base/values/v1.yaml", "v: 1\n");
	put("base/values/v3.yaml", "v: 3\n");
	put("base/distro.yaml",
	    "idpmake: 1\n"
	    "name: base\n"
	    "description: the base\n"
	    "vars: {domain: base.example, keep: k, gone: g}\n"
	    "git: {branch: base-branch, path: \"p/${package}\"}\n"
	    "argocd: {server: https://argo.base}\n"
	    "packages:\n"
	    "  a:\n"
	    "    type: manifests\n"
	    "    path: pkgs/a\n"
	    "    namespace: a-ns\n"
	    "    values: [values/v1.yaml, values/v3.yaml]\n"
	    "    labels: {tier: core, team: x}\n"
	    "    needs: [b]\n"
	    "    sync: {timeout: 100, prune: true, options: [A=1, B=2]}\n"
	    "    hooks: {pre: [{name: one, run: one}, {name: two, run: two}]}\n"
	    "  b:\n"
	    "    type: manifests\n"
	    "    path: pkgs/b\n"
	    "    namespace: b-ns\n"
	    "  c:\n"
	    "    type: manifests\n"
	    "    path: pkgs/c\n");
	folder("child/pkgs/d");
	put("child/values/v2.yaml", "v: 2\n");
	put("child/distro.yaml",
	    "idpmake: 1\n"
	    "name: child\n"
	    "extends: ../base\n"
	    "vars: {domain: child.example, gone: null, added: new}\n"
	    "packages:\n"
	    "  a:\n"
	    "    values: [values/v2.yaml]\n"
	    "    labels: {team: y}\n"
	    "    needs: []\n"
	    "    sync: {timeout: 200, options: [C=3]}\n"
	    "    hooks: {pre: [{name: three, run: three}]}\n"
	    "    namespace: a-child\n"
	    "  b:\n"
	    "    namespace: null\n"
	    "  c: null\n"
	    "  d:\n"
	    "    type: manifests\n"
	    "    path: pkgs/d\n"
	    "    needs: [a]\n");
	d = load("child/distro.yaml");
	CHECK(d != NULL);
	CHECK_STR(err, "");
	if (!d)
		return;
	CHECK_STR(d->name, "child");
	CHECK_STR(d->description, "the base");
	CHECK_STR(d->dir, path_join(tmp, "child"));
	CHECK_STR(kv_get(&d->vars, "domain"), "child.example");
	CHECK_STR(kv_get(&d->vars, "keep"), "k");
	CHECK_STR(kv_get(&d->vars, "added"), "new");
	CHECK(kv_find(&d->vars, "gone") == NULL);		/* null removes */
	CHECK(d->vars.n == 3);
	CHECK_STR(d->git.branch, "base-branch");
	CHECK_STR(d->git.path, "p/${package}");
	CHECK_STR(d->argocd.server, "https://argo.base");
	/* the parent's packages first, c removed, d added */
	CHECK_STR(names(d), "a b d");
	a = find_package(d, "a");
	b = find_package(d, "b");
	dd = find_package(d, "d");
	CHECK(a && b && dd && find_package(d, "c") == NULL);
	if (!a || !b || !dd)
		return;
	/* a: merged field by field */
	CHECK_STR(a->type, "manifests");
	CHECK_STR(real(a->path), real(path_join(tmp, "base/pkgs/a")));	/* the parent's folder */
	CHECK_STR(real(a->dir), real(path_join(tmp, "base")));
	CHECK_STR(a->namespace, "a-child");
	CHECK(a->values.n == 1);					/* lists replaced */
	CHECK_STR(real(a->values.n ? a->values.v[0] : NULL), real(path_join(tmp, "child/values/v2.yaml")));
	CHECK(a->needs.n == 0);
	CHECK_STR(join(&a->sync.options), "C=3");
	CHECK(a->sync.timeout == 200);
	CHECK(a->sync.prune == 1);					/* kept from the parent */
	CHECK(a->npre == 1 && a->npre && !strcmp(a->pre[0].name, "three"));
	CHECK_STR(real(a->npre ? a->pre[0].dir : NULL), real(path_join(tmp, "child")));
	CHECK_STR(kv_get(&a->labels, "team"), "y");			/* maps merged key by key */
	CHECK_STR(kv_get(&a->labels, "tier"), "core");
	/* b: null removes a field */
	CHECK(b->namespace == NULL);
	CHECK_STR(package_namespace(d, &d->clusters[0], b), "b");
	CHECK_STR(real(b->path), real(path_join(tmp, "base/pkgs/b")));
	/* d: the child's own, relative to the child */
	CHECK_STR(real(dd->path), real(path_join(tmp, "child/pkgs/d")));
	CHECK_STR(join(&dd->needs), "a");
	/* the parent is unchanged when loaded alone */
	d = load("base/distro.yaml");
	CHECK(d && d->npackages == 3 && find_package(d, "a") && find_package(d, "a")->values.n == 2);

	/* null removes a whole section or a parent's cluster */
	put("base3/distro.yaml",
	    "idpmake: 1\nname: base3\nargocd: {server: https://argo}\n"
	    "clusters: {one: {server: https://one}, two: {server: https://two}}\n");
	put("child3/distro.yaml",
	    "idpmake: 1\nname: child3\nextends: ../base3\nargocd: null\nclusters: {one: null}\n");
	d = load("child3/distro.yaml");
	CHECK(d != NULL);
	CHECK_STR(err, "");
	CHECK(d && d->argocd.server == NULL);
	CHECK(d && d->nclusters == 1 && !strcmp(d->clusters[0].name, "two"));

	/* errors in the parent point at the parent */
	put("base2/distro.yaml", "idpmake: 1\nname: base2\npackages:\n  x: {type: manifests, path: nope}\n");
	put("child2/distro.yaml", "idpmake: 1\nname: child2\nextends: ../base2/distro.yaml\n");
	CHECK(load("child2/distro.yaml") == NULL);
	CHECK(loc_errors == 1);
	CHECK(printed("base2/distro.yaml:4:30: error: path 'nope' does not exist"));

	/* a cycle */
	put("cy1/distro.yaml", "idpmake: 1\nname: cy1\nextends: ../cy2\n");
	put("cy2/distro.yaml", "idpmake: 1\nname: cy2\nextends: ../cy1\n");
	CHECK(load("cy1/distro.yaml") == NULL);
	CHECK(loc_errors == 1);
	CHECK(printed("cy2/distro.yaml:3:10: error: ") && printed("'extends' cycle"));
	put("self/distro.yaml", "idpmake: 1\nname: self\nextends: .\n");
	CHECK(load("self/distro.yaml") == NULL);
	CHECK(loc_errors == 1 && printed("'extends' cycle"));

	/* a distro nobody has */
	put("orphan/distro.yaml", "idpmake: 1\nname: orphan\nextends: no-such-distro\n");
	CHECK(load("orphan/distro.yaml") == NULL);
	CHECK(loc_errors == 1);
	CHECK(printed(at("orphan/distro.yaml", 3, 10)) && printed("no distro named 'no-such-distro'"));
	put("orphan/distro.yaml", "idpmake: 1\nname: orphan\nextends: ../missing-folder\n");
	CHECK(load("orphan/distro.yaml") == NULL);
	CHECK(loc_errors == 1 && printed(at("orphan/distro.yaml", 3, 10)) && printed("cannot read distro"));
}

/* a built-in distro, by name: unpacked into the state folder */
static void test_extends_builtin(void)
{
	struct distro *d;
	struct package *p;

	unsetenv("IDPMAKE_DISTRO_PATH");
	folder("mine/web");
	put("mine/distro.yaml",
	    "idpmake: 1\n"
	    "name: mine\n"
	    "extends: default\n"
	    "vars: {domain: mine.example}\n"
	    "packages:\n"
	    "  web: {type: manifests, path: web, needs: [podinfo]}\n");
	d = load("mine/distro.yaml");
	CHECK(d != NULL);
	CHECK_STR(err, "");
	if (!d)
		return;
	CHECK_STR(names(d), "namespaces podinfo web");
	p = find_package(d, "podinfo");
	/* unpacked into the state folder, unless an installed copy comes first */
	if (access(IDPMAKE_PREFIX "/share/idpmake/distros/default/distro.yaml", R_OK) < 0)
		CHECK(p && p->path && !strncmp(real(p->path), real(statedir), strlen(real(statedir))));
	CHECK(p && access(path_join(p->path, "kustomization.yaml"), R_OK) == 0);
	CHECK_STR(kv_get(&d->vars, "domain"), "mine.example");

	/* IDPMAKE_DISTRO_PATH comes first */
	folder("path1/default/pkg");
	put("path1/default/distro.yaml",
	    "idpmake: 1\nname: default\npackages:\n  from-path: {type: manifests, path: pkg}\n");
	setenv("IDPMAKE_DISTRO_PATH", aprintf("%s:%s", path_join(tmp, "nowhere"), path_join(tmp, "path1")), 1);
	d = load("mine/distro.yaml");
	CHECK(loc_errors == 1 && printed("needs 'podinfo', which is not a package"));
	put("mine/distro.yaml", "idpmake: 1\nname: mine\nextends: default\n");
	d = load("mine/distro.yaml");
	CHECK(d && !strcmp(names(d), "from-path"));
	unsetenv("IDPMAKE_DISTRO_PATH");
}

/* ---- rule files ---- */

static void test_rules(void)
{
	struct distro *d;

	folder("rl/pkg");
	put("rl/extra/jsonnet.yaml",
	    "rule: jsonnet\n"
	    "description: render main.jsonnet\n"
	    "command: [jsonnet, -y, \"${src}/main.jsonnet\"]\n"
	    "version: [jsonnet, --version]\n"
	    "inputs: [\"**/*.jsonnet\", \"**/*.libsonnet\"]\n");
	put("rl/distro.yaml",
	    "idpmake: 1\nname: rl\nrules: [extra/jsonnet.yaml]\n"
	    "packages:\n  j: {type: jsonnet, path: pkg}\n");
	d = load("rl/distro.yaml");
	CHECK(d != NULL);
	CHECK_STR(err, "");
	if (d) {
		struct rule *r = find_package(d, "j")->rule;
		CHECK(d->nrules == 5);
		CHECK(r && r == d->rules[4] && r->builtin == 0);
		CHECK_STR(r ? r->name : NULL, "jsonnet");
		CHECK_STR(r ? r->description : NULL, "render main.jsonnet");
		CHECK_STR(r ? join(&r->command) : NULL, "jsonnet -y ${src}/main.jsonnet");
		CHECK_STR(r ? join(&r->version) : NULL, "jsonnet --version");
		CHECK_STR(r ? join(&r->inputs) : NULL, "**/*.jsonnet **/*.libsonnet");
		CHECK(r && r->definition && strstr(r->definition, "jsonnet"));
	}

	/* errors in a rule file point into it */
	put("rl/extra/bad.yaml", "rule: bad\ncomand: [x]\n");
	put("rl/distro.yaml", "idpmake: 1\nname: rl\nrules: [extra/bad.yaml]\n");
	CHECK(load("rl/distro.yaml") == NULL);
	CHECK(printed(aprintf("%s:2:1: error: ", path_join(tmp, "rl/extra/bad.yaml"))));
	CHECK(printed("did you mean 'command'?"));
	/* a rule with a built-in's name */
	put("rl/extra/dup.yaml", "rule: helm\ncommand: [x]\n");
	put("rl/distro.yaml", "idpmake: 1\nname: rl\nrules: [extra/dup.yaml]\n");
	CHECK(load("rl/distro.yaml") == NULL);
	CHECK(loc_errors == 1 && printed(at("rl/distro.yaml", 3, 9)) && printed("rule 'helm' is defined twice"));
	put("rl/distro.yaml", "idpmake: 1\nname: rl\nrules: [extra/none.yaml]\n");
	CHECK(load("rl/distro.yaml") == NULL);
	CHECK(loc_errors == 1 && printed(at("rl/distro.yaml", 3, 9)) && printed("does not exist"));

	/* distro.md: "the distro's rules/ folder is read too" */
	folder("rd/pkg");
	put("rd/rules/jsonnet.yaml", "rule: jsonnet\ncommand: [jsonnet, -y, \"${src}/main.jsonnet\"]\n");
	put("rd/distro.yaml", "idpmake: 1\nname: rd\npackages:\n  j: {type: jsonnet, path: pkg}\n");
	d = load("rd/distro.yaml");
	CHECK(d != NULL);
	CHECK(loc_errors == 0);
	CHECK(d && find_package(d, "j")->rule && !strcmp(find_package(d, "j")->rule->name, "jsonnet"));
}

/*
 * A built-in rule's text is hashed into every key of its packages, so it
 * says what the renderer really runs: only kustomize runs its `command`;
 * manifests, argocd-app and helm (whose `render: local` argv render.c
 * builds itself) declare none.
 */
static void test_builtin_rules(void)
{
	size_t n;
	struct rule **r = rules_builtin(&n);

	CHECK(n == 4);
	for (size_t i = 0; i < n; i++) {
		if (r[i]->builtin == RENDER_KUSTOMIZE)
			CHECK_STR(join(&r[i]->command), "kubectl kustomize ${src}");
		else if (r[i]->command.n)
			CHECK_STR(r[i]->name, "(a built-in rule whose command is never run)");
	}
	CHECK(r[RENDER_HELM - 1]->builtin == RENDER_HELM);
	CHECK_STR(join(&r[RENDER_HELM - 1]->version), "helm version --short");
}

/* ---- closest ---- */

static void test_closest(void)
{
	static const char *const words[] = { "packages", "profiles", "clusters", "name", "vars", "git" };
	const size_t n = sizeof(words) / sizeof(words[0]);

	CHECK_STR(closest("pakages", words, n), "packages");
	CHECK_STR(closest("package", words, n), "packages");
	CHECK_STR(closest("Packages", words, n), "packages");
	CHECK_STR(closest("profile", words, n), "profiles");
	CHECK_STR(closest("cluster", words, n), "clusters");
	CHECK_STR(closest("nmae", words, n), "name");
	CHECK_STR(closest("var", words, n), "vars");
	CHECK_STR(closest("packages", words, n), "packages");
	CHECK(closest("zzzzzzzz", words, n) == NULL);
	CHECK(closest("xyz", words, n) == NULL);
	CHECK(closest("description", words, n) == NULL);
	CHECK(closest("pakages", words, 0) == NULL);
	CHECK(closest("", words, n) == NULL);
	/* equally near: the one sharing the longest start, wherever it is listed (issue 37 item 2) */
	static const char *const top[] = { "vars", "packages" };
	CHECK_STR(closest("packs", top, 2), "packages");
	/* a swap of neighbours is one edit */
	CHECK(edit_distance("snyc", "sync", 0) == 1);
	CHECK(edit_distance("hlep", "help", 0) == 1);
	CHECK(edit_distance("abc", "ca", 0) == 3);
	CHECK(edit_distance("kitten", "sitting", 0) == 3);
	CHECK(edit_distance("Ab", "ba", 1) == 1);
	/* no word for one that keeps nothing of it */
	static const char *const cmds[] = { "up", "plan" };
	CHECK(closest("ls", cmds, 2) == NULL);
}

/* ---- variables ---- */

static void test_vars(void)
{
	struct distro *d;
	struct cluster *prod, *dev;
	struct package *p;
	struct vars v;
	struct loc where = { "where.yaml", 7, 9 };
	const char *s;

	write_full();
	d = load("full/distro.yaml");
	CHECK(d != NULL);
	if (!d)
		return;
	prod = find_cluster(d, "prod");
	dev = find_cluster(d, "dev");
	p = find_package(d, "backstage");

	vars_init(&v, d, prod, p, "bs-prod");
	CHECK_STR(vars_get(&v, "cluster"), "prod");
	CHECK_STR(vars_get(&v, "package"), "backstage");
	CHECK_STR(vars_get(&v, "namespace"), "bs-prod");
	CHECK_STR(vars_get(&v, "domain"), "prod.example.com");	/* the cluster's over the distro's */
	CHECK_STR(vars_get(&v, "team"), "core");			/* the distro's */
	CHECK_STR(vars_get(&v, "region"), "eu");
	CHECK(vars_get(&v, "nope") == NULL);
	loc_errors = 0;
	CHECK_STR(expand("${cluster}/${package}/${namespace}", where, &v), "prod/backstage/bs-prod");
	CHECK_STR(expand("https://bs.${domain}:${region}${team}", where, &v), "https://bs.prod.example.com:eucore");
	CHECK_STR(expand("no variables $here {x} $", where, &v), "no variables $here {x} $");
	CHECK_STR(expand("", where, &v), "");
	CHECK_STR(expand("${domain}${domain}", where, &v), "prod.example.comprod.example.com");
	CHECK(loc_errors == 0);

	vars_init(&v, d, dev, p, "bs-dev");
	CHECK_STR(vars_get(&v, "domain"), "example.com");
	CHECK_STR(expand(d->git.path, where, &v), "clusters/dev/backstage");
	CHECK_STR(expand(d->argocd.app_name, where, &v), "backstage-dev");

	/* no cluster: the distro's variables only */
	vars_init(&v, d, NULL, p, NULL);
	CHECK_STR(vars_get(&v, "domain"), "example.com");
	CHECK(vars_get(&v, "region") == NULL);

	/* undefined: NULL after a located error */
	vars_init(&v, d, prod, p, NULL);
	loc_errors = 0;
	capture_start();
	s = expand("ns-${namespace}", where, &v);		/* not known yet */
	err = capture_end();
	CHECK(s == NULL);
	CHECK(loc_errors == 1);
	CHECK(printed("where.yaml:7:9: error: ") && printed("undefined variable '${namespace}'"));
	loc_errors = 0;
	capture_start();
	s = expand("x-${nope}-y", where, &v);
	err = capture_end();
	CHECK(s == NULL && loc_errors == 1);
	CHECK(printed("where.yaml:7:9: error: undefined variable '${nope}'"));
	loc_errors = 0;
	capture_start();
	s = expand("x-${open", where, &v);
	err = capture_end();
	CHECK(s == NULL && loc_errors == 1);
	CHECK(printed("where.yaml:7:9: error: ") && printed("unterminated"));
	loc_errors = 0;

	/* a cluster variable another cluster lacks is an error where it is used */
	folder("cv/p");
	put("cv/distro.yaml",
	    "idpmake: 1\n"
	    "name: cv\n"
	    "vars: {domain: d.example}\n"
	    "clusters:\n"
	    "  one: {vars: {region: eu}}\n"
	    "  two: {}\n"
	    "packages:\n"
	    "  a:\n"
	    "    type: manifests\n"
	    "    path: p\n"
	    "    set: {host: \"${region}.${domain}\"}\n");
	CHECK(load("cv/distro.yaml") == NULL);
	CHECK(loc_errors == 1);
	CHECK(printed(at("cv/distro.yaml", 11, 17)) && printed("undefined variable '${region}'"));
	/* ... fine when the package does not go there */
	put("cv/distro.yaml",
	    "idpmake: 1\n"
	    "name: cv\n"
	    "clusters:\n"
	    "  one: {vars: {region: eu}, profiles: [all]}\n"
	    "  two: {profiles: [none]}\n"
	    "profiles: {all: [a], none: []}\n"
	    "packages:\n"
	    "  a: {type: manifests, path: p, namespace: \"${region}-ns\", set: {host: \"${region}\"}}\n");
	d = load("cv/distro.yaml");
	CHECK(d != NULL);
	CHECK_STR(err, "");
	if (d) {
		CHECK_STR(package_namespace(d, find_cluster(d, "one"), find_package(d, "a")), "eu-ns");
		CHECK(!cluster_has(d, find_cluster(d, "two"), find_package(d, "a")));
	}
	/* ${namespace} is not defined inside the namespace itself */
	put("cv/distro.yaml",
	    "idpmake: 1\nname: cv\npackages:\n  a: {type: manifests, path: p, namespace: \"x${namespace}\"}\n");
	CHECK(load("cv/distro.yaml") == NULL && loc_errors == 1);
	CHECK(printed("undefined variable '${namespace}'"));
	/* ${namespace} in set is the package's namespace */
	put("cv/distro.yaml",
	    "idpmake: 1\nname: cv\npackages:\n  a: {type: manifests, path: p, set: {ns: \"${namespace}\"}}\n");
	d = load("cv/distro.yaml");
	CHECK(d != NULL);
	if (d) {
		p = find_package(d, "a");
		vars_init(&v, d, &d->clusters[0], p, package_namespace(d, &d->clusters[0], p));
		CHECK_STR(expand(p->set.v[0].value, p->set.v[0].loc, &v), "a");
		CHECK_STR(expand("${cluster}", p->loc, &v), "in-cluster");
	}
	loc_errors = 0;
}

static void setup(void)
{
	scratch_setup("t-manifest");
}

TEST_MAIN_SHUFFLE(setup, scratch_end,
	  test_defaults, test_full, test_errors, test_extends, test_extends_builtin, test_rules, test_builtin_rules, test_closest, test_vars)
