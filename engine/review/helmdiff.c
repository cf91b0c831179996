/* helmdiff.c - the objects of a chart Argo CD renders, both sides rendered by helm template (helmdiff.h) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/exec.h"
#include "base/util.h"
#include "base/yaml.h"
#include "graph/graph.h"
#include "render/bundle.h"
#include "render/renderers.h"
#include "review/helmdiff.h"

#define HELM_OUT_CAP ((size_t)128 << 20)	/* bytes of one helm template's output */
#define HELM_RUN_CAP ((size_t)512 << 20)	/* bytes of every render kept in a run */
#define HELM_TIMEOUT 120			/* seconds */

/* what helm template is given: the chart and everything Argo CD passes */
struct chartsrc {
	const char *repo, *chart, *version, *release, *ns, *values;
};

/* one render, kept for the run: a chart shared by many clusters is rendered once */
struct memo {
	const char *key;
	struct bundle b;
	const char *why;
};
static struct memo **memo;	/* each apart: a bundle handed out stays where it is */
static size_t nmemo, kept;	/* kept: bytes of the renders in memo */

static const char *scalar(const struct ynode *n, const char *dotted)
{
	const struct ynode *v = ypath(n, dotted);
	return v && v->type == Y_SCALAR && !yisnull(v) ? v->s : NULL;
}

/* only these bytes, at least one, not first a '-' (helm would take it as an option) */
static int plain(const char *s, const char *allowed, size_t max)
{
	size_t len = s ? strlen(s) : 0;
	return len && len <= max && *s != '-' && strspn(s, allowed) == len;
}

#define LOWER "abcdefghijklmnopqrstuvwxyz0123456789"
#define ALNUM LOWER "ABCDEFGHIJKLMNOPQRSTUVWXYZ"

/* the fields of an Application (the pool's), each copied into the arena */
static int read_fields(struct ypool *p, const char *text, size_t len, struct chartsrc *cs, const char **why)
{
	struct ynode **docs, *src, *helm, *values;
	size_t n;

	if (yaml_parse(p, "application.yaml", text, len, &docs, &n) < 0 || n != 1 || docs[0]->type != Y_MAP ||
	    !ystr_eq(yget(docs[0], "kind"), "Application") || !(src = ypath(docs[0], "spec.source")) || src->type != Y_MAP)
		return 0;
	if (!(cs->chart = scalar(src, "chart"))) {
		if (!(helm = yget(src, "helm")) || !scalar(src, "path"))
			return 0;	/* a git source without Helm */
		*why = "the chart is a folder of the GitOps repository (from a bundle), not rendered here";
		return -1;
	}
	if ((helm = yget(src, "helm")) && helm->type != Y_MAP) {
		*why = "its Helm source is not a map";
		return -1;
	}
	for (size_t i = 0; helm && i < helm->n; i++) {
		if (strcmp(helm->k[i]->s, "releaseName") && strcmp(helm->k[i]->s, "values")) {
			*why = aprintf("its Helm source sets '%s', which is not rendered here", term_safe(helm->k[i]->s));
			return -1;
		}
	}
	if ((values = ypath(src, "helm.values")) && values->type != Y_SCALAR) {
		*why = "its Helm values are not text";
		return -1;
	}
	cs->repo = scalar(src, "repoURL");
	cs->version = scalar(src, "targetRevision");
	cs->release = scalar(src, "helm.releaseName");
	if (!cs->release)
		cs->release = scalar(docs[0], "metadata.name");	/* Argo CD's default */
	cs->ns = scalar(docs[0], "spec.destination.namespace");
	cs->values = scalar(src, "helm.values");
	/* out of the pool, which goes when the text is read */
	cs->chart = astrdup(cs->chart);
	cs->repo = cs->repo ? astrdup(cs->repo) : NULL;
	cs->version = cs->version ? astrdup(cs->version) : NULL;
	cs->release = cs->release ? astrdup(cs->release) : NULL;
	cs->ns = cs->ns ? astrdup(cs->ns) : NULL;
	cs->values = cs->values ? astrdup(cs->values) : NULL;
	return 1;
}

/*
 * Read an application.yaml: 1 a chart's Application, cs filled (arena); 0
 * not one (nothing to render); -1 one that is not rendered here, *why says
 * why.
 */
static int read_app(const char *text, size_t len, struct chartsrc *cs, const char **why)
{
	struct ypool *p;
	int r;

	memset(cs, 0, sizeof(*cs));
	if (!text)
		return 0;
	p = ypool_new();
	r = read_fields(p, text, len, cs, why);
	ypool_free(p);
	if (r <= 0)
		return r;
	if (!cs->repo || (strncmp(cs->repo, "https://", 8) && strncmp(cs->repo, "http://", 7)) ||
	    strpbrk(cs->repo, " \t\r\n"))
		*why = "its chart repository is not an http(s) URL";
	else if (*cs->chart == '.' || !plain(cs->chart, ALNUM "._-", 253))
		*why = "its chart is not a plain chart name";
	else if (cs->version && !plain(cs->version, ALNUM ".*+^~<>=, _-", 253))
		*why = "its chart version is not a version";
	else if (!plain(cs->release, LOWER ".-", 53))
		*why = "its release name is not a DNS name";
	else if (cs->ns && !plain(cs->ns, LOWER "-", 63))
		*why = "its namespace is not a DNS label";
	else
		return 1;
	return -1;
}

/* helm template's words for cs, the values file's option left for the caller (arena, NULL-ended) */
static const char **command(const struct chartsrc *cs)
{
	const char **argv = amalloc(12 * sizeof(*argv));
	int n = 0;

	argv[n++] = "helm";
	argv[n++] = "template";
	argv[n++] = cs->release;
	argv[n++] = cs->chart;
	argv[n++] = aprintf("--repo=%s", cs->repo);
	if (cs->version && strcmp(cs->version, "*"))
		argv[n++] = aprintf("--version=%s", cs->version);
	/* the repo server has no kubeconfig: no namespace is "default", never the local context's */
	argv[n++] = aprintf("--namespace=%s", cs->ns ? cs->ns : "default");
	argv[n++] = "--include-crds";
	argv[n] = NULL;
	return argv;
}

int helmdiff_command(const char *text, size_t len, const char ***argv, const char **values, const char **why)
{
	struct chartsrc cs;
	int r = read_app(text, len, &cs, why);

	if (r > 0) {
		*argv = command(&cs);
		*values = cs.values ? cs.values : "";
	}
	return r;
}

/* every field, each with its length: no two sources share a key */
static const char *src_key(const struct chartsrc *cs)
{
	const char *f[] = { cs->repo, cs->chart, cs->version, cs->release, cs->ns, cs->values };
	struct buf k = BUF_INIT;
	const char *s;

	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
		buf_addf(&k, "%zu:%s;", f[i] ? strlen(f[i]) : (size_t)-1, f[i] ? f[i] : "");
	s = astrdup(k.s);
	buf_release(&k);
	return s;
}

/* what helm said of its failure, as it may be printed: its "Error:" line, or its last */
static const char *helm_said(const char *log)
{
	size_t len;
	char *text = read_file(log, &len), *l, *e;
	const char *r;

	if (!text)
		return "";
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = 0;
	l = len > (64 << 10) ? text + len - (64 << 10) : text;	/* its end: a chatty helm is cut, never held */
	if (!strncmp(l, "Error: ", 7))
		;
	else if ((e = strstr(l, "\nError: ")))
		l = e + 1;
	else if ((e = strrchr(l, '\n')))
		l = e + 1;
	if ((e = strchr(l, '\n')))
		*e = 0;
	r = term_safe(aprintf("%.400s", l));
	free(text);
	return r;
}

/*
 * helm template of cs into b; NULL, or why not.  helm runs in an empty
 * folder of its own: a chart name is never a folder it finds there.
 */
static const char *template(const struct chartsrc *cs, struct bundle *b)
{
	const char *tmp = getenv("TMPDIR"), *vfile, **argv = command(cs), *err = NULL, *why = NULL;
	char *log = aprintf("%s/idpmake-helmdiff-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	char *dir = aprintf("%s/idpmake-helmdiff-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct buf vb = BUF_INIT, out = BUF_INIT;
	struct proc pr = { 0 };
	struct package pk = { .name = cs->release };
	struct step st = { .id = "helm template", .pkg = &pk, .namespace = cs->ns };
	struct objects o;
	size_t n = 0;
	int fd;

	memset(b, 0, sizeof(*b));
	if (!mkdtemp(dir))
		return aprintf("cannot make a folder for helm under %s: %s", tmp && *tmp ? tmp : "/tmp", strerror(errno));
	buf_adds(&vb, cs->values ? cs->values : "");
	vfile = helm_values_file(&vb);
	buf_release(&vb);
	if (!vfile) {
		rmdir(dir);
		return aprintf("cannot write the values file: %s", strerror(errno));
	}
	if ((fd = mkstemp(log)) >= 0)
		close(fd);
	while (argv[n])
		n++;
	argv[n++] = aprintf("--values=%s", vfile);
	argv[n] = NULL;
	pr.argv = argv;
	pr.cwd = dir;
	pr.log = fd >= 0 ? log : NULL;
	pr.out = &out;
	pr.out_cap = HELM_OUT_CAP;
	pr.timeout = HELM_TIMEOUT;
	if (proc_run(&pr) < 0) {
		why = aprintf("helm template failed (%s)%s%s", proc_failure(&pr), fd >= 0 ? ": " : "",
			      fd >= 0 ? helm_said(log) : "");
	} else {
		objects_init(&o, &st);
		if (parse_objects(&o, "the output of helm template", out.s ? out.s : "", out.len, NULL, &err) < 0 ||
		    objects_bundle(&o, b, &err) < 0)
			why = aprintf("helm template's output: %s", err ? err : "not read");
		objects_free(&o);
	}
	unlink(vfile);
	if (fd >= 0)
		unlink(log);
	rmtree(dir);	/* empty, unless helm wrote there */
	buf_release(&out);
	return why;
}

/* the render of cs, once a run; NULL, or why not */
static const char *rendered(const struct chartsrc *cs, const struct bundle **b)
{
	const char *key = src_key(cs);
	struct memo *m;

	for (size_t i = 0; i < nmemo; i++) {
		if (!strcmp(memo[i]->key, key)) {
			*b = &memo[i]->b;
			return memo[i]->why;
		}
	}
	m = xcalloc(1, sizeof(*m));
	m->key = key;
	if (kept > HELM_RUN_CAP) {
		m->why = aprintf("the charts rendered in this run are over %zu MiB", HELM_RUN_CAP >> 20);
	} else if (!(m->why = template(cs, &m->b))) {
		for (size_t i = 0; i < m->b.n; i++)
			kept += m->b.v[i].len;
	}
	memo = xrealloc(memo, (nmemo + 1) * sizeof(*memo));
	memo[nmemo++] = m;
	*b = &m->b;
	return m->why;
}

static int same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static const char *chart_text(const struct chartsrc *cs)
{
	return aprintf("%s %s", term_safe(cs->chart), cs->version ? term_safe(cs->version) : "(latest)");
}

int helmdiff(const char *old, size_t oldlen, const char *new, size_t newlen, struct helmdiff *hd)
{
	struct chartsrc a, b;
	const char *whya = NULL, *whyb = NULL;
	int ra = read_app(old, oldlen, &a, &whya), rb = read_app(new, newlen, &b, &whyb);
	const struct bundle *ba = NULL, *bb = NULL;
	size_t x = 0, y = 0;

	memset(hd, 0, sizeof(*hd));
	if (!ra && !rb)
		return 0;
	hd->what = "the chart";
	if (ra < 0 || rb < 0) {
		hd->why = ra < 0 ? whya : whyb;
		return 1;
	}
	if ((!ra && old) || (!rb && new)) {
		/* a side there but not a chart's Application: its objects would all look created or deleted */
		hd->why = aprintf("the %s side is not one Application with a Helm chart", !ra ? "old" : "new");
		return 1;
	}
	if (ra > 0 && rb > 0 && !same(a.repo, b.repo)) {
		/* the old side may come from the GitOps repository: helm fetches only from the distro's repository */
		hd->why = "its chart repository changed, and the old side's is not fetched";
		return 1;
	}
	if (ra > 0 && !rb) {
		hd->why = "the package is gone, and its chart repository (the old side's) is not fetched";
		return 1;
	}
	if (ra > 0 && rb > 0 && same(a.repo, b.repo) && same(a.chart, b.chart) && same(a.version, b.version) &&
	    same(a.release, b.release) && same(a.ns, b.ns) && same(a.values, b.values))
		return 0;
	hd->what = ra > 0 && rb > 0 && (strcmp(a.chart, b.chart) || !same(a.version, b.version))
			   ? aprintf("chart %s -> %s", chart_text(&a), chart_text(&b))
			   : aprintf("chart %s", chart_text(rb > 0 ? &b : &a));
	if (!which("helm")) {
		hd->why = "helm is not installed (install it to see the objects Argo CD renders from the chart)";
		return 1;
	}
	if ((ra > 0 && (hd->why = rendered(&a, &ba))) || (rb > 0 && (hd->why = rendered(&b, &bb))))
		return 1;
	/* merge the two sorted lists */
	while ((ba && x < ba->n) || (bb && y < bb->n)) {
		int cmp = !ba || x >= ba->n ? 1 : !bb || y >= bb->n ? -1 : strcmp(ba->v[x].name, bb->v[y].name);
		const struct bundle_entry *ea = cmp <= 0 ? &ba->v[x++] : NULL, *eb = cmp >= 0 ? &bb->v[y++] : NULL;
		if (ea && eb && ea->len == eb->len && !memcmp(ea->data, eb->data, ea->len))
			continue;
		hd->v = agrow(hd->v, hd->n, sizeof(*hd->v));
		hd->v[hd->n++] = (struct helmdiff_obj){ (ea ? ea : eb)->name, ea ? ea->data : NULL, eb ? eb->data : NULL,
							ea ? ea->len : 0, eb ? eb->len : 0 };
	}
	return 1;
}
