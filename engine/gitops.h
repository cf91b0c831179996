/*
 * gitops.h - the GitOps repository: one commit per run, pushed through
 * libgit2 (engine.md "Git").
 *
 * idpmake keeps a clone of the remote in STATE/repo (bare; fetched, never
 * re-cloned).  A run's changes are applied to the tree of the remote tip
 * with git_tree_create_updated, so only the changed package folders get new
 * trees; nothing else of the repository is read or re-hashed.
 */
#ifndef IDPMAKE_GITOPS_H
#define IDPMAKE_GITOPS_H

#include <stddef.h>

struct gitops_opts {
	const char *statedir;		/* the clone lives in STATE/repo */
	const char *remote;		/* URL, file:// URL or local path */
	int create_remote;		/* remote is the embedded default: git init --bare it if absent */
	const char *branch;		/* default "main" */
	const char *author_name, *author_email;
	const char *ca_file;		/* private CA for https, or NULL */
	int verbose;			/* -v: print what is fetched and pushed */
};

struct gitops_change {
	const char *path;		/* package folder in the repository */
	const char *bundle;		/* bundle file (bundle.h) with its content; NULL: remove the folder */
};

struct gitops_result {
	char commit[41];		/* what the remote branch points at afterwards */
	char parent[41];		/* the remote tip the commit was built on ("" if none) */
	int made_commit;		/* 0: the remote already held exactly this content */
	int retries;			/* times the remote moved and the commit was rebuilt */
};

/*
 * Fetch, build one commit with every change on the remote tip, push.  When
 * the push is refused because the remote moved: fetch again; if the remote's
 * new commits touched none of the changes' folders, rebuild on the new tip
 * and push again (at most 5 times); if they did, fail naming the folders and
 * the remote commit, changing nothing.  A commit whose tree equals its
 * parent's is never made: made_commit = 0 and commit = the tip.
 * Returns 0, or -1 after printing the cause (an auth failure names
 * IDPMAKE_GIT_TOKEN / IDPMAKE_GIT_USERNAME and never prints the secret).
 */
int gitops_push(const struct gitops_opts *o, const struct gitops_change *c, size_t n,
		const char *message, struct gitops_result *r);

/*
 * Read what the remote branch holds in folder `path` (after a fetch when
 * `fetch`): fn is called for each file in it and in its subfolders, with
 * its path in the folder ("manifests/cm.yaml"), in byte order of the paths.
 * A missing folder or an empty repository calls fn never.  `tip` gets the
 * commit read ("" when the branch does not exist).
 */
int gitops_read(const struct gitops_opts *o, int fetch, const char *path,
		int (*fn)(void *ctx, const char *name, const char *data, size_t len),
		void *ctx, char tip[41]);

#endif
