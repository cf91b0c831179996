/* model.c - lookups over a loaded distro's data model (model.h) */
#include <string.h>

#include "distro/capi.h"
#include "distro/model.h"

int package_is(const struct package *p, const char *name)
{
	return !strcmp(p->name, name) || (p->group && !strcmp(p->group, name));
}

struct package *find_package(const struct distro *d, const char *name)
{
	for (size_t i = 0; i < d->npackages; i++)
		if (!strcmp(d->packages[i].name, name))
			return &d->packages[i];
	return NULL;
}

struct cluster *find_cluster(const struct distro *d, const char *name)
{
	for (size_t i = 0; i < d->nclusters; i++)
		if (!strcmp(d->clusters[i].name, name))
			return &d->clusters[i];
	return NULL;
}

int cluster_has(const struct distro *d, const struct cluster *c, const struct package *p)
{
	if (p->capi_of)	/* a created cluster's Cluster: on its management cluster alone */
		return c == p->capi_of->create.capi->mgmt;
	if (p->capi_spec)	/* create.spec's template: its copies cluster-NAME go, it does not */
		return 0;
	if (!c->profiles.n)
		return 1;
	for (size_t i = 0; i < c->profiles.n; i++)
		for (size_t j = 0; j < d->nprofiles; j++)
			if (!strcmp(d->profiles[j].name, c->profiles.v[i]))
				for (size_t k = 0; k < d->profiles[j].packages.n; k++)
					if (package_is(p, d->profiles[j].packages.v[k]))
						return 1;
	return 0;
}
