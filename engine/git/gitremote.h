/*
 * gitremote.h - what gitops.c (folders, commits, the one push of a run),
 * gitremote.c (the clone, the connection: credentials, fetch, push) and the
 * other git files share.  Private to engine/git; the interface is gitops.h.
 */
#ifndef IDPMAKE_GITREMOTE_H
#define IDPMAKE_GITREMOTE_H

#include <git2.h>

#include "base/buf.h"
#include "graph/graph.h"
#include "git/gitops.h"
#include "base/url.h"

#define MAX_RETRIES 5
#define SAID_CAP 4096			/* bytes kept of the remote's messages */
#define PUSH_REF "refs/idpmake/push"	/* what is pushed, only during a push */
#define KNOWN_MSG "idpmake: the package folders as idpmake left them\n"

/* tests only: called before each push, after its fetch (attempt 0, 1, ...) */
extern void (*gitops_test_after_fetch)(int attempt);

enum auth { AUTH_OK, AUTH_NONE, AUTH_REFUSED, AUTH_AGENT, AUTH_UNSUPPORTED, AUTH_HTTP, AUTH_HOST };

/* one session with the clone and the remote */
struct git {
	const struct gitops_opts *o;
	const char *branch;
	const char *head;		/* refs/heads/BRANCH */
	const char *tracking;		/* refs/remotes/origin/BRANCH: the remote's tip, last fetched */
	const char *known;		/* refs/idpmake/known/BRANCH: the folders as idpmake left them */
	const char *pending;		/* refs/idpmake/pending/BRANCH: known, once the push lands */
	const char *url;		/* o->remote as given: may hold a password */
	const char *shown;		/* url with the password masked */
	const char *bare;		/* url without the password: the remote libgit2 and the config see */
	struct url parsed;		/* url split (all NULL for a path or user@host:path) */
	const char *clone;		/* STATE/repo */
	git_repository *repo;
	git_odb *odb;
	git_odb_backend *mempack;	/* new objects, kept in memory until flush_objects */
	int unflushed;			/* mempack holds objects not yet in a pack */
	git_oid *roots;			/* the trees and commits written to mempack since the last flush */
	size_t nroots;
	size_t newbytes;		/* bytes of blobs written to mempack since the last flush */
	const git_oid *blobs;		/* blobs no root reaches yet, for flush_objects to pack */
	size_t nblobs;
	git_repository *local;		/* the remote, when it is a local path: written directly */
	git_remote *remote;		/* in memory, never saved */

	/* per connection */
	int tried_user, tried_agent, tried_pass;
	char user[128];			/* the user name sent with IDPMAKE_GIT_TOKEN */
	enum auth auth;
	int quiet_auth;			/* gerror says nothing of a missing credential or plain http (AUTH_NONE
					 * with none given, AUTH_HTTP): pre-flight says it (remotekeys.c) */
	char *refused;			/* the remote's reason for refusing the update */
	struct buf said;		/* the remote's messages, up to SAID_CAP */
};

struct change {
	const char *path;		/* normalised: no leading, trailing or double '/' */
	git_oid tree;			/* the folder's new tree (zero: remove) */
	int remove;
	int seen;			/* base is known */
	git_oid base;			/* the folder as idpmake last left or first saw it (zero: none) */
	int blob;			/* the keys index: tree is a blob's id */
	struct hash key, output;	/* for the keys index */
};

/* gitbase.c */
/* the remote's messages, one "remote: ..." line each; and those it said in this session */
void remote_print(const char *p);
void remote_print_said(struct git *g);
int gerror(struct git *g, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* a repository path without empty, "." or trailing components; NULL if invalid */
const char *norm_path(const char *p);
/* the id of the entry at `path` in `tree` (NULL: empty): 1, or 0 with *id zero when none */
int entry_at(struct git *g, git_tree *tree, const char *path, git_oid *id);

/* gitremote.c */
int clone_set_ref(struct git *g, const char *name, const git_oid *id);
int clone_ref_commit(struct git *g, const char *name, git_commit **out);
int remote_fetch(struct git *g, git_oid *tip, int *have);
int remote_push(struct git *g, const git_oid *commit);
const char *remote_local_path(const char *url);
int clone_open(struct git *g, const struct gitops_opts *o, int network);
void clone_close(struct git *g);
/* gitpack.c: pack the mempack's new objects into the clone (and a local remote); 0 or -1 */
int flush_objects(struct git *g);
/* note a tree or commit just written to the mempack */
void track(struct git *g, const git_oid *id);
/* the tree of one package folder, from its bundle; *empty when it has no file; 0 or -1 */
int folder_tree(struct git *g, const char *file, git_oid *out, int *empty);
int clone_tracking_tip(struct git *g, git_oid *tip, int *have);

#endif
