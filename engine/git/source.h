/* source.h - `git:` package sources: fetched with libgit2 into the state's cache */
#ifndef IDPMAKE_SOURCE_H
#define IDPMAKE_SOURCE_H

#include "graph/graph.h"
#include "graph/state.h"

/*
 * Resolve package p's git source to a commit and a folder holding its
 * `path` at that commit (STATE/cache/git/src/...), fetching only when
 * needed: a ref that is a commit id, or one resolved before (recorded in
 * the state), makes no network call unless `refresh`.  0, or -1 with *err.
 * With `fallback` (plan, a dry run), a fetch that fails when a commit
 * resolved before is still in the cache goes on with that commit, with a
 * warning: an unreachable source host does not fail a whole plan.
 */
int source_git(struct state *st, const char *statedir, struct package *p, int refresh, int fallback,
	       char commit[41], const char **dir, const char **err);

#endif
