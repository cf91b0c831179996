/*
 * gitpack.c - the objects a push adds: blobs from the bundles, an entry at
 * a time, into libgit2's in-memory object store (mempack), and packed from
 * there as one packfile into the clone (and a local remote) when the push
 * needs them on disk, or every FLUSH_BYTES so a big folder never sits in
 * memory whole.  gitops.c builds the trees and commits over them.
 */
#include <string.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "render/bundle.h"
#include "git/gitremote.h"
#include "base/intr.h"
#include "base/util.h"

/* note a tree or commit just written (to the mempack) */
void track(struct git *g, const git_oid *id)
{
	g->roots = xrealloc(g->roots, (g->nroots + 1) * sizeof(*g->roots));
	g->roots[g->nroots++] = *id;
	g->unflushed = 1;
}

/*
 * Is this object new?  For a local remote: the remote lacks it (the clone
 * may hold objects the remote lost or never had, if its URL changed).
 * Otherwise: it is in the mempack.  What an object that is not new reaches
 * is not new either (git's connectivity invariant).
 */
static int is_new(struct git *g, git_odb *remote, const git_oid *id)
{
	if (remote)
		return !git_odb_exists_ext(remote, id, GIT_ODB_LOOKUP_NO_REFRESH);
	return g->mempack->exists(g->mempack, id);
}

/* insert id and what it reaches into pb, as far as the objects are new */
static int pack_new(struct git *g, git_odb *remote, git_packbuilder *pb, const git_oid *id)
{
	git_object *obj = NULL;
	int err;

	if (!is_new(g, remote, id))
		return 0;
	if ((err = git_packbuilder_insert(pb, id, NULL)) < 0 || (err = git_object_lookup(&obj, g->repo, id, GIT_OBJECT_ANY)) < 0)
		return err;
	if (git_object_type(obj) == GIT_OBJECT_COMMIT) {
		err = pack_new(g, remote, pb, git_commit_tree_id((git_commit *)obj));
	} else if (git_object_type(obj) == GIT_OBJECT_TREE) {
		const git_tree *t = (const git_tree *)obj;
		for (size_t i = 0, n = git_tree_entrycount(t); i < n && err >= 0; i++) {
			const git_tree_entry *e = git_tree_entry_byindex(t, i);
			if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
				err = pack_new(g, remote, pb, git_tree_entry_id(e));
			else if (git_tree_entry_type(e) == GIT_OBJECT_BLOB && is_new(g, remote, git_tree_entry_id(e)))
				err = git_packbuilder_insert(pb, git_tree_entry_id(e), NULL);
		}
	}
	git_object_free(obj);
	return err;
}

/* packing stops at SIGINT: nothing has gone to the remote yet (issue 12 #10) */
static int pack_progress(int stage, uint32_t cur, uint32_t total, void *p) { return interrupted() ? -1 : 0; }

int flush_objects(struct git *g)
{
	git_buf pack = { 0 };
	git_indexer_progress stats = { 0 };
	git_odb *odbs[2] = { g->odb, NULL };
	git_packbuilder *pb = NULL;
	int err;

	if (!g->mempack || !g->unflushed)
		return 0;
	/*
	 * A local remote takes the same pack (its push is then a ref update,
	 * push_local).  The clone keeps its own copy: its refs must not depend
	 * on objects the remote may garbage-collect.
	 */
	if (g->local && (err = git_repository_odb(&odbs[1], g->local)) < 0)
		return gerror(g, err, "cannot open the git remote %s", g->shown);
	/*
	 * Not git_mempack_dump: it packs only what its commits reach, and a
	 * flush may come before any commit (a ref update after the folder
	 * trees were built).  The roots written since the last flush, and what
	 * they reach inside the mempack, are exactly the new objects.
	 */
	if ((err = git_packbuilder_new(&pb, g->repo)) >= 0) {
		if (odbs[1])
			git_odb_refresh(odbs[1]);	/* once, so that NO_REFRESH lookups see every pack */
		git_packbuilder_set_callbacks(pb, pack_progress, NULL);
		for (size_t i = 0; i < g->nblobs && err >= 0; i++)	/* a big folder's blobs so far */
			if (is_new(g, odbs[1], &g->blobs[i]))
				err = git_packbuilder_insert(pb, &g->blobs[i], NULL);
		for (size_t i = 0; i < g->nroots && err >= 0; i++)
			err = interrupted() ? -1 : pack_new(g, odbs[1], pb, &g->roots[i]);
		if (err >= 0)
			err = interrupted() ? -1 : git_packbuilder_write_buf(&pack, pb);
		git_packbuilder_free(pb);
	}
	if (err < 0 && interrupted())
		error("interrupted while packing the new objects; nothing was pushed");
	else if (err < 0)
		gerror(g, err, "cannot pack the new objects");
	for (int i = 0; i < 2 && odbs[i] && err >= 0; i++) {
		git_odb_writepack *wp = NULL;
		if ((err = git_odb_write_pack(&wp, odbs[i], NULL, NULL)) < 0 ||
		    (err = wp->append(wp, pack.ptr, pack.size, &stats)) < 0 ||
		    (err = wp->commit(wp, &stats)) < 0)
			gerror(g, err, "cannot write the new objects to %s", i ? g->shown : g->clone);
		if (wp)
			wp->free(wp);
	}
	git_odb_free(odbs[1]);
	git_buf_dispose(&pack);
	if (err >= 0) {
		git_mempack_reset(g->mempack);
		g->unflushed = 0;
		g->newbytes = 0;
		g->nroots = 0;
		/* the clone's odb looks for the new pack now, not on its next miss */
		if ((err = git_odb_refresh(g->odb)) < 0)
			gerror(g, err, "cannot read the new objects in %s", g->clone);
	}
	return err < 0 ? -1 : 0;
}

/*
 * A blob straight into the mempack: git_odb_write would first look for it
 * in every pack (and rescan the pack folders on each miss), which for
 * 200,000 new blobs costs more than writing them.  A blob the repository
 * already has is stored again in this run's pack, harmlessly.
 */
static int put_blob(struct git *g, const char *data, size_t len, git_oid *id)
{
	int err = git_odb_hash(id, data, len, GIT_OBJECT_BLOB);
	if (err < 0 || (err = g->mempack->write(g->mempack, id, data, len, GIT_OBJECT_BLOB)) < 0)
		return err;
	g->newbytes += len;
	g->unflushed = 1;
	return 0;
}

/*
 * The mempack holds what a push adds until it is packed, so a folder of
 * 100 MB would be 100 MB in memory (issue 10).  Past FLUSH_BYTES the
 * folder's blobs so far are packed (flush_objects) and the mempack emptied:
 * a push holds at most about that much new data at once.
 */
#define FLUSH_BYTES ((size_t)16 << 20)

static int flush_if_big(struct git *g, git_oid *ids, size_t from, size_t to)
{
	int r;

	if (g->newbytes < FLUSH_BYTES)
		return 0;
	g->blobs = ids + from;
	g->nblobs = to - from;
	r = flush_objects(g);
	g->blobs = NULL;
	g->nblobs = 0;
	return r < 0 ? -1 : 1;
}

/* the tree of one package folder, from its bundle, an entry at a time; *empty when it has no file */
int folder_tree(struct git *g, const char *file, git_oid *out, int *empty)
{
	struct bundle_stream bs;
	git_tree_update *u = NULL;
	git_oid *ids = NULL;
	char **names = NULL;
	size_t n = 0, cap = 0, flushed = 0;
	const char *name, *data;
	size_t len;
	int err = 0, r, nest = 0;

	if (bundle_open(&bs, file) < 0)
		return -1;
	while ((r = bundle_next(&bs, &name, &data, &len)) > 0) {
		if (n == cap) {
			cap = cap ? cap * 2 : 64;
			ids = xrealloc(ids, cap * sizeof(*ids));
			names = xrealloc(names, cap * sizeof(*names));
		}
		names[n] = xstrdup(name);
		nest |= !!strchr(name, '/');
		if ((err = put_blob(g, data, len, &ids[n])) < 0)
			break;
		n++;
		if ((r = flush_if_big(g, ids, flushed, n)) < 0)
			break;
		if (r)
			flushed = n;
	}
	bundle_close(&bs);
	if (r < 0 || err < 0)
		goto done;
	*empty = n == 0;
	if (!n)
		goto done;
	if (nest) {
		/* names with folders (argocd-app packages): build the subtrees too */
		u = xcalloc(n, sizeof(*u));
		for (size_t i = 0; i < n; i++)
			u[i] = (git_tree_update){ GIT_TREE_UPDATE_UPSERT, ids[i], GIT_FILEMODE_BLOB, names[i] };
		if ((err = git_tree_create_updated(out, g->repo, NULL, n, u)) >= 0)
			track(g, out);
	} else {
		git_treebuilder *tb = NULL;
		if ((err = git_treebuilder_new(&tb, g->repo, NULL)) >= 0) {
			for (size_t i = 0; i < n && err >= 0; i++)
				err = git_treebuilder_insert(NULL, tb, names[i], &ids[i], GIT_FILEMODE_BLOB);
			if (err >= 0 && (err = git_treebuilder_write(out, tb)) >= 0)
				track(g, out);
		}
		git_treebuilder_free(tb);
	}
done:
	if (err < 0)
		gerror(g, err, "cannot store %s in %s", file, g->clone);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(ids);
	free(u);
	return err < 0 || r < 0 ? -1 : 0;
}
