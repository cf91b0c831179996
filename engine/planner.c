/*
 * planner.c - the planner's helpers the modules below plan.c call back
 * (planner.h): a step's render, the comparison of a key with its record,
 * and the state's key for a folder of the GitOps remote.
 */
#include "planner.h"
#include "util.h"

struct step *render_of(struct step *s)
{
	return s ? s->render : NULL;
}

void plan_compare(struct step *s, const struct record *rec, const char *why_changed)
{
	if (!rec->have || hash_zero(rec->key)) {
		s->dirty = 1;
		s->reason = R_NEVER;
	} else if (!hash_eq(rec->key, s->key)) {
		s->dirty = 1;
		s->reason = R_KEY_CHANGED;
		s->why = why_changed;
	} else if (!rec->ok) {
		s->dirty = 1;
		s->reason = R_FAILED_BEFORE;
	} else {
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
	}
}

/*
 * What a remote and branch hold is recorded per folder under a key naming
 * them (the URL without credentials), so that a distro pointed at another
 * remote or branch pushes every folder there, not only the changed ones.
 */
const char *pushed_key(const struct planner *pl, const char *path)
{
	return aprintf("%s#%s %s", pl->rc.remote_url, pl->g->d->git.branch, path);
}
