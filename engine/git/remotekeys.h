/*
 * remotekeys.h - what is done, as every runner can read it: the keys index
 * in the GitOps repository, and a run with an empty state folder that
 * reconstructs its state from it (engine.md "Keys", README "State").
 *
 * Every commit idpmake pushes carries REMOTEKEYS_PATH at the repository's
 * root, one line per package folder, sorted by folder (byte order):
 *
 *     idpmake-keys 1\n
 *     FOLDER SP RENDER-KEY SP OUTPUT-HASH SP TREE\n     ...
 *
 * RENDER-KEY and OUTPUT-HASH are 32 hex digits (hash.h), TREE the folder's
 * git tree id (40 hex; 40 zeros for an empty render, which has no folder).
 * FOLDER may hold spaces: the three fields follow its line's last spaces.
 *
 * The index is hostile input (anyone who can push can write it): at most
 * REMOTEKEYS_CAP bytes, a bad line is skipped, a folder named twice is not
 * trusted, a folder must be a clean relative path.  It is never trusted on
 * its own: a render is taken as done only when the folder on the remote
 * tip has the tree the line names (with names idpmake writes), and the
 * line's output is checked against the folder's files when first used
 * (lazycache.h); a sync only when Argo CD has what idpmake would
 * send (Application, ApplicationSet or list element) and reports it Synced
 * (and Healthy) at a commit whose folder is that tree, or a chart at its
 * pinned version (remotesync.c).  What cannot be proven runs.
 */
#ifndef IDPMAKE_REMOTEKEYS_H
#define IDPMAKE_REMOTEKEYS_H

#include <stddef.h>

#include "graph/graph.h"

#define REMOTEKEYS_DIR ".idpmake"
#define REMOTEKEYS_PATH ".idpmake/keys"
#define REMOTEKEYS_CAP (64u << 20)

struct remotekey {
	const char *folder;
	struct hash key, output;
	char tree[41];
};

/* parse an index (arena): its valid lines, sorted; folders named twice dropped */
void remotekeys_parse(const char *text, size_t len, struct remotekey **v, size_t *n);
/* the line of folder in a parsed index, or NULL */
const struct remotekey *remotekeys_find(const struct remotekey *v, size_t n, const char *folder);

#ifdef IDPMAKE_GITREMOTE_H
/*
 * gitops.c, for a commit that changes content: ch[n] becomes the index to
 * commit: base's index (NULL: none) with the lines of ch[0..n) replaced (a
 * zero key removes a folder's line).  1, or 0 when there is no index to
 * write (no line, and none before), or -1.
 */
int remotekeys_update(struct git *g, git_tree *base, struct change *ch, size_t n);
#endif

struct planner;
struct record;
/*
 * up: the selected renders never recorded in the state whose folder the
 * remote tip holds as its index line says, for this run's key: their
 * bundle goes to the cache, and the render and the folder's push are
 * recorded (the clone learns the index's folders as idpmake's, so a hand
 * edit is drift).  0, or -1 when nothing could be reconstructed (warned;
 * the run renders).  A credential missing or refused over plain http is
 * 0, unsaid: pre-flight says it, once.
 */
int remotekeys_renders(struct planner *pl);
/*
 * plan_decide (remotesync.c): a sync step never recorded, whose render was
 * reconstructed, proven done in Argo CD: recorded, 1; else 0 (it syncs)
 */
int remotekeys_sync(struct planner *pl, struct step *s, const struct record *rec);
/* remotesync.c: is r's render reconstructed by this run (the tip is read)? */
int remotekeys_proving(const struct step *r);
/* the tip's commit id (40 hex) */
const char *remotekeys_tip(void);
/* was the remote read by remotekeys_renders (its tip, or a remote with no commit)? */
int remotekeys_read(void);
/* is rev (40 hex) a commit of the clone whose folder is the tip's folder? */
int remotekeys_folder_at(const char *rev, const char *folder);
/* the run's end: close what reconstruction kept open */
void remotekeys_end(void);

#endif
