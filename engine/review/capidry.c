/*
 * capidry.c - validate --live for the clusters Cluster API makes (capi.h;
 * spec/capi.md "Bootstrap and pre-flight"): each selected Cluster render,
 * and the class package it names, is applied to its management cluster
 * with `kubectl apply --server-side --dry-run=server`, the class first, so
 * that Cluster API's CRD schemas and webhooks (the ClusterTopology gate,
 * the variables against the class, the version rules) judge them before
 * anything is pushed, and nothing is kept.
 *
 * The render goes to a folder of its own under the state folder (0700),
 * removed after.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argo/kubectl.h"
#include "distro/capi.h"
#include "render/bundle.h"
#include "render/capiclass.h"
#include "review/capidry.h"
#include "review/rendered.h"
#include "run/ctx.h"
#include "base/util.h"

/* is s the render of a Cluster, or of the class package of one, on cluster m (its management)? */
static int dry_runs(const struct distro *d, const struct step *s)
{
	if (s->kind != STEP_RENDER || !s->selected)
		return 0;
	if (s->pkg->capi_of)
		return 1;
	for (size_t i = 0; i < d->nclusters; i++) {
		const struct capi *k = d->clusters[i].create.capi;
		if (k && k->mgmt == s->cluster && k->class_pkg && package_is(s->pkg, k->class_pkg))
			return 1;
	}
	return 0;
}

static int dry_run(struct ctx *c, struct step *s)
{
	const char *dir = aprintf("%s/tmp/dry-run-%ld", c->statedir, (long)getpid()), *err = NULL, *cur;
	struct bundle b;
	size_t nobj = 0;
	int ret = -1;

	if (render_one(c, s, &b) < 0)
		return -1;
	rmtree(dir);
	if (mkdirs(path_dir(dir)) < 0 || mkdir(dir, 0700) < 0) {
		error("%s: cannot make %s: %s", s->id, dir, strerror(errno));
		goto out;
	}
	cur = capi_class_current(&b);
	for (size_t i = 0; i < b.n; i++) {
		/* a class package: its top and its current revision (capiclass.h), the earlier ones are live */
		const char *slash = strchr(b.v[i].name, '/');
		if (!bundle_is_manifest(b.v[i].name) ||
		    (slash && (!cur || (size_t)(slash - b.v[i].name) != strlen(cur) || strncmp(b.v[i].name, cur, strlen(cur)))))
			continue;
		if (write_file_copy(aprintf("%s/%s", dir, slash ? aprintf("rev-%s.%s", cur, slash + 1) : b.v[i].name),
				    b.v[i].data, b.v[i].len) < 0) {
			error("%s: cannot write %s/%s: %s", s->id, dir, b.v[i].name, strerror(errno));
			goto out;
		}
		nobj++;
	}
	if (kubectl_dry_run(s->cluster, dir, &err) < 0) {
		error("%s: the management cluster '%s' refuses it (server-side dry run): %s", s->id, s->cluster->name,
		      err ? err : "?");
		goto out;
	}
	fprintf(stderr, "idpmake: %s: %zu object%s accepted by '%s' (server-side dry run)\n", s->id, nobj,
		nobj == 1 ? "" : "s", s->cluster->name);
	ret = 0;
out:
	rmtree(dir);
	bundle_free(&b);
	return ret;
}

int capidry_run(struct ctx *c)
{
	const struct graph *g = c->g;
	int failed = 0;

	/* steps[] is in order: the class render comes before the Clusters that are checked against it */
	for (size_t i = 0; i < g->nsteps; i++)
		if (dry_runs(c->d, g->steps[i]) && dry_run(c, g->steps[i]) < 0)
			failed = 1;
	return failed;
}
