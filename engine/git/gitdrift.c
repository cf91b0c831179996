/*
 * gitdrift.c - changes made outside idpmake in the folders it owns
 * (gitops.h "drift"; issue 8 §6).
 *
 * idpmake's clone keeps what idpmake last left in each folder
 * (refs/idpmake/known/BRANCH, gitops.c remember()); its parent is the remote
 * commit that held the same folders.  A folder whose content on the branch
 * differs from the known tree, and is not what a push that landed wrote
 * (refs/idpmake/pending/BRANCH), was changed by another hand; the commits
 * that did are those after the known tree's parent that changed the folder.
 *
 * gitops_drift reports them for plan and diff; gitops.c's conflicts() uses
 * the same commits to refuse an up that would write over them, or, for the
 * folders `up --overwrite` names (gitops_set_owners), to name them in the
 * commit that writes over them.
 *
 * Reading the remote besides: gitops_descends (whether a revision Argo CD
 * reports comes after a commit, with a folder the same) and gitops_read
 * (a folder's files on the branch).
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <git2.h>

#include "base/buf.h"
#include "git/gitdrift.h"
#include "git/gitremote.h"
#include "git/lazycache.h"
#include "base/util.h"

#define WALK_MAX 2000		/* commits searched for the ones that changed a folder */
#define SHOW_MAX 10		/* commits named per folder */

static const struct gitops_owner *owners;
static size_t nowners;

void gitops_set_owners(const struct gitops_owner *v, size_t n)
{
	owners = v;
	nowners = n;
}

const struct gitops_owner *drift_owner(const char *folder)
{
	for (size_t i = 0; i < nowners; i++)
		if (owners[i].folder && !strcmp(owners[i].folder, folder))
			return &owners[i];
	return NULL;
}

/*
 * The commits from `tip` back to `since` (excluded; NULL: the whole history)
 * that changed folder `path` against their first parent, newest first: at
 * most SHOW_MAX, among the WALK_MAX newest.
 */
int drift_commits(struct git *g, const git_oid *tip, const git_oid *since, const char *path,
		    struct gitops_commit **out, size_t *n)
{
	git_revwalk *walk = NULL;
	git_oid id;
	int err, visited = 0;

	*out = NULL;
	*n = 0;
	if ((err = git_revwalk_new(&walk, g->repo)) < 0 ||
	    (err = git_revwalk_sorting(walk, GIT_SORT_TOPOLOGICAL | GIT_SORT_TIME)) < 0 ||
	    (err = git_revwalk_push(walk, tip)) < 0) {
		git_revwalk_free(walk);
		return gerror(g, err, "cannot read the history of '%s'", g->branch);
	}
	if (since && git_revwalk_hide(walk, since) < 0)
		git_error_clear();	/* gone (a rewritten branch): search from the tip */
	while (*n < SHOW_MAX && visited++ < WALK_MAX && !git_revwalk_next(&id, walk)) {
		git_commit *c = NULL, *parent = NULL;
		git_tree *t = NULL, *pt = NULL;
		git_oid now, before;
		const git_signature *a;
		if (git_commit_lookup(&c, g->repo, &id) < 0 || git_commit_tree(&t, c) < 0 ||
		    (git_commit_parentcount(c) && (git_commit_parent(&parent, c, 0) < 0 || git_commit_tree(&pt, parent) < 0)) ||
		    entry_at(g, t, path, &now) < 0 || entry_at(g, pt, path, &before) < 0) {
			git_error_clear();
		} else if (!git_oid_equal(&now, &before)) {
			a = git_commit_author(c);
			*out = agrow(*out, *n, sizeof(**out));
			git_oid_tostr((*out)[*n].id, sizeof((*out)[*n].id), &id);
			/* anyone who can push wrote them: printed, and put in commit messages, escaped */
			(*out)[*n].author = term_safe(aprintf("%s <%s>", a->name, a->email));
			(*out)[(*n)++].summary = term_safe(astrdup(git_commit_summary(c) ? git_commit_summary(c) : ""));
		}
		git_tree_free(pt);
		git_tree_free(t);
		git_commit_free(parent);
		git_commit_free(c);
	}
	git_error_clear();
	git_revwalk_free(walk);
	return 0;
}

/* "  FOLDER: ID AUTHOR "SUMMARY"" lines; ids shortened when `full` is 0 */
void drift_describe(struct buf *b, const char *folder, int removed, const struct gitops_commit *v, size_t n, int full)
{
	if (!n)
		buf_addf(b, "\n  %s: %s outside idpmake", folder, removed ? "removed" : "changed");
	for (size_t i = 0; i < n; i++)
		buf_addf(b, "\n  %s: %.*s %s \"%s\"", folder, full ? 40 : 7, v[i].id, v[i].author, v[i].summary);
}

/* message with a paragraph naming what it overwrote, before its trailer paragraph */
const char *drift_message(const char *message, const struct buf *over)
{
	const char *cut;
	size_t at;

	if (!over->len)
		return message;
	message = message && *message ? message : "idpmake";
	cut = strstr(message, "\n\n");
	for (const char *p = cut; p; p = strstr(p + 2, "\n\n"))
		cut = p;
	at = cut ? (size_t)(cut - message) : strlen(message);
	return aprintf("%.*s\n\nOverwrites changes made outside idpmake (up --overwrite):%s%s", (int)at, message,
		       over->s, cut ? cut : "\n");
}

int gitops_drift(const struct gitops_opts *o, int fetch_first, const char *const *folders, size_t n,
		 struct gitops_drift **out)
{
	struct git g;
	git_commit *k = NULL, *pend = NULL, *tipc = NULL;
	git_tree *known = NULL, *pending = NULL, *root = NULL;
	const git_oid *since = NULL;
	const char *local;
	git_oid tip;
	struct stat st;
	int have = 0, err = 0, rc = -1, nd = 0;

	*out = NULL;
	/* the embedded default remote, not created yet: nothing pushed */
	if (fetch_first && o->create_remote && o->remote && (local = remote_local_path(o->remote)) && stat(local, &st))
		return 0;
	switch (clone_open(&g, o, fetch_first)) {
	case 1:
		rc = 0;
		/* fallthrough */
	case -1:
		goto out;
	}
	if ((fetch_first ? remote_fetch(&g, &tip, &have) : clone_tracking_tip(&g, &tip, &have)) < 0 ||
	    clone_ref_commit(&g, g.known, &k) < 0 || clone_ref_commit(&g, g.pending, &pend) < 0)
		goto out;
	if (!k) {
		rc = 0;		/* idpmake never pushed from this clone */
		goto out;
	}
	if ((err = git_commit_tree(&known, k)) < 0 || (pend && (err = git_commit_tree(&pending, pend)) < 0) ||
	    (have && ((err = git_commit_lookup(&tipc, g.repo, &tip)) < 0 || (err = git_commit_tree(&root, tipc)) < 0))) {
		gerror(&g, err, "cannot read the folders of '%s' in %s", g.branch, g.clone);
		goto out;
	}
	if (git_commit_parentcount(k) == 1)
		since = git_commit_parent_id(k, 0);
	for (size_t i = 0; i < n; i++) {
		const char *p = norm_path(folders[i]);
		git_oid was, now, pushed;
		int found;
		struct gitops_drift *d;
		if (!p || (found = entry_at(&g, known, p, &was)) < 0 || entry_at(&g, root, p, &now) < 0 ||
		    entry_at(&g, pending, p, &pushed) < 0)
			goto out;
		/* not idpmake's, as idpmake left it, or what a push that landed wrote */
		if (!found || git_oid_equal(&was, &now) || (pending && git_oid_equal(&pushed, &now)))
			continue;
		*out = agrow(*out, (size_t)nd, sizeof(**out));
		d = &(*out)[nd++];
		memset(d, 0, sizeof(*d));
		d->folder = p;
		d->removed = git_oid_is_zero(&now);
		if (have && drift_commits(&g, &tip, since, p, &d->commits, &d->ncommits) < 0)
			goto out;
	}
	rc = nd;
out:
	git_tree_free(root);
	git_tree_free(pending);
	git_tree_free(known);
	git_commit_free(tipc);
	git_commit_free(pend);
	git_commit_free(k);
	clone_close(&g);
	return rc;
}

int gitops_descends(const struct gitops_opts *o, const char *rev, const char *base, const char *folder)
{
	struct git g;
	git_oid r, b;
	int rc = -1;

	if (git_oid_fromstr(&r, rev) < 0 || git_oid_fromstr(&b, base) < 0)
		return -1;
	if (git_oid_equal(&r, &b))
		return 1;
	if (clone_open(&g, o, 0) == 0) {
		git_commit *rc_ = NULL, *bc = NULL;
		git_tree *rt = NULL, *bt = NULL;
		git_oid rf, bf;
		if (git_commit_lookup(&rc_, g.repo, &r) == 0 && git_commit_lookup(&bc, g.repo, &b) == 0) {
			rc = git_graph_descendant_of(g.repo, &r, &b) == 1;
			/* and the folder is what it was at base (nobody changed it since) */
			if (rc == 1 && folder && *folder &&
			    (git_commit_tree(&rt, rc_) < 0 || git_commit_tree(&bt, bc) < 0 ||
			     entry_at(&g, rt, folder, &rf) < 0 || entry_at(&g, bt, folder, &bf) < 0 ||
			     !git_oid_equal(&rf, &bf)))
				rc = 0;
		}
		git_tree_free(rt);
		git_tree_free(bt);
		git_commit_free(bc);
		git_commit_free(rc_);
	}
	git_error_clear();
	clone_close(&g);
	return rc;
}

/* gitops_read's walk: each blob of the folder's subtrees, with its path in the folder */
struct read_walk {
	struct git *g;
	const char *folder;
	int (*fn)(void *ctx, const char *name, const char *data, size_t len);
	void *ctx;
	unsigned long long total;	/* bytes loaded so far (GITOPS_READ_FOLDER_CAP) */
	int rc;
};

static int read_entry(const char *root, const git_tree_entry *e, void *payload)
{
	struct read_walk *w = payload;
	const char *name;
	git_blob *blob = NULL;
	long long size;
	int err;

	if (git_tree_entry_type(e) != GIT_OBJECT_BLOB)
		return 0;	/* a tree is walked into; a submodule has no content here */
	name = aprintf("%s%s", root, git_tree_entry_name(e));
	/* the size from the header, before anything is loaded: a file over a cap is named, never read */
	if ((size = git_object_size(w->g, git_tree_entry_id(e))) < 0) {
		w->rc = error("cannot read '%s/%s' of '%s': the object is missing from the clone", w->folder, name,
			      w->g->branch);
		return -1;
	}
	if ((unsigned long long)size > GITOPS_READ_FILE_CAP ||
	    w->total + (unsigned long long)size > GITOPS_READ_FOLDER_CAP) {
		w->rc = w->fn(w->ctx, name, NULL, (size_t)size);
		return w->rc ? -1 : 0;
	}
	w->total += (unsigned long long)size;
	if ((err = git_blob_lookup(&blob, w->g->repo, git_tree_entry_id(e))) < 0) {
		w->rc = gerror(w->g, err, "cannot read '%s/%s' of '%s'", w->folder, name, w->g->branch);
		return -1;
	}
	w->rc = w->fn(w->ctx, name, git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
	git_blob_free(blob);
	return w->rc ? -1 : 0;
}

int gitops_read(const struct gitops_opts *o, int fetch_first, const char *path,
		int (*fn)(void *ctx, const char *name, const char *data, size_t len),
		void *ctx, char tip[41])
{
	struct git g;
	git_oid id;
	git_commit *commit = NULL;
	git_tree *root = NULL, *folder = NULL;
	git_tree_entry *e = NULL;
	struct read_walk w;
	const char *p, *local;
	struct stat st;
	int have = 0, err = 0, rc = -1;

	tip[0] = 0;
	if (!(p = norm_path(path)))
		return -1;
	/* the embedded default remote, not created yet: empty */
	if (fetch_first && o->create_remote && o->remote && (local = remote_local_path(o->remote)) && stat(local, &st))
		fetch_first = 0;
	switch (clone_open(&g, o, fetch_first)) {
	case 1:
		rc = 0;
		/* fallthrough */
	case -1:
		goto out;
	}
	if ((fetch_first ? remote_fetch(&g, &id, &have) : clone_tracking_tip(&g, &id, &have)) < 0)
		goto out;
	if (!have) {
		rc = 0;
		goto out;
	}
	git_oid_tostr(tip, 41, &id);
	if ((err = git_commit_lookup(&commit, g.repo, &id)) < 0 ||
	    (err = git_commit_tree(&root, commit)) < 0) {
		gerror(&g, err, "cannot read the remote's tip of '%s'", g.branch);
		goto out;
	}
	err = git_tree_entry_bypath(&e, root, p);
	if (err == GIT_ENOTFOUND || (!err && git_tree_entry_type(e) != GIT_OBJECT_TREE)) {
		git_error_clear();
		rc = 0;
		goto out;
	}
	if (err < 0 || (err = git_tree_lookup(&folder, g.repo, git_tree_entry_id(e))) < 0) {
		gerror(&g, err, "cannot read '%s' of '%s'", p, g.branch);
		goto out;
	}
	/*
	 * Pre-order over the subtrees: git sorts a tree's entries with a
	 * subtree's name followed by '/', so the paths come in byte order, as
	 * a bundle's names do.
	 */
	w = (struct read_walk){ &g, p, fn, ctx, 0, 0 };
	if ((err = git_tree_walk(folder, GIT_TREEWALK_PRE, read_entry, &w)) < 0 && !w.rc)
		w.rc = gerror(&g, err, "cannot read '%s' of '%s'", p, g.branch);
	rc = w.rc;
out:
	git_tree_entry_free(e);
	git_tree_free(folder);
	git_tree_free(root);
	git_commit_free(commit);
	clone_close(&g);
	return rc;
}
