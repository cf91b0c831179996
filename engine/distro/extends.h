/*
 * extends.h - a distro's YAML tree with what it extends merged in (pass 1
 * of manifest.c's loading).
 */
#ifndef IDPMAKE_EXTENDS_H
#define IDPMAKE_EXTENDS_H

struct ypool;
struct ynode;

/*
 * The merged tree of distro `file` (nodes in `pool`), keys whose value is
 * null dropped; chain[0..16] gets the real path of each file read, the
 * distro first.  NULL after errors (loc_error).
 */
struct ynode *extends_load(struct ypool *pool, const char *file, const char *statedir, const char **chain);

#endif
