/*
 * planner.c - the planner's helpers the modules below plan.c call back
 * (planner.h): a step's render, the comparison of a key with its record,
 * the state's key for a folder of the GitOps remote, and a file's hash
 * through the state's stat cache.
 */
#include <sys/stat.h>

#include "render/planner.h"
#include "graph/state.h"
#include "base/util.h"

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

/* a file's content hash, through the state's stat cache (planner.h) */
int planner_file_hash(struct planner *pl, const char *path, struct hash *h)
{
	struct stat st;
	struct tree t = { 0 };
	struct tree_file f, *old;
	size_t nold;
	struct hash fp, content;
	int racy;
	const char *name = aprintf("f:%s", path);
	struct hasher *hs;

	if (stat(path, &st) < 0)
		return error("cannot read %s:", path);
	f = (struct tree_file){ path_base(path), (int64_t)st.st_size,
				(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
				(int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
				(uint64_t)st.st_ino, (uint64_t)st.st_dev, { 0, 0 }, 0 };
	hs = hasher_new();
	hasher_add(hs, &f.size, sizeof(f.size) * 3);
	hasher_add(hs, &f.ino, sizeof(f.ino) * 2);
	fp = hasher_end(hs);
	if (state_tree(pl->st, name, &t.fingerprint, &racy, &content) && hash_eq(t.fingerprint, fp) && !racy) {
		*h = content;
		return 0;
	}
	t.dir = path_dir(path);
	t.v = &f;
	t.n = 1;
	t.fingerprint = fp;
	state_tree_files(pl->st, name, &old, &nold);
	if (hash_tree(&t, old, nold, pl->run_start) < 0)
		return -1;
	*h = f.h;
	t.content = f.h;
	if (!pl->dry_run)
		state_tree_put(pl->st, name, &t);
	return 0;
}

