/*
 * gitops.c - the GitOps repository through libgit2 (gitops.h, engine.md "Git").
 *
 * STATE/repo is a bare clone.  Its remote "origin" records o->remote (with
 * any password in the URL left out: secrets are never written to the
 * state); the network itself goes through an in-memory remote with the URL
 * as given.  Only refs/heads/BRANCH is fetched, into
 * refs/remotes/origin/BRANCH, and only when the clone lacks its commit.  A
 * local remote (path or file://, as the embedded default) lends its objects
 * to the clone (objects/info/alternates), so nothing is copied from it.
 *
 * One push, as a state diagram:
 *
 *     fetch --> did another hand change a folder of this run? --yes--> fail, naming them
 *       ^                |no
 *       |         build the tree on the tip --> same as the tip's? --yes--> done, no commit
 *       |                |no
 *       |         commit (parent: the tip), push refs/heads/BRANCH (never forced)
 *       |                |
 *       |        accepted: done          refused: is the tip unchanged? --yes--> fail with
 *       |                                            |no                      the remote's reason
 *       +--------------------------------------------+  (at most MAX_RETRIES times)
 *
 * "Another hand": the clone keeps what idpmake last left in each folder
 * (refs/idpmake/known/BRANCH, see remember()).  A folder that differs from
 * it, and does not already hold what this run writes, was changed by someone
 * else, before this run or racing its push.  The failure names the commits
 * that did and the two ways out (revert them, or up --overwrite); a folder
 * `up --overwrite` names is written over, and the commit names the commits
 * it replaces (gitdrift.c).
 *
 * Invariants:
 *   1. Nothing is forced: a refused push leaves the remote as it was, and a
 *      remote that moved is never overwritten.
 *   2. A commit's tree never equals its parent's: a change the remote already
 *      holds (a previous run's push landed but its record did not) makes no
 *      commit, and the result names the remote tip.
 *   3. Only the changed folders' trees are built (git_tree_create_updated
 *      reads and writes the trees on their paths, nothing else), so a
 *      one-package change in a huge repository hashes one package.
 *   4. Credentials come from the URL, IDPMAKE_GIT_TOKEN / IDPMAKE_GIT_USERNAME
 *      or ssh-agent, each offered once per connection, so a wrong one fails
 *      instead of looping; no message ever shows a password or a token.
 *   5. The known folders change only with what the remote holds: after the
 *      push landed (refs/idpmake/pending/BRANCH until then, so a run that
 *      died after the remote took its push is recovered by the next), or when
 *      the remote already held the content.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "git/gitops.h"
#include "git/gitdrift.h"
#include "git/gitremote.h"
#include "base/intr.h"
#include "git/remotekeys.h"
#include "base/util.h"

/* tests only */
void (*gitops_test_after_fetch)(int attempt);

/* ---- trees and commits -------------------------------------------------- */

/* does repository path f equal, lie inside or lie above folder p? */
static int overlaps(const char *f, const char *p)
{
	size_t lf = strlen(f), lp = strlen(p);

	if (lf == lp)
		return !strcmp(f, p);
	if (lf > lp)
		return !strncmp(f, p, lp) && f[lp] == '/';
	return !strncmp(p, f, lf) && p[lf] == '/';
}

/* byte order with '/' first, so a folder's contents follow it directly */
static int path_cmp(const void *a, const void *b)
{
	const unsigned char *p = (const unsigned char *)((const struct change *)a)->path;
	const unsigned char *q = (const unsigned char *)((const struct change *)b)->path;

	while (*p && *p == *q)
		p++, q++;
	return (*p == '/' ? 1 : *p ? *p + 1 : 0) - (*q == '/' ? 1 : *q ? *q + 1 : 0);
}

/*
 * The tree of `base` (NULL: none) with the changes applied; *same when it
 * equals base.  Only entries that differ are updated, so
 * git_tree_create_updated reads and writes just the trees on their paths.
 */
static int apply(struct git *g, git_tree *base, const struct change *c, size_t n, git_oid *out, int *same)
{
	git_tree_update *u = xcalloc(n ? n : 1, sizeof(*u));
	size_t nu = 0;
	git_oid cur;
	int found, err = 0;

	for (size_t i = 0; i < n; i++) {
		if ((found = entry_at(g, base, c[i].path, &cur)) < 0) {
			free(u);
			return -1;
		}
		if (c[i].remove ? !found : found && git_oid_equal(&cur, &c[i].tree))
			continue;
		u[nu].action = c[i].remove ? GIT_TREE_UPDATE_REMOVE : GIT_TREE_UPDATE_UPSERT;
		u[nu].id = c[i].tree;
		u[nu].filemode = c[i].blob ? GIT_FILEMODE_BLOB : GIT_FILEMODE_TREE;
		u[nu].path = c[i].path;
		nu++;
	}
	*same = nu == 0;
	if (nu && (err = git_tree_create_updated(out, g->repo, base, nu, u)) >= 0) {
		track(g, out);
		if (base)
			*same = git_oid_equal(out, git_tree_id(base));
	}
	free(u);
	return err < 0 ? gerror(g, err, "cannot build the new tree of '%s'", g->branch) : 0;
}

/* what the push knows of where its folders came from */
struct origin {
	const git_oid *known_at;	/* the remote commit idpmake's known folders match (NULL: none) */
	git_oid first;			/* the tip this run first fetched */
	int have_first;
	const int *owned;		/* owned[i]: change i's folder is in the known tree */
	struct buf overwritten;		/* up --overwrite: what the commit replaces, for its message */
};

/*
 * Did someone else change one of the changes' folders?  A folder may differ
 * from what idpmake last left there only when it already holds what this run
 * writes (a previous run's push, say).  A folder idpmake never wrote is taken
 * as this run's first fetch found it, so a push racing ours is caught too.
 * A folder `up --overwrite` names is written over, and its commits noted.
 * -1 after naming the folders, the commits and the two ways out.
 */
static int conflicts(struct git *g, git_tree *base, const git_oid *tip, struct change *c, size_t n, int retry,
		     struct origin *og)
{
	struct buf list = BUF_INIT, lines = BUF_INIT, targets = BUF_INIT;
	char shortid[8] = "";
	git_oid cur;

	buf_reset(&og->overwritten);
	for (size_t i = 0; i < n; i++) {
		const struct gitops_owner *ow;
		struct gitops_commit *v = NULL;
		size_t nv = 0;
		const git_oid *since;
		if (entry_at(g, base, c[i].path, &cur) < 0)
			goto fail;
		if (!c[i].seen) {
			c[i].seen = 1;
			c[i].base = cur;
			continue;
		}
		if (git_oid_equal(&cur, &c[i].base) || git_oid_equal(&cur, &c[i].tree))
			continue;
		since = og->owned[i] ? og->known_at : og->have_first ? &og->first : NULL;
		if (tip && drift_commits(g, tip, since, c[i].path, &v, &nv) < 0)
			goto fail;
		ow = drift_owner(c[i].path);
		if (ow && ow->overwrite) {
			drift_describe(&og->overwritten, c[i].path, git_oid_is_zero(&cur), v, nv, 1);
			continue;
		}
		buf_addf(&list, "%s%s", list.len ? ", " : "", c[i].path);
		drift_describe(&lines, c[i].path, git_oid_is_zero(&cur), v, nv, 0);
		buf_addf(&targets, " %s", ow && ow->target ? ow->target : c[i].path);
	}
	if (tip)
		git_oid_tostr(shortid, sizeof(shortid), tip);
	if (!list.len) {
		if (retry && g->o->verbose)
			fprintf(stderr, "%s: the remote branch '%s' moved to %s, not in this run's folders:"
				" rebuilding the commit on it\n", argv0, g->branch, shortid);
		buf_release(&lines);
		buf_release(&targets);
		return 0;
	}
	if (tip)
		error("the remote branch '%s' moved to %s and changed %s, which this run also changes:%s\n"
		      "revert those changes in the GitOps repository, or replace them with this run's render:"
		      " idpmake up --overwrite%s", g->branch, shortid, list.s, lines.s, targets.s);
	else
		error("the remote branch '%s' was deleted, and with it %s, which this run also changes;"
		      " restore the branch, or write the folders again: idpmake up --overwrite%s",
		      g->branch, list.s, targets.s);
fail:
	buf_release(&list);
	buf_release(&lines);
	buf_release(&targets);
	return -1;
}

static int make_commit(struct git *g, const git_oid *tree_id, git_commit *parent,
		       const char *message, git_oid *out)
{
	const char *name = g->o->author_name && *g->o->author_name ? g->o->author_name : "idpmake";
	const char *email = g->o->author_email && *g->o->author_email ? g->o->author_email : "idpmake@localhost";
	const git_commit *parents[1] = { parent };
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	struct buf msg = BUF_INIT;
	int err;

	buf_adds(&msg, message && *message ? message : "idpmake");
	if (msg.s[msg.len - 1] != '\n')
		buf_addc(&msg, '\n');
	if ((err = git_signature_now(&sig, name, email)) < 0 ||
	    (err = git_tree_lookup(&tree, g->repo, tree_id)) < 0 ||
	    (err = git_commit_create(out, g->repo, NULL, sig, sig, NULL, msg.s, tree, parent ? 1 : 0, parents)) < 0)
		gerror(g, err, "cannot make the commit");
	else
		track(g, out);
	git_signature_free(sig);
	git_tree_free(tree);
	buf_release(&msg);
	return err < 0 ? -1 : 0;
}

/*
 * What idpmake left in the folders is a tree of its own, kept in the clone
 * as refs/idpmake/known/BRANCH: a commit holding the known tree, whose
 * parent is the remote commit that holds the same folders.  Before a push,
 * the known tree this push makes goes to refs/idpmake/pending/BRANCH; it
 * becomes known once the push landed, in this run or, if this one died
 * after the remote took the push, in the next (recover).
 */
static int remember(struct git *g, git_tree *known, const struct change *ch, size_t n,
		    git_commit *remote, const char *name)
{
	git_oid tree_id, id;
	int same;

	if (apply(g, known, ch, n, &tree_id, &same) < 0)
		return -1;
	if (same)
		return 0;
	return make_commit(g, &tree_id, remote, KNOWN_MSG, &id) < 0 ? -1 : clone_set_ref(g, name, &id);
}

/* pending becomes known when the remote holds its push (tip NULL: the branch is gone) */
static int recover(struct git *g, const git_oid *tip, int landed)
{
	git_commit *k;
	const git_oid *pushed;
	int rc = 0;

	if (clone_ref_commit(g, g->pending, &k) < 0)
		return -1;
	if (!k)
		return 0;
	if (!landed && tip && git_commit_parentcount(k) == 1) {
		pushed = git_commit_parent_id(k, 0);
		landed = git_oid_equal(tip, pushed) || git_graph_descendant_of(g->repo, tip, pushed) == 1;
		git_error_clear();
		if (landed && g->o->verbose)
			fprintf(stderr, "%s: the remote holds the push of a run that died: %s\n",
				argv0, git_oid_tostr_s(pushed));
	}
	if (landed)
		rc = clone_set_ref(g, g->known, git_commit_id(k));
	git_commit_free(k);
	return rc < 0 ? -1 : clone_set_ref(g, g->pending, NULL);
}

/* the known tree, the remote commit it matches (*at), and each change's folder in it */
static int load_known(struct git *g, git_tree **known, git_oid *at, int *have_at, struct change *ch, size_t n)
{
	git_commit *k;
	int err = 0, found;

	*known = NULL;
	*have_at = 0;
	if (clone_ref_commit(g, g->known, &k) < 0)
		return -1;
	if (k && (err = git_commit_tree(known, k)) < 0)
		gerror(g, err, "cannot read %s in %s", g->known, g->clone);
	if (k && git_commit_parentcount(k) == 1) {
		git_oid_cpy(at, git_commit_parent_id(k, 0));
		*have_at = 1;
	}
	git_commit_free(k);
	for (size_t i = 0; i < n && *known && err >= 0; i++) {
		if ((found = entry_at(g, *known, ch[i].path, &ch[i].base)) < 0)
			return -1;
		ch[i].seen = found;
	}
	return err < 0 ? -1 : 0;
}

/*
 * One attempt on the fetched tip: check the folders, build the commit, push.
 * 0 done (r filled in), 1 refused, -1 failed (printed).
 */
static int attempt_push(struct git *g, const git_oid *tip, git_tree *known, struct change *ch, size_t n,
			const char *message, int attempt, struct origin *og, struct gitops_result *r)
{
	git_commit *parent = NULL, *commit = NULL;
	git_tree *base = NULL;
	git_oid tree_id, commit_id;
	int err = 0, same = 1, rc = -1, idx = 0;

	if (tip && ((err = git_commit_lookup(&parent, g->repo, tip)) < 0 ||
		    (err = git_commit_tree(&base, parent)) < 0)) {
		gerror(g, err, "cannot read the remote's tip of '%s'", g->branch);
		goto out;
	}
	/*
	 * The folders first: content the remote holds already makes no commit,
	 * whatever the keys (an input changed, its render did not: early cutoff).
	 * Then ch[n], the keys index merged with the tip's (remotekeys.c), goes
	 * into the commit that changes content.
	 */
	if (conflicts(g, base, tip, ch, n, attempt, og) < 0 || apply(g, base, ch, n, &tree_id, &same) < 0)
		goto out;
	if (!same && (idx = remotekeys_update(g, base, ch, n)) < 0)
		goto out;
	if (idx) {
		/* the index onto the tree just built, not every folder again */
		git_tree *built = NULL;
		if ((err = git_tree_lookup(&built, g->repo, &tree_id)) < 0) {
			gerror(g, err, "cannot read the new tree of '%s'", g->branch);
			goto out;
		}
		err = apply(g, built, ch + n, 1, &tree_id, &same);
		git_tree_free(built);
		same = 0;	/* the folders changed: a commit, whatever the index */
		if (err < 0)
			goto out;
	}
	if (tip)
		git_oid_tostr(r->parent, sizeof(r->parent), tip);
	if (same) {
		/* the remote holds this content already (invariant 2) */
		if (tip)
			git_oid_tostr(r->commit, sizeof(r->commit), tip);
		rc = remember(g, known, ch, n, parent, g->known);
		goto out;
	}
	if (make_commit(g, &tree_id, parent, drift_message(message, &og->overwritten), &commit_id) < 0)
		goto out;
	if ((err = git_commit_lookup(&commit, g->repo, &commit_id)) < 0) {
		gerror(g, err, "cannot read the new commit");
		goto out;
	}
	if (remember(g, known, ch, n, commit, g->pending) < 0)
		goto out;
	if (gitops_test_after_fetch)
		gitops_test_after_fetch(attempt);
	if (interrupted()) {
		error("interrupted before the push; nothing was pushed");
		goto out;
	}
	if ((rc = remote_push(g, &commit_id)) == 0) {
		git_oid_tostr(r->commit, sizeof(r->commit), &commit_id);
		r->made_commit = 1;
		rc = recover(g, NULL, 1);
	}
out:
	git_commit_free(commit);
	git_commit_free(parent);
	git_tree_free(base);
	return rc;
}

/* ---- the interface ------------------------------------------------------ */

/*
 * Lock files a killed run left in a repository (refs/.../X.lock,
 * packed-refs.lock, config.lock, HEAD.lock) make every later ref update
 * fail.  The caller holds idpmake's state lock, so in the clone and in the
 * embedded default remote (both in the state folder) no other writer can
 * exist: every lock is stale.  `age`: only locks at least that old.
 */
static void clear_locks(const char *dir, int age)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);

	while (d && (e = readdir(d))) {
		const char *p;
		struct stat st;
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "objects"))
			continue;
		p = aprintf("%s/%s", dir, e->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && (!strcmp(e->d_name, "refs") || strstr(dir, "/refs")))
			clear_locks(p, age);
		else if (S_ISREG(st.st_mode) && l > 5 && !strcmp(e->d_name + l - 5, ".lock") &&
			 now - st.st_mtime >= age) {
			warn("removing %s, left by an interrupted run", p);
			unlink(p);
		}
	}
	if (d)
		closedir(d);
}

/*
 * Every run adds a pack or two (flush_objects); git would gc.  When a
 * repository holds more than REPACK_AT packs (IDPMAKE_REPACK_AT for
 * tests), what its refs reach is written as one pack and the others are
 * removed.  Only for repositories idpmake owns (its clone, the embedded
 * default remote), under the state lock.
 */
#define REPACK_AT 48

static int pack_names(const char *dir, struct strvec *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".pack"))
			strvec_push(names, e->d_name);
	}
	if (d)
		closedir(d);
	return d ? 0 : -1;
}

static int maybe_repack(struct git *g, git_repository *repo, const char *what)
{
	const char *env = getenv("IDPMAKE_REPACK_AT");
	int at = env && atoi(env) > 0 ? atoi(env) : REPACK_AT, err;
	const char *dir = aprintf("%s/objects/pack", git_repository_path(repo));
	struct strvec old = STRVEC_INIT;
	git_packbuilder *pb = NULL;
	git_revwalk *walk = NULL;
	const char *keep;

	if (pack_names(dir, &old) < 0 || (int)old.n <= at) {
		strvec_clear(&old);
		return 0;
	}
	if (g->o->verbose)
		fprintf(stderr, "%s: %s holds %zu packs: repacking\n", argv0, what, old.n);
	if ((err = git_revwalk_new(&walk, repo)) < 0 || (err = git_revwalk_push_glob(walk, "refs/*")) < 0 ||
	    (err = git_packbuilder_new(&pb, repo)) < 0 || (err = git_packbuilder_insert_walk(pb, walk)) < 0 ||
	    (err = git_packbuilder_write(pb, dir, 0444, NULL, NULL)) < 0) {
		gerror(g, err, "cannot repack %s (it still works, with more packs)", what);
	} else {
		keep = aprintf("pack-%s.pack", git_packbuilder_name(pb));
		for (size_t i = 0; i < old.n; i++) {
			size_t l = strlen(old.v[i]) - 5;
			if (!strcmp(old.v[i], keep))
				continue;
			unlink(aprintf("%s/%.*s.idx", dir, (int)l, old.v[i]));
			unlink(aprintf("%s/%s", dir, old.v[i]));
		}
	}
	git_packbuilder_free(pb);
	git_revwalk_free(walk);
	strvec_clear(&old);
	return err < 0 ? -1 : 0;
}

int gitops_push(const struct gitops_opts *o, const struct gitops_change *c, size_t n,
		const char *message, struct gitops_result *r)
{
	struct git g;
	struct change *ch = NULL;
	git_tree *known = NULL;		/* the folders as idpmake left them */
	git_oid known_at;
	int have_known_at = 0, *owned = NULL;
	struct origin og = { NULL, { { 0 } }, 0, NULL, BUF_INIT };
	char *refused = NULL;		/* why the remote refused the last push */
	char *said = NULL;		/* and what it said then */
	git_oid tip, prev;
	int have = 0, had = 0, rc = -1, st;

	memset(r, 0, sizeof(*r));
	clear_locks(aprintf("%s/repo", o->statedir), 0);
	if (o->create_remote && o->remote && remote_local_path(o->remote))
		clear_locks(remote_local_path(o->remote), 0);	/* in the state folder: idpmake's own */
	if (clone_open(&g, o, 1) < 0)
		goto out;

	/* the folders' trees, once: they do not depend on the tip */
	ch = xcalloc(n + 1, sizeof(*ch));
	for (size_t i = 0; i < n; i++) {
		int empty = 1;
		if (!(ch[i].path = norm_path(c[i].path)))
			goto out;
		if (overlaps(ch[i].path, REMOTEKEYS_DIR)) {
			error("the git folder '%s' is idpmake's own (%s)", ch[i].path, REMOTEKEYS_PATH);
			goto out;
		}
		ch[i].key = c[i].key;
		ch[i].output = c[i].output;
		if (c[i].bundle && folder_tree(&g, c[i].bundle, &ch[i].tree, &empty) < 0)
			goto out;
		ch[i].remove = empty;	/* git holds no empty folder */
		if (empty)
			memset(&ch[i].tree, 0, sizeof(ch[i].tree));
	}
	qsort(ch, n, sizeof(*ch), path_cmp);
	for (size_t i = 1; i < n; i++) {
		if (!strcmp(ch[i].path, ch[i - 1].path)) {
			error("two packages have the git folder '%s'", ch[i].path);
			goto out;
		}
		if (overlaps(ch[i].path, ch[i - 1].path)) {
			error("the git folder '%s' is inside the git folder '%s' of another package",
			      ch[i].path, ch[i - 1].path);
			goto out;
		}
	}

	for (int attempt = 0;; attempt++) {
		if (remote_fetch(&g, &tip, &have) < 0)
			goto out;
		if (!attempt) {
			if (recover(&g, have ? &tip : NULL, 0) < 0 ||
			    load_known(&g, &known, &known_at, &have_known_at, ch, n) < 0)
				goto out;
			owned = xcalloc(n ? n : 1, sizeof(*owned));
			for (size_t i = 0; i < n; i++)
				owned[i] = ch[i].seen;
			og.known_at = have_known_at ? &known_at : NULL;
			og.owned = owned;
			if ((og.have_first = have))
				og.first = tip;
		}
		if (attempt && had == have && (!have || git_oid_equal(&prev, &tip))) {
			remote_print(said);
			error("the remote refused to update the branch '%s': %s", g.branch, refused);
			goto out;
		}
		r->retries = attempt;
		if ((st = attempt_push(&g, have ? &tip : NULL, known, ch, n, message, attempt, &og, r)) <= 0) {
			rc = st;
			goto out;
		}
		free(refused);
		free(said);
		refused = g.refused;
		g.refused = NULL;
		said = buf_detach(&g.said);
		if (o->verbose)
			fprintf(stderr, "%s: the remote refused the push: %s\n", argv0, refused);
		if (attempt == MAX_RETRIES) {
			error("the remote branch '%s' kept moving: %d pushes refused (last: %s); run idpmake up again",
			      g.branch, attempt + 1, refused);
			goto out;
		}
		prev = tip;
		had = have;
	}
out:
	if (rc == 0) {
		/* a failed repack loses nothing: the next run tries again */
		maybe_repack(&g, g.repo, "idpmake's clone");
		if (g.local && o->create_remote)
			maybe_repack(&g, g.local, "the GitOps repository");
	}
	free(refused);
	free(said);
	free(ch);
	free(owned);
	buf_release(&og.overwritten);
	git_tree_free(known);
	clone_close(&g);
	return rc;
}
