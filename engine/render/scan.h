/*
 * scan.h - the source folders of a plan's renders, scanned once per
 * package on -j threads before plan.c keys the renders, and the cache's
 * bundles, stat'ed once per output.
 */
#ifndef IDPMAKE_SCAN_H
#define IDPMAKE_SCAN_H

#include "render/planner.h"

/* the stat cache's name for a package's source tree: its folder and globs */
const char *tree_name(const struct package *p);
/* scan every selected render's source folder, each package's once; the stat cache fills tree->content */
void scan_all(struct planner *pl);

/* outputs whose bundle this run has seen in the cache */
struct seen_outputs {
	struct hash *v;
	size_t mask;
};

/* is the bundle of output h in the cache (stat'ed once per output and run)? */
int bundle_present(struct planner *pl, struct seen_outputs *o, struct hash h);

#endif
