/* hookvars.h - the distro variables a hook's key holds */
#ifndef IDPMAKE_HOOKVARS_H
#define IDPMAKE_HOOKVARS_H

#include <stddef.h>

struct planner;
struct hook;
struct vars;

/*
 * The variables hook hk reads, by name, each once: those its `vars:` list
 * names, and those the text it runs names: `run`, its `env` list, the
 * scripts `run` names (hookscript.h) and its `inputs` files, where
 * IDPMAKE_VAR_<NAME> (hook.c's spelling) or ${name} names one of v.  A
 * name no variable of v spells is left out (${HOME}); a definition of it
 * later adds it, which changes the key.  A name `vars:` lists is kept even
 * when undefined.
 *
 * Returns 1 for "all of them" when the hook has no `vars:` list and that
 * text reads variables by a name idpmake cannot see (IDPMAKE_VAR_ followed
 * by no name: `${!IDPMAKE_VAR_@}`, `IDPMAKE_VAR_$x`, `env | grep
 * IDPMAKE_VAR_`): the hook then keeps every variable in its key, as before.
 * A program the hook runs that is none of those files and reads a variable
 * by itself is not seen: such a hook names the variable in `vars:` (or the
 * file that names it in `inputs:`).  What a file names is cached in the
 * state's tool table by the file's content hash.  0 otherwise.
 */
int hook_vars(struct planner *pl, const struct hook *hk, const struct vars *v, const char ***names, size_t *n);

#endif
