/*
 * kubectl.c - `deploy: kubectl`: a package applied with
 * `kubectl apply --server-side` as its sync step, for what Argo CD cannot
 * sync itself: Argo CD into an empty cluster, and the Gitea that is the
 * GitOps remote (graph.c puts these steps before the push and every
 * registration).  The key is a sync's: the render's output, how it is
 * applied and where, so an unchanged render is not applied again.
 *
 * The render's objects, unpacked, are applied in phases:
 *   1. the package's namespace, Namespaces and CustomResourceDefinitions
 *      (then `kubectl wait --for condition=established` on the CRDs);
 *   2. objects without a namespace with `-n NAMESPACE` (as Argo CD's
 *      destination namespace), those with one as they are;
 *   3. with `sync: {wait: healthy}` (the default), `kubectl rollout status`
 *      of every Deployment, StatefulSet and DaemonSet, within sync.timeout.
 * Every command's output goes to the step's log.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "buf.h"
#include "exec.h"
#include "hash.h"
#include "kubectl.h"
#include "util.h"
#include "yaml.h"

/* an argv list in the arena (NULL-terminated), so nothing is left to free */
struct argl {
	const char **v;
	size_t n;
};

static void push(struct argl *a, const char *s)
{
	a->v = agrow(a->v, a->n, sizeof(*a->v));
	a->v[a->n++] = s;
	a->v = agrow(a->v, a->n, sizeof(*a->v));	/* room for the NULL after it */
	a->v[a->n] = NULL;
}

struct hash kubectl_key(const struct step *s, struct hash output)
{
	struct hasher *h = hasher_new();
	const struct package *p = s->pkg;

	hasher_adds(h, "kubectl apply --server-side --force-conflicts --field-manager=idpmake");
	hasher_addh(h, output);
	hasher_adds(h, s->namespace);
	hasher_adds(h, s->cluster->name);
	hasher_adds(h, s->cluster->reg.kubeconfig);
	hasher_adds(h, s->cluster->reg.context);
	hasher_add(h, &p->sync.wait_healthy, sizeof(int));
	hasher_add(h, &p->sync.timeout, sizeof(int));
	return hasher_end(h);
}

/* argv: kubectl [--kubeconfig F] [--context C] ARGS... (NULL-terminated) */
static int kubectl(const struct step *s, const char *const *args, int timeout, const char **err)
{
	struct argl av = { 0 };
	struct proc p = { 0 };

	push(&av, "kubectl");
	if (s->cluster->reg.kubeconfig) {
		push(&av, "--kubeconfig");
		push(&av, s->cluster->reg.kubeconfig);
	}
	if (s->cluster->reg.context) {
		push(&av, "--context");
		push(&av, s->cluster->reg.context);
	}
	for (size_t i = 0; args[i]; i++)
		push(&av, args[i]);
	p.argv = av.v;
	p.log = s->log;
	p.timeout = timeout;
	if (proc_run(&p) < 0) {
		*err = aprintf("kubectl %s: %s", args[0], proc_failure(&p));
		return -1;
	}
	return 0;
}

enum phase { PH_FIRST, PH_DEFAULT_NS, PH_OWN_NS, PH_N };

int kubectl_apply(const struct step *s, const char *dir, const char **err)
{
	const struct package *p = s->pkg;
	struct tree t;
	struct argl files[PH_N] = { { 0 } }, crds = { 0 }, rollouts = { 0 }, rollout_ns = { 0 };
	const char *nsfile;
	char *nsyaml = aprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", s->namespace);
	int timeout = p->sync.timeout > 0 ? p->sync.timeout : 300;

	if (!dir) {
		*err = "cannot unpack the rendered objects";
		return -1;
	}
	nsfile = aprintf("%s.namespace.yaml", dir);
	if (write_file_atomic(nsfile, nsyaml, strlen(nsyaml)) < 0) {
		*err = aprintf("cannot write %s: %s", nsfile, strerror(errno));
		return -1;
	}
	push(&files[PH_FIRST], "-f");
	push(&files[PH_FIRST], nsfile);
	if (scan_tree(dir, NULL, &t) < 0) {
		*err = aprintf("cannot read %s", dir);
		return -1;
	}
	for (size_t i = 0; i < t.n; i++) {
		const char *path = aprintf("%s/%s", dir, t.v[i].path);
		size_t len, n;
		char *text = read_file(path, &len);
		struct ypool *yp;
		struct ynode **docs;
		const char *kind = "", *ns = NULL;
		enum phase ph;
		if (!text) {
			*err = aprintf("cannot read %s: %s", path, strerror(errno));
			tree_free(&t);
			return -1;
		}
		yp = ypool_new();
		if (yaml_parse(yp, path, text, len, &docs, &n) == 0 && n && docs[0]->type == Y_MAP) {
			const struct ynode *k = yget(docs[0], "kind"), *m = ypath(docs[0], "metadata.namespace");
			if (k && k->type == Y_SCALAR)
				kind = astrdup(k->s);
			if (m && m->type == Y_SCALAR && !yisnull(m))
				ns = astrdup(m->s);
		}
		ypool_free(yp);
		free(text);
		if (!strcmp(kind, "Namespace") || !strcmp(kind, "CustomResourceDefinition"))
			ph = PH_FIRST;
		else
			ph = ns ? PH_OWN_NS : PH_DEFAULT_NS;
		push(&files[ph], "-f");
		push(&files[ph], path);
		if (!strcmp(kind, "CustomResourceDefinition")) {
			push(&crds, "-f");
			push(&crds, path);
		}
		if (!strcmp(kind, "Deployment") || !strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet")) {
			push(&rollouts, path);
			push(&rollout_ns, ns ? ns : s->namespace);
		}
	}
	tree_free(&t);
	for (int ph = 0; ph < PH_N; ph++) {
		struct argl a = { 0 };
		if (!files[ph].n)
			continue;
		push(&a, "apply");
		push(&a, "--server-side");
		push(&a, "--force-conflicts");
		push(&a, "--field-manager=idpmake");
		if (ph == PH_DEFAULT_NS) {
			push(&a, "-n");
			push(&a, s->namespace);
		}
		for (size_t i = 0; i < files[ph].n; i++)
			push(&a, files[ph].v[i]);
		if (kubectl(s, a.v, timeout, err) < 0)
			return -1;
		if (ph == PH_FIRST && crds.n) {
			struct argl w = { 0 };
			push(&w, "wait");
			push(&w, "--for");
			push(&w, "condition=established");
			push(&w, aprintf("--timeout=%ds", timeout));
			for (size_t i = 0; i < crds.n; i++)
				push(&w, crds.v[i]);
			if (kubectl(s, w.v, timeout + 30, err) < 0)
				return -1;
		}
	}
	if (p->sync.wait_healthy)
		for (size_t i = 0; i < rollouts.n; i++) {
			const char *a[] = { "rollout", "status", "-n", rollout_ns.v[i], "-f", rollouts.v[i],
					    aprintf("--timeout=%ds", timeout), NULL };
			if (kubectl(s, a, timeout + 30, err) < 0)
				return -1;
		}
	return 0;
}
