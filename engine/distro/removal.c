/*
 * removal.c - `packages: {name: null}` in a distro that extends another:
 * removing a package the parent does not have (a typo, or a distro that
 * extends nothing) is an error at the key, never silently nothing; the
 * place of each removal is kept so that a package left needing a removed
 * one can be told where that happened (manifest.c, check_references).
 */
#include <stdlib.h>
#include <string.h>

#include "distro/conv.h"
#include "distro/removal.h"
#include "base/util.h"

static struct removal {
	const char *name;
	struct loc loc;
} *removals;
static size_t nremovals;

void removals_reset(void)
{
	free(removals);
	removals = NULL;
	nremovals = 0;
}

static void remember(const char *name, struct loc loc)
{
	removals = xrealloc(removals, (nremovals + 1) * sizeof(*removals));
	removals[nremovals].name = name;
	removals[nremovals++].loc = loc;
}

int removals_check(const struct ynode *parent, const struct ynode *child)
{
	const struct ynode *cp = yget(child, "packages"), *pp = parent ? yget(parent, "packages") : NULL;
	const struct ynode *pname = parent ? yget(parent, "name") : NULL;
	const char *pn = pname && pname->type == Y_SCALAR && pname->s ? pname->s : "?";
	int rc = 0;

	if (!cp || cp->type != Y_MAP)
		return 0;
	for (size_t i = 0; i < cp->n; i++) {
		const char *name = cp->k[i]->s, *sug;
		const struct ynode *old;
		const char **names;
		size_t n = 0;

		if (!yisnull(cp->v[i]))
			continue;
		if (!parent) {
			loc_error(cp->k[i]->loc, "'%s: null' removes a package of the distro this one extends, "
				  "but it extends none (add 'extends', or delete the line)", name);
			rc = -1;
			continue;
		}
		old = pp && pp->type == Y_MAP ? yget(pp, name) : NULL;
		if (old && !yisnull(old)) {
			remember(name, cp->k[i]->loc);
			continue;
		}
		names = xcalloc(pp && pp->type == Y_MAP ? pp->n + 1 : 1, sizeof(*names));
		for (size_t j = 0; pp && pp->type == Y_MAP && j < pp->n; j++)
			if (!yisnull(pp->v[j]))
				names[n++] = pp->k[j]->s;
		sug = closest(name, names, n);
		loc_error(cp->k[i]->loc, "'%s: null' removes a package, but distro '%s' has no package '%s'%s%s%s",
			  name, pn, name, sug ? "; did you mean '" : "", sug ? sug : "", sug ? "'?" : "");
		free(names);
		rc = -1;
	}
	return rc;
}

const struct loc *removal_of(const char *name)
{
	for (size_t i = nremovals; i-- > 0;)
		if (!strcmp(removals[i].name, name))
			return &removals[i].loc;
	return NULL;
}
