/*
 * helm.c - the helm renderer (render.c): a package's values (values files,
 * `set`, ${vars}) merged into one tree; then either an Argo CD Application
 * with the chart as its Helm source and the values inline (Argo CD renders
 * it), or, with `render: local`, `helm template` of the chart at its pinned
 * version (from the chart repository, or the archive's copy: pack.h), its
 * output parsed like any renderer's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/exec.h"
#include "distro/manifest.h"
#include "pack/pack.h"
#include "render/render.h"
#include "render/renderers.h"
#include "base/util.h"
#include "base/yaml.h"

static struct loc noloc;	/* the nodes helm.c makes have no place in a file */

/* set a dotted key (a.b.c) in a values tree */
static void set_dotted(struct ypool *p, struct ynode *root, const char *key, const char *value)
{
	struct ynode *m = root;
	const char *s = key;

	for (;;) {
		const char *dot = strchr(s, '.');
		char *part = dot ? astrndup(s, (size_t)(dot - s)) : astrdup(s);
		if (!dot) {
			ynode_put(p, m, part, ynode_quoted(p, value));
			return;
		}
		struct ynode *next = yget(m, part);
		if (!next || next->type != Y_MAP) {
			next = ynew(p, Y_MAP, noloc);
			ynode_put(p, m, part, next);
		}
		m = next;
		s = dot + 1;
	}
}

static struct ynode *merge_values(struct ypool *p, struct ynode *a, struct ynode *b)
{
	if (!a || a->type != Y_MAP || b->type != Y_MAP)
		return b;
	for (size_t i = 0; i < b->n; i++) {
		struct ynode *old = yget(a, b->k[i]->s);
		ynode_put(p, a, b->k[i]->s, old ? merge_values(p, old, b->v[i]) : b->v[i]);
	}
	return a;
}

/* values files merged in order (with ${var} expanded), then `set` */
static struct ynode *values_tree(const struct render_ctx *rc, const struct step *s, struct ypool *p, const char **err)
{
	struct ynode *root = ynew(p, Y_MAP, noloc);
	struct vars v;

	vars_init(&v, rc->d, s->cluster, s->pkg, s->namespace);
	for (size_t i = 0; i < s->pkg->values.n; i++) {
		size_t len;
		char *text = read_file(s->pkg->values.v[i], &len);
		const char *exp;
		struct ynode **docs;
		size_t n;
		if (!text) {
			*err = aprintf("cannot read values file %s: %s", s->pkg->values.v[i], strerror(errno));
			return NULL;
		}
		exp = expand(text, s->pkg->values.loc[i], &v);
		if (exp == text)
			exp = astrdup(text);	/* expand returns its input when there is nothing to expand */
		free(text);
		if (!exp || yaml_parse(p, s->pkg->values.v[i], exp, strlen(exp), &docs, &n) < 0) {
			*err = aprintf("values file %s: see above", s->pkg->values.v[i]);
			return NULL;
		}
		for (size_t j = 0; j < n; j++)
			root = merge_values(p, root, docs[j]);
	}
	for (size_t i = 0; i < s->pkg->set.n; i++) {
		const char *val = expand(s->pkg->set.v[i].value, s->pkg->set.v[i].loc, &v);
		if (!val) {
			*err = "undefined variable in 'set'";
			return NULL;
		}
		set_dotted(p, root, s->pkg->set.v[i].key, val);
	}
	return root;
}

/* a file of a bundled chart, into the package's folder under chart/ */
static void add_chart_file(void *arg, const char *name, const char *data, size_t len)
{
	struct objects *o = arg;

	objects_add_file(o, aprintf("chart/%s", name), data, len);
}

/* helm, rendered by Argo CD: an Application with a Helm source */
int render_helm_app(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	struct ypool *p = o->pool;
	const struct distro *d = rc->d;
	struct ynode *app = ynew(p, Y_MAP, noloc), *md, *spec, *src, *helm, *dst, *values;
	struct buf vb = BUF_INIT;
	struct vars v;
	const char *name;

	vars_init_place(&v, d, s->cluster, s->pkg, s->namespace);
	if (!(name = expand(d->argocd.app_name, (struct loc){ d->file, 0, 0 }, &v)))
		return *err = "undefined variable in argocd.app-name", -1;
	if (!(values = values_tree(rc, s, p, err)))
		return -1;
	ynode_put(p, app, "apiVersion", ynode_plain(p, "argoproj.io/v1alpha1"));
	ynode_put(p, app, "kind", ynode_plain(p, "Application"));
	md = ynew(p, Y_MAP, noloc);
	ynode_put(p, md, "name", ynode_quoted(p, name));
	ynode_put(p, md, "namespace", ynode_quoted(p, d->argocd.namespace));
	ynode_put(p, app, "metadata", md);
	spec = ynew(p, Y_MAP, noloc);
	ynode_put(p, spec, "project", ynode_quoted(p, d->argocd.project));
	src = ynew(p, Y_MAP, noloc);
	if (pack_active() && s->pkg->src == SRC_CHART) {
		/* from a bundle: the chart mirrored into the package's folder, a path source (pack.h) */
		const char *tgz = s->pkg->chart.version ?
			pack_chart(expand(s->pkg->chart.repo, s->pkg->loc, &v), expand(s->pkg->chart.name, s->pkg->loc, &v),
				   expand(s->pkg->chart.version, s->pkg->loc, &v), err) : NULL;
		if (!tgz) {
			if (!s->pkg->chart.version)
				*err = "a bundle holds pinned charts only: this chart has no version";
			return -1;
		}
		if (pack_chart_files(tgz, add_chart_file, o, err) < 0)
			return -1;
		ynode_put(p, src, "repoURL", ynode_quoted(p, rc->remote_url));
		ynode_put(p, src, "path", ynode_quoted(p, aprintf("%s/chart", s->gitpath)));
		ynode_put(p, src, "targetRevision", ynode_quoted(p, d->git.branch));
	} else {
		ynode_put(p, src, "repoURL", ynode_quoted(p, expand(s->pkg->chart.repo, s->pkg->loc, &v)));
		ynode_put(p, src, "chart", ynode_quoted(p, expand(s->pkg->chart.name, s->pkg->loc, &v)));
		ynode_put(p, src, "targetRevision",
		    ynode_quoted(p, s->pkg->chart.version ? expand(s->pkg->chart.version, s->pkg->loc, &v) : "*"));
	}
	helm = ynew(p, Y_MAP, noloc);
	ynode_put(p, helm, "releaseName", ynode_quoted(p, s->pkg->name));
	if (values->n) {
		yaml_emit(values, &vb);
		ynode_put(p, helm, "values", yscalar(p, vb.s, YS_BLOCK, noloc));
	}
	buf_release(&vb);
	ynode_put(p, src, "helm", helm);
	ynode_put(p, spec, "source", src);
	dst = ynew(p, Y_MAP, noloc);
	if (s->cluster->argo_name)
		ynode_put(p, dst, "name", ynode_quoted(p, s->cluster->argo_name));
	else
		ynode_put(p, dst, "server", ynode_quoted(p, s->cluster->server ? s->cluster->server : "https://kubernetes.default.svc"));
	ynode_put(p, dst, "namespace", ynode_quoted(p, s->namespace));
	ynode_put(p, spec, "destination", dst);
	ynode_put(p, app, "spec", spec);
	add_obj(o, app);
	o->single = "application.yaml";	/* engine.md: the folder holds application.yaml */
	return 0;
}

/*
 * The values (which may hold secrets) go to helm in a file of their own:
 * created 0600 with O_EXCL under TMPDIR (mkstemps), and removed as soon as
 * helm is done (issue 12 #8: the file was 0644, in the state folder, never
 * removed).  NULL with errno.
 */
const char *helm_values_file(const struct buf *vb)
{
	const char *dir = getenv("TMPDIR");
	char *path = aprintf("%s/idpmake-values-XXXXXX.yaml", dir && *dir ? dir : "/tmp");
	int fd = mkstemps(path, 5), e;
	size_t off = 0;

	if (fd < 0)
		return NULL;
	fchmod(fd, 0600);
	while (off < vb->len) {
		ssize_t r = write(fd, vb->s + off, vb->len - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			goto fail;
		off += (size_t)r;
	}
	if (close(fd) < 0) {
		fd = -1;
		goto fail;
	}
	return path;
fail:
	e = errno;
	if (fd >= 0)
		close(fd);
	unlink(path);
	errno = e;
	return NULL;
}

int render_helm_local(const struct render_ctx *rc, struct step *s, struct objects *o, const char **err)
{
	struct ypool *p = o->pool;
	struct ynode *values;
	struct buf vb = BUF_INIT;
	const char *vfile, **argv = amalloc(16 * sizeof(*argv));
	int n = 0, ret;
	struct vars v;

	if (!which("helm")) {
		*err = aprintf("package '%s' has render: local, but 'helm' is not installed (install helm, or let Argo CD "
			       "render the chart: remove 'render: local')", s->pkg->name);
		return -1;
	}
	if (!(values = values_tree(rc, s, p, err)))
		return -1;
	yaml_emit(values, &vb);
	vfile = helm_values_file(&vb);
	buf_release(&vb);
	if (!vfile) {
		*err = aprintf("cannot write the values file in %s: %s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
			       strerror(errno));
		return -1;
	}
	vars_init(&v, rc->d, s->cluster, s->pkg, s->namespace);
	argv[n++] = "helm";
	argv[n++] = "template";
	argv[n++] = s->pkg->name;
	if (s->pkg->src == SRC_CHART) {
		argv[n++] = expand(s->pkg->chart.name, s->pkg->loc, &v);
		argv[n++] = "--repo";
		argv[n++] = expand(s->pkg->chart.repo, s->pkg->loc, &v);
		if (s->pkg->chart.version) {
			argv[n++] = "--version";
			argv[n++] = expand(s->pkg->chart.version, s->pkg->loc, &v);
		}
		if (pack_active()) {
			/* from a bundle: the .tgz it holds, no repository (pack.h) */
			const char *tgz = s->pkg->chart.version ? pack_chart(argv[5], argv[3], argv[7], err) : NULL;
			if (!tgz) {
				if (!s->pkg->chart.version)
					*err = aprintf("chart '%s' has no pinned version, and a bundle holds pinned charts only",
						       argv[3]);
				unlink(vfile);
				return -1;
			}
			argv[3] = tgz;
			n = 4;
		}
	} else {
		argv[n++] = s->pkg->path;
	}
	argv[n++] = "--namespace";
	argv[n++] = s->namespace;
	argv[n++] = "-f";
	argv[n++] = vfile;
	argv[n] = NULL;
	ret = run_rule(rc, s, argv, o, err);
	unlink(vfile);
	/* name the chart and its version: "not found" is the usual failure of a bad pin */
	if (ret < 0 && s->pkg->src == SRC_CHART)
		*err = aprintf("helm template of chart '%s' version '%s' from %s: %s",
			       expand(s->pkg->chart.name, s->pkg->loc, &v),
			       s->pkg->chart.version ? expand(s->pkg->chart.version, s->pkg->loc, &v) : "(latest)",
			       expand(s->pkg->chart.repo, s->pkg->loc, &v), *err);
	else if (ret < 0)
		*err = aprintf("helm template of the chart in %s: %s", s->pkg->path, *err);
	return ret;
}
