/*
 * capidry.c - validate --live for the clusters Cluster API makes (capi.h;
 * spec/capi.md "Bootstrap and pre-flight"): each selected Cluster render,
 * and the class package it names, is applied to its management cluster
 * with `kubectl apply --server-side --dry-run=server`, the class first, so
 * that Cluster API's CRD schemas and webhooks (the ClusterTopology gate,
 * the variables against the class, the version rules) judge them before
 * anything is pushed, and nothing is kept.
 *
 * Each is applied as Argo CD's sync applies it (as_synced): its objects
 * without a namespace in the Application's destination namespace, and a
 * destination namespace that the sync creates (CreateNamespace=true) counts
 * as present.  The render goes to a folder of its own under the state
 * folder (0700), removed after.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "argo/kubectl.h"
#include "base/buf.h"
#include "base/yaml.h"
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

/* does s's sync create its destination namespace (CreateNamespace=true in its Application's syncOptions)? */
static int creates_namespace(const struct step *s)
{
	for (size_t i = 0; i < s->pkg->sync.options.n; i++)
		if (!strcmp(s->pkg->sync.options.v[i], "CreateNamespace=true"))
			return 1;
	return 0;
}

/* is namespace ns missing on cl?  1 when the cluster says so; 0 when it has it, or cannot tell (the dry run says) */
static int namespace_missing(const struct cluster *cl, const char *ns)
{
	const char *args[] = { "get", "namespace", ns, NULL }, *err = NULL;
	json_t *v = kubectl_get_json(cl, args, &err);

	if (v) {
		json_decref(v);
		return 0;
	}
	return err && strstr(err, aprintf("namespaces \"%s\" not found", ns)) != NULL;
}

/*
 * The dry run applies as Argo CD's sync will: an object without a namespace
 * goes to the Application's destination namespace (dest, kubectl -n); one
 * with its own keeps it.  When the sync creates dest (CreateNamespace=true,
 * before anything else) and the cluster has no such namespace yet, nothing
 * can be dry-run in it: its objects are judged in `default` (stand), which
 * every cluster has.  The file's text as it is applied (arena), or NULL when
 * it goes to dest's folder unchanged (*to_dest set).
 */
static const char *as_synced(const char *name, const char *data, size_t len, const char *dest, const char *stand,
			     int *to_dest)
{
	struct ypool *p = ypool_new();
	struct ynode **docs, *md;
	const struct ynode *ns;
	const char *ret = NULL;
	size_t nd;

	*to_dest = 1;
	if (yaml_parse(p, name, data, len, &docs, &nd) < 0 || nd != 1 || !(md = yget(docs[0], "metadata")) ||
	    !(ns = yget(md, "namespace")) || ns->type != Y_SCALAR || !*ns->s)
		goto out;	/* no namespace of its own (or not one object: kubectl says) */
	*to_dest = 0;
	ret = astrndup(data, len);
	if (stand && !strcmp(ns->s, dest)) {
		struct buf out = BUF_INIT;
		yset(p, md, yscalar(p, "namespace", YS_PLAIN, ns->loc), yscalar(p, stand, YS_PLAIN, ns->loc));
		if (yaml_emit(docs[0], &out) == 0)
			ret = astrndup(out.s, out.len);
		buf_release(&out);
	}
out:
	ypool_free(p);
	return ret;
}

static int dry_run(struct ctx *c, struct step *s)
{
	const char *dir = aprintf("%s/tmp/dry-run-%ld", c->statedir, (long)getpid()), *err = NULL, *cur;
	const char *dest = s->namespace && *s->namespace ? s->namespace : NULL, *stand = NULL;
	const char *own = aprintf("%s/own", dir), *to = aprintf("%s/dest", dir);
	struct bundle b;
	size_t nobj = 0, nown = 0, ndest = 0;
	int ret = -1;

	if (render_one(c, s, &b) < 0)
		return -1;
	rmtree(dir);
	if (mkdirs(path_dir(dir)) < 0 || mkdir(dir, 0700) < 0 || mkdir(own, 0700) < 0 || mkdir(to, 0700) < 0) {
		error("%s: cannot make %s: %s", s->id, dir, strerror(errno));
		goto out;
	}
	if (dest && creates_namespace(s) && namespace_missing(s->cluster, dest)) {
		stand = "default";
		fprintf(stderr, "idpmake: %s: namespace '%s' is not on '%s' yet, and the sync creates it "
			"(CreateNamespace=true): its objects are dry-run in '%s'\n", s->id, dest, s->cluster->name, stand);
	}
	cur = capi_class_current(&b);
	for (size_t i = 0; i < b.n; i++) {
		/* a class package: its top and its current revision (capiclass.h), the earlier ones are live */
		const char *slash = strchr(b.v[i].name, '/'), *text, *file;
		int to_dest;
		if (!bundle_is_manifest(b.v[i].name) ||
		    (slash && (!cur || (size_t)(slash - b.v[i].name) != strlen(cur) || strncmp(b.v[i].name, cur, strlen(cur)))))
			continue;
		text = as_synced(b.v[i].name, b.v[i].data, b.v[i].len, dest, stand, &to_dest);
		file = slash ? aprintf("rev-%s.%s", cur, slash + 1) : b.v[i].name;
		if (write_file_copy(aprintf("%s/%s", to_dest ? to : own, file), to_dest ? b.v[i].data : text,
				    to_dest ? b.v[i].len : strlen(text)) < 0) {
			error("%s: cannot write %s/%s: %s", s->id, dir, b.v[i].name, strerror(errno));
			goto out;
		}
		nobj++;
		if (to_dest)
			ndest++;
		else
			nown++;
	}
	if ((ndest && kubectl_dry_run(s->cluster, to, stand ? stand : dest, &err) < 0) ||
	    (nown && kubectl_dry_run(s->cluster, own, NULL, &err) < 0)) {
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
