/*
 * removal.h - `packages: {name: null}`: a distro that extends another
 * removes one of its parent's packages (../shared/spec/distro.md, "Distros
 * that extend distros").  removal.c checks each removal against the parent
 * and remembers where it was written, for the errors it can cause later.
 */
#ifndef IDPMAKE_REMOVAL_H
#define IDPMAKE_REMOVAL_H

#include "distro/model.h"
#include "base/yaml.h"

/* forget the removals of an earlier load */
void removals_reset(void);
/*
 * Check the removals in `child` (a distro's tree, before the merge) against
 * `parent` (the merged tree of what it extends, NULL when it extends
 * nothing): removing a package the parent does not have is a located error,
 * with a suggestion.  Returns 0, or -1 after an error.
 */
int removals_check(const struct ynode *parent, const struct ynode *child);
/* where package `name` was removed (the key of `name: null`), or NULL */
const struct loc *removal_of(const char *name);

#endif
