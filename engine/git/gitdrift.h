/*
 * gitdrift.h - what gitops.c and gitdrift.c share about changes made
 * outside idpmake.  Private to them; the interface is gitops.h.
 */
#ifndef IDPMAKE_GITDRIFT_H
#define IDPMAKE_GITDRIFT_H

#include "base/buf.h"
#include "git/gitremote.h"

/* the owner up registered for a folder, or NULL */
const struct gitops_owner *drift_owner(const char *folder);
/*
 * The commits from `tip` back to `since` (excluded; NULL: the whole
 * history) that changed folder `path`, newest first (arena).
 */
int drift_commits(struct git *g, const git_oid *tip, const git_oid *since, const char *path,
		  struct gitops_commit **out, size_t *n);
/* "\n  FOLDER: ID AUTHOR \"SUMMARY\"" lines; ids shortened unless `full` */
void drift_describe(struct buf *b, const char *folder, int removed, const struct gitops_commit *v, size_t n, int full);
/* message with a paragraph naming what it overwrites, before its trailer paragraph */
const char *drift_message(const char *message, const struct buf *over);

#endif
