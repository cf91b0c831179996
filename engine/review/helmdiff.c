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
#define HELM_TIMEOUT 300			/* seconds */

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
static size_t nmemo;

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

/*
 * Read an application.yaml: 1 a chart's Application, cs filled; 0 not one
 * (nothing to render); -1 one that is not rendered here, *why says why.
 */
static int read_app(struct ypool *p, const char *text, size_t len, struct chartsrc *cs, const char **why)
{
	struct ynode **docs, *src, *helm;
	size_t n;

	memset(cs, 0, sizeof(*cs));
	if (!text || yaml_parse(p, "application.yaml", text, len, &docs, &n) < 0 || n != 1 || docs[0]->type != Y_MAP ||
	    !ystr_eq(yget(docs[0], "kind"), "Application") || !(src = ypath(docs[0], "spec.source")) || src->type != Y_MAP)
		return 0;
	if (!(cs->chart = scalar(src, "chart"))) {
		if (!(helm = yget(src, "helm")) || !scalar(src, "path"))
			return 0;	/* a git source without Helm */
		*why = "the chart is a folder of the GitOps repository (from a bundle), not rendered here";
		return -1;
	}
	if ((helm = yget(src, "helm")) && helm->type == Y_MAP) {
		for (size_t i = 0; i < helm->n; i++) {
			if (strcmp(helm->k[i]->s, "releaseName") && strcmp(helm->k[i]->s, "values")) {
				*why = aprintf("its Helm source sets '%s', which is not rendered here",
					       term_safe(helm->k[i]->s));
				return -1;
			}
		}
	}
	cs->repo = scalar(src, "repoURL");
	cs->version = scalar(src, "targetRevision");
	cs->release = scalar(src, "helm.releaseName");
	if (!cs->release)
		cs->release = scalar(docs[0], "metadata.name");	/* Argo CD's default */
	cs->ns = scalar(docs[0], "spec.destination.namespace");
	cs->values = scalar(src, "helm.values");
	if (!cs->repo || (strncmp(cs->repo, "https://", 8) && strncmp(cs->repo, "http://", 7)) ||
	    strpbrk(cs->repo, " \t\r\n"))
		*why = "its chart repository is not an http(s) URL";
	else if (!plain(cs->chart, ALNUM "._-", 253))
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

static const char *src_key(const struct chartsrc *cs)
{
	/* every field, each with its length: no two sources share a key */
	const char *f[] = { cs->repo, cs->chart, cs->version, cs->release, cs->ns, cs->values };
	struct buf k = BUF_INIT;
	const char *s;

	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
		buf_addf(&k, "%zu:%s;", f[i] ? strlen(f[i]) : (size_t)-1, f[i] ? f[i] : "");
	s = astrdup(k.s);
	buf_release(&k);
	return s;
}

/* the last line helm wrote on stderr, as it may be printed */
static const char *last_line(const char *log)
{
	size_t len;
	char *text = read_file(log, &len), *e, *l;
	const char *r;

	if (!text)
		return "";
	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		text[--len] = 0;
	l = (e = strrchr(text, '\n')) ? e + 1 : text;
	r = term_safe(aprintf("%.300s", l));
	free(text);
	return r;
}

/* helm template of cs into b; NULL, or why not */
static const char *template(const struct chartsrc *cs, struct bundle *b)
{
	const char *tmp = getenv("TMPDIR"), *vfile, *argv[12], *err = NULL, *why = NULL;
	char *log = aprintf("%s/idpmake-helmdiff-XXXXXX", tmp && *tmp ? tmp : "/tmp");
	struct buf vb = BUF_INIT, out = BUF_INIT;
	struct proc pr = { 0 };
	struct package pk = { .name = cs->release };
	struct step st = { .id = "helm template", .pkg = &pk, .namespace = cs->ns };
	struct objects o;
	int n = 0, fd;

	memset(b, 0, sizeof(*b));
	buf_adds(&vb, cs->values ? cs->values : "");
	vfile = helm_values_file(&vb);
	buf_release(&vb);
	if (!vfile)
		return aprintf("cannot write the values file: %s", strerror(errno));
	if ((fd = mkstemp(log)) >= 0)
		close(fd);
	argv[n++] = "helm";
	argv[n++] = "template";
	argv[n++] = cs->release;
	argv[n++] = cs->chart;
	argv[n++] = aprintf("--repo=%s", cs->repo);
	if (cs->version && strcmp(cs->version, "*"))
		argv[n++] = aprintf("--version=%s", cs->version);
	if (cs->ns)
		argv[n++] = aprintf("--namespace=%s", cs->ns);
	argv[n++] = "--include-crds";
	argv[n++] = aprintf("--values=%s", vfile);
	argv[n] = NULL;
	pr.argv = argv;
	pr.log = fd >= 0 ? log : NULL;
	pr.out = &out;
	pr.out_cap = HELM_OUT_CAP;
	pr.timeout = HELM_TIMEOUT;
	if (proc_run(&pr) < 0) {
		why = aprintf("helm template failed (%s)%s%s", proc_failure(&pr), fd >= 0 ? ": " : "",
			      fd >= 0 ? last_line(log) : "");
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
	m->why = template(cs, &m->b);
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
	struct ypool *p = ypool_new();
	struct chartsrc a, b;
	const char *whya = NULL, *whyb = NULL;
	int ra = read_app(p, old, oldlen, &a, &whya), rb = read_app(p, new, newlen, &b, &whyb);
	const struct bundle *ba = NULL, *bb = NULL;
	size_t x = 0, y = 0;
	int r = 1;

	memset(hd, 0, sizeof(*hd));
	if (!ra && !rb) {
		r = 0;
		goto out;
	}
	if (ra > 0 && rb > 0 && same(a.repo, b.repo) && same(a.chart, b.chart) && same(a.version, b.version) &&
	    same(a.release, b.release) && same(a.ns, b.ns) && same(a.values, b.values)) {
		r = 0;
		goto out;
	}
	hd->what = ra > 0 && rb > 0 && (strcmp(a.chart, b.chart) || !same(a.version, b.version))
			   ? aprintf("chart %s -> %s", chart_text(&a), chart_text(&b))
			   : aprintf("chart %s", chart_text(rb > 0 ? &b : &a));
	if (ra < 0 || rb < 0) {
		hd->why = ra < 0 ? whya : whyb;
		hd->what = "the chart";
		goto out;
	}
	if (!which("helm")) {
		hd->why = "helm is not installed (install it to see the objects Argo CD renders from the chart)";
		goto out;
	}
	if ((ra > 0 && (hd->why = rendered(&a, &ba))) || (rb > 0 && (hd->why = rendered(&b, &bb))))
		goto out;
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
out:
	ypool_free(p);
	return r;
}
