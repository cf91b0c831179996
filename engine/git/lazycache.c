/*
 * lazycache.c - rendered output that the GitOps clone holds, written to the
 * cache when first read (lazycache.h).
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <git2.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "git/gitdrift.h"
#include "git/gitremote.h"
#include "git/lazycache.h"
#include "base/names.h"
#include "render/planner.h"
#include "graph/state.h"
#include "base/util.h"

long long git_object_size(struct git *g, const git_oid *id)
{
	size_t len;
	git_object_t type;

	if (git_odb_read_header(&len, &type, g->odb, id) < 0) {
		git_error_clear();
		return -1;
	}
	return (long long)len;
}

/* a folder's files as a bundle (one that idpmake could have written); -1 when not */
struct collect {
	struct git *g;
	struct bundle_entry *v;
	git_blob **blobs;
	size_t n;
	unsigned long long total;	/* bytes read so far: at most what a render may output */
	int bad;
};

/* what a render may output (render.c caps a renderer's at 512 MiB): more is not a render */
#define FOLDER_CAP (512ull << 20)

/*
 * An entry idpmake could not have written: a hostile tree may name an entry
 * '..', '.', or hold a '/' (git accepts it unless fsck is on): as a bundle
 * name it would lead out of every folder the bundle is written to.  Nor a
 * newline, a folder's included: a folder "x 0\n\n.." around "passwd" wrote
 * the header lines "x 0", "../passwd 6"; nor any control character, which
 * idpmake never writes in a name (objects.c); nor a link, an executable or a
 * submodule; nor .git (any case, trailing dots or spaces, GIT~1: a hook that
 * runs git in its IDPMAKE_RENDERED copy would take a hostile one's config).
 * The name check is names.c's, as for every name idpmake did not make.
 */
static int entry_bad(const git_tree_entry *e)
{
	if (name_bad(git_tree_entry_name(e), NAME_NO_GIT))	/* one component: no '/' */
		return 1;
	return git_tree_entry_type(e) != GIT_OBJECT_TREE && git_tree_entry_filemode(e) != GIT_FILEMODE_BLOB;
}

static int collect_entry(const char *root, const git_tree_entry *e, void *payload)
{
	struct collect *c = payload;
	const char *name = git_tree_entry_name(e);
	long long size;
	git_blob *b;

	if (entry_bad(e)) {
		c->bad = 1;
		return -1;
	}
	if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
		return 0;
	if ((size = git_object_size(c->g, git_tree_entry_id(e))) < 0 ||
	    (c->total += (unsigned long long)size) > FOLDER_CAP || git_blob_lookup(&b, c->g->repo, git_tree_entry_id(e)) < 0) {
		git_error_clear();
		c->bad = 1;
		return -1;
	}
	c->v = agrow(c->v, c->n, sizeof(*c->v));
	c->blobs = xrealloc(c->blobs, (c->n + 1) * sizeof(*c->blobs));
	c->blobs[c->n] = b;
	/* the name lives as long as the tree, which outlives the bundle's writing */
	c->v[c->n++] = (struct bundle_entry){ *root ? aprintf("%s%s", root, name) : name, git_blob_rawcontent(b),
					      (size_t)git_blob_rawsize(b) };
	return 0;
}

static int check_entry(const char *root, const git_tree_entry *e, void *payload)
{
	(void)root;
	if (entry_bad(e)) {
		*(int *)payload = 1;
		return -1;
	}
	return 0;
}

int folder_names_ok(git_tree *t)
{
	int bad = 0;

	if (t && git_tree_walk(t, GIT_TREEWALK_PRE, check_entry, &bad) < 0)
		git_error_clear();
	return !bad;
}

static int entry_cmp(const void *a, const void *b)
{
	return strcmp(((const struct bundle_entry *)a)->name, ((const struct bundle_entry *)b)->name);
}

int folder_bundle(struct git *g, git_tree *t, struct buf *out)
{
	struct collect c = { .g = g };

	if (t && git_tree_walk(t, GIT_TREEWALK_PRE, collect_entry, &c) < 0)
		git_error_clear();
	/* git orders a folder "name/", a bundle in byte order: they differ for nested folders */
	if (!c.bad && c.n)
		qsort(c.v, c.n, sizeof(*c.v), entry_cmp);
	if (!c.bad)
		bundle_write(c.v, c.n, out);
	for (size_t i = 0; i < c.n; i++)
		git_blob_free(c.blobs[i]);
	free(c.blobs);
	return c.bad ? -1 : 0;
}

/* ---- the outputs the clone holds ----------------------------------------- */

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libgit2(void)
{
	git_libgit2_init();	/* plan and bundle readers may come before any clone is opened */
}

struct held {
	struct hash output;
	const char *commit, *folder;	/* arena */
};

static struct {
	struct held *v;
	size_t n;
	const char *statedir;
	pthread_mutex_t lock;	/* render and sync workers read bundles */
	unsigned tmp;		/* a temporary file name's number */
	git_repository *repo;	/* lazycache_held's: the plan's thread only */
	git_odb *odb;
} lz = { .lock = PTHREAD_MUTEX_INITIALIZER };

/*
 * A bundle into the cache without fsync: a file cut short by a crash does
 * not hash to its name, and is refused (bundle.h).  Two threads may write
 * one output: each has a temporary name of its own.
 */
static int put_cached(const char *path, const char *data, size_t len)
{
	const char *tmp;
	FILE *f;
	int ok;

	pthread_mutex_lock(&lz.lock);
	tmp = aprintf("%s.tmp%d.%u", path, (int)getpid(), lz.tmp++);
	pthread_mutex_unlock(&lz.lock);
	if (mkdirs(path_dir(path)) < 0 || !(f = fopen(tmp, "wbx")))
		return -1;
	ok = fwrite(data, 1, len, f) == len;
	ok = (fclose(f) == 0) && ok && rename(tmp, path) == 0;
	if (!ok)
		unlink(tmp);
	return ok ? 0 : -1;
}

/* the folder at commit as a bundle into out: 1; 0 when the commit has none (out: the empty bundle); -1 */
static int folder_read(const char *statedir, const char *commit, const char *folder, struct buf *out)
{
	struct git g = { 0 };
	git_oid id;
	git_commit *c = NULL;
	git_tree *root = NULL, *t = NULL;
	git_tree_entry *e = NULL;
	int ret = -1;

	pthread_once(&init_once, init_libgit2);
	g.clone = path_join(statedir, "repo");
	if (git_repository_open_ext(&g.repo, g.clone, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL) == 0 &&
	    git_repository_odb(&g.odb, g.repo) == 0 && git_oid_fromstr(&id, commit) == 0 &&
	    git_commit_lookup(&c, g.repo, &id) == 0 && git_commit_tree(&root, c) == 0) {
		int err = git_tree_entry_bypath(&e, root, folder);
		/* no folder: an empty render, pushed as no folder */
		if (err == GIT_ENOTFOUND ||
		    (err == 0 && git_tree_entry_type(e) == GIT_OBJECT_TREE && git_tree_lookup(&t, g.repo, git_tree_entry_id(e)) == 0))
			ret = folder_bundle(&g, t, out) == 0 ? err != GIT_ENOTFOUND : -1;
	}
	git_error_clear();
	git_tree_free(t);
	git_tree_entry_free(e);
	git_tree_free(root);
	git_commit_free(c);
	git_odb_free(g.odb);
	git_repository_free(g.repo);
	return ret;
}

/*
 * Does folder at commit, in the clone of statedir, hold the bundle of output
 * h?  With put, the bundle is written to the cache as well.  A repository of
 * the calling thread's own (libgit2's rule).
 */
static int folder_is(const char *statedir, const char *commit, const char *folder, struct hash h, int put)
{
	struct buf out = BUF_INIT;
	int ok = folder_read(statedir, commit, folder, &out) >= 0 && hash_eq(hash_bytes(out.s, out.len), h) &&
		 (!put || put_cached(bundle_path(statedir, h), out.s, out.len) == 0);

	buf_release(&out);
	return ok;
}

int lazycache_folder(const char *statedir, const char *commit, const char *gitpath, struct hash *h)
{
	struct buf out = BUF_INIT;
	const char *f = norm_path(gitpath);
	int ret = f && commit && strlen(commit) == 40 ? folder_read(statedir, commit, f, &out) : -1;

	*h = (struct hash){ 0, 0 };
	if (ret == 1) {
		*h = hash_bytes(out.s, out.len);
		if (put_cached(bundle_path(statedir, *h), out.s, out.len) < 0)
			ret = -1;
	}
	buf_release(&out);
	return ret;
}

/* bundle_read's hook: the bundle of output h written from the clone; 0, or -1 when it holds none */
static int fetch(const char *statedir, struct hash h)
{
	struct held want = { 0 };

	pthread_mutex_lock(&lz.lock);
	for (size_t i = 0; i < lz.n && !want.commit; i++)
		if (hash_eq(lz.v[i].output, h))
			want = lz.v[i];
	pthread_mutex_unlock(&lz.lock);
	if (!want.commit || !lz.statedir || strcmp(statedir, lz.statedir))
		return -1;
	return folder_is(statedir, want.commit, want.folder, h, 1) ? 0 : -1;
}

int lazycache_holds(const char *statedir, const char *commit, const char *gitpath, struct hash output)
{
	const char *f = norm_path(gitpath);
	return f && commit && strlen(commit) == 40 && folder_is(statedir, commit, f, output, 0);
}

void lazycache_add(const char *statedir, struct hash output, const char *commit, const char *folder)
{
	pthread_mutex_lock(&lz.lock);
	if (!lz.statedir)
		lz.statedir = astrdup(statedir);
	if (!strcmp(lz.statedir, statedir)) {
		lz.v = agrow(lz.v, lz.n, sizeof(*lz.v));
		lz.v[lz.n++] = (struct held){ output, astrdup(commit), astrdup(folder) };
	}
	pthread_mutex_unlock(&lz.lock);
	bundle_on_missing(fetch);
}

static void close_repo(void)
{
	git_odb_free(lz.odb);
	lz.odb = NULL;
	git_repository_free(lz.repo);
	lz.repo = NULL;
}

int lazycache_held(struct planner *pl, const struct step *s, struct hash output)
{
	struct pushed p;
	const char *f = norm_path(s->gitpath);
	git_oid id;

	if (!f || !state_pushed(pl->st, pushed_key(pl, s->gitpath), &p) || !hash_eq(p.output, output) || !p.commit ||
	    strlen(p.commit) != 40 || git_oid_fromstr(&id, p.commit) < 0)
		return 0;
	if (!lz.repo) {
		pthread_once(&init_once, init_libgit2);
		if (git_repository_open_ext(&lz.repo, path_join(pl->statedir, "repo"),
					    GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL) < 0 ||
		    git_repository_odb(&lz.odb, lz.repo) < 0) {
			git_error_clear();
			git_repository_free(lz.repo);
			lz.repo = NULL;
			lz.odb = NULL;
			return 0;
		}
		atexit(close_repo);
	}
	/*
	 * the commit, not the folder: what the state records as pushed there was written there, or
	 * taken from the keys index, and fetch checks the folder against output before it is read
	 */
	if (!git_odb_exists(lz.odb, &id))
		return 0;
	lazycache_add(pl->statedir, output, p.commit, f);
	return 1;
}
