/*
 * lazycache.h - rendered output that the GitOps clone holds, written to the
 * cache only when something reads it.
 *
 * An empty state rebuilt from the keys index (remotekeys.c) takes a
 * folder whose tree is the one the index names as done, and records the
 * index's output for it without reading a file: reading 200,000 files from
 * git cost more than scanning the sources, and writing them out again as one
 * cache bundle per package more still.  The output is checked when it is
 * first used:
 *   - a render whose bundle is missing from the cache, and whose folder the
 *     state records as pushed with that output at a commit the clone holds,
 *     is up to date; bundle_read asks for the file, and lazycache builds it
 *     from that folder at that commit, checks that it hashes to its name
 *     (bundle.h), and writes it;
 *   - a render that comes out equal to a reconstructed folder's output (or
 *     to one the cache never held) pushes unless its folder holds that
 *     output (lazycache_holds, from plan_push_changes), and a folder that
 *     does not is forgotten as pushed: an index that lies about a folder's
 *     output cannot make a later render look pushed, even when another
 *     folder put that output in the cache, or the push then fails.
 */
#ifndef IDPMAKE_LAZYCACHE_H
#define IDPMAKE_LAZYCACHE_H

#include "graph/graph.h"

#ifdef IDPMAKE_GITREMOTE_H
struct buf;
/* an object's size from its header, without reading it; -1 when unknown */
long long git_object_size(struct git *g, const git_oid *id);
/*
 * tree t's files as a bundle (bundle.h) into out: 0, or -1 when it is not
 * one idpmake could have written (a name that leads out of the folder, a
 * link, a submodule, more than a render may output).
 */
int folder_bundle(struct git *g, git_tree *t, struct buf *out);
/* tree t names only files idpmake could have written (as folder_bundle checks, without reading them): 1 or 0 */
int folder_names_ok(git_tree *t);
#endif

/* output is the bundle of folder (a clean repository path) at commit (40 hex): readable from now on */
void lazycache_add(const char *statedir, struct hash output, const char *commit, const char *folder);

/*
 * Does gitpath's folder at commit (40 hex), in the clone of statedir, hold
 * the bundle of output?  Read and hashed, never written: 1 or 0.
 */
int lazycache_holds(const char *statedir, const char *commit, const char *gitpath, struct hash output);

struct planner;
/*
 * plan: step s's output, missing from the cache, is held by the clone (its
 * folder recorded as pushed with it, at a commit the clone has): added as
 * by lazycache_add, 1; else 0.
 */
int lazycache_held(struct planner *pl, const struct step *s, struct hash output);
/*
 * The folder gitpath at commit (40 hex) of the clone, as a bundle written
 * to the cache whatever output it has: 1 and *h its output; 0 when the
 * commit has no such folder (*h zero); -1 when it cannot be read.
 */
int lazycache_folder(const char *statedir, const char *commit, const char *gitpath, struct hash *h);

#endif
