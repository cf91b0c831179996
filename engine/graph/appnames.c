/*
 * appnames.c - one Application name, one step: two syncs whose
 * argocd.app-name expands to the same name would overwrite each other's
 * Application, so graph_build refuses them, located (graph.h).
 */
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "distro/manifest.h"
#include "base/util.h"

struct named_step {
	const char *name;
	const struct step *s;
	size_t at;			/* its place in the graph: the first one is named first */
};

static int named_cmp(const void *a, const void *b)
{
	const struct named_step *x = a, *y = b;
	int r = strcmp(x->name, y->name);
	return r ? r : (x->at > y->at) - (x->at < y->at);
}

void appnames_check(const struct graph *g)
{
	const struct distro *d = g->d;
	struct named_step *v = xcalloc(g->nsteps + 1, sizeof(*v));
	size_t n = 0;

	for (size_t i = 0; i < g->nsteps; i++) {
		const struct step *s = g->steps[i];
		struct vars vs;
		const char *name;
		if (s->kind != STEP_SYNC || s->pkg->deploy_kubectl)
			continue;	/* deploy: kubectl makes no Application */
		vars_init_place(&vs, d, s->cluster, s->pkg, s->namespace);
		if (!(name = expand(d->argocd.app_name, d->argocd.app_name_loc.file ? d->argocd.app_name_loc : s->pkg->loc, &vs)))
			break;	/* said, located */
		v[n++] = (struct named_step){ name, s, i };
	}
	qsort(v, n, sizeof(*v), named_cmp);
	for (size_t i = 1; i < n; i++) {
		const struct step *a = v[i - 1].s, *b = v[i].s;
		if (strcmp(v[i - 1].name, v[i].name))
			continue;
		loc_error(d->argocd.app_name_loc.file ? d->argocd.app_name_loc : b->pkg->loc,
			  "argocd.app-name \"%s\" gives %s/%s and %s/%s the same Application name '%s': each would "
			  "overwrite the other's; make it tell them apart (set app-name, e.g. \"${cluster}--${package}\")",
			  d->argocd.app_name, a->cluster->name, a->pkg->name, b->cluster->name, b->pkg->name, v[i].name);
	}
	free(v);
}
