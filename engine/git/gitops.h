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

#include "graph/graph.h"

struct gitops_opts {
	const char *statedir;		/* the clone lives in STATE/repo */
	const char *remote;		/* URL, file:// URL or local path */
	int create_remote;		/* remote is the embedded default: git init --bare it if absent */
	const char *branch;		/* default "main" */
	const char *author_name, *author_email;
	const char *ca_file;		/* private CA for https, or NULL */
	int verbose;			/* -v: print what is fetched and pushed */
	const char *pin_cert;		/* tls (tlscert.h): the certificate (PEM) the remote may show though no
					 * CA the system trusts signed it, idpmake's own; for this remote only */			/* -v: print what is fetched and pushed */
};

struct gitops_change {
	const char *path;		/* package folder in the repository */
	const char *bundle;		/* bundle file (bundle.h) with its content; NULL: remove the folder */
	struct hash key, output;	/* the render's input key and output hash, for the keys index
					   (remotekeys.h); zero key: the folder gets no line */
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
 * the commits, changing nothing, unless gitops_set_owners said to overwrite
 * those folders.  A commit whose tree equals its
 * parent's is never made: made_commit = 0 and commit = the tip.
 * Returns 0, or -1 after printing the cause (an auth failure names
 * IDPMAKE_GIT_TOKEN / IDPMAKE_GIT_USERNAME and never prints the secret).
 */
/*
 * Every commit also carries the keys index (remotekeys.h, REMOTEKEYS_PATH):
 * the index on the tip, with the lines of the changes' folders replaced.
 */
int gitops_push(const struct gitops_opts *o, const struct gitops_change *c, size_t n,
		const char *message, struct gitops_result *r);

/*
 * Read what the remote branch holds in folder `path` (after a fetch when
 * `fetch`): fn is called for each file in it and in its subfolders, with
 * its path in the folder ("manifests/cm.yaml"), in byte order of the paths.
 * A missing folder or an empty repository calls fn never.  `tip` gets the
 * commit read ("" when the branch does not exist).
 *
 * The folder is hostile (anyone who can push edits it): a file over
 * GITOPS_READ_FILE_CAP, or one that takes the folder's files read over
 * GITOPS_READ_FOLDER_CAP, is not loaded: fn gets data NULL and len its size
 * (from the object's header), and the caller reports it.
 */
#define GITOPS_READ_FILE_CAP (64ull << 20)	/* a file: no Kubernetes object comes near it */
#define GITOPS_READ_FOLDER_CAP (512ull << 20)	/* a folder: what a render may output (render.c) */
int gitops_read(const struct gitops_opts *o, int fetch, const char *path,
		int (*fn)(void *ctx, const char *name, const char *data, size_t len),
		void *ctx, char tip[41]);

/*
 * Whether commit `rev` is `base`, or comes after it on the branch (descends
 * from it) with `folder` (NULL: any) holding the same tree as at `base`,
 * read from the clone only (no network): 1 yes, 0 no, -1 when the clone does
 * not hold one of them or cannot be read (nothing is printed).
 */
int gitops_descends(const struct gitops_opts *o, const char *rev, const char *base, const char *folder);

/*
 * Changes made outside idpmake ("drift").  A folder idpmake owns (one it
 * pushed from this clone) whose content on the remote branch differs from
 * what idpmake last left there was changed by another hand.
 */
struct gitops_commit {
	char id[41];
	const char *author;		/* "Name <email>", control characters escaped (term_safe) */
	const char *summary;		/* the first line of its message, escaped so too */
};

struct gitops_drift {
	const char *folder;
	int removed;			/* the folder is gone from the branch */
	struct gitops_commit *commits;	/* newest first: the commits since idpmake's that changed it */
	size_t ncommits;
};

/*
 * Which of `folders` drifted on the remote branch (after a fetch when
 * `fetch`, else as last fetched): their number, and *out (arena).  A clone
 * that idpmake never pushed from knows no folder: 0.  -1 after an error.
 */
int gitops_drift(const struct gitops_opts *o, int fetch, const char *const *folders, size_t n,
		 struct gitops_drift **out);

/*
 * What `up` tells the push about the run's folders: the target that names
 * each (for messages), and whether `up --overwrite` replaces changes another
 * hand made in it.  gitops_push refuses to write over such changes unless
 * told to; the commit that does names the commits it overwrote.  The array
 * must live until the push is done.
 */
struct gitops_owner {
	const char *folder;
	const char *target;		/* CLUSTER/PACKAGE */
	int overwrite;
};
void gitops_set_owners(const struct gitops_owner *v, size_t n);

#endif
