/* hookkey.h - a hook's key, and its named inputs for explain and the state */
#ifndef IDPMAKE_HOOKKEY_H
#define IDPMAKE_HOOKKEY_H

#include "base/hash.h"

struct planner;
struct step;

/*
 * H(what it runs (plan_hook_hash), the builtins cluster, package and
 * namespace, the variables it reads (hookvars.h) by name and value, and for
 * `when: changed` the key of its package's sync, s->hook_sync).  *err = 1
 * when an input is missing.
 */
struct hash hook_key(struct planner *pl, struct step *s, int *err);
/*
 * The key idpmake computed before hooks were keyed on the variables they
 * read (every variable of the cluster and the distro), so that a state
 * recorded then is not taken as changed (plan.c); the same as hook_key's
 * for a hook that reads them all.
 */
struct hash hook_legacy_key(struct planner *pl, struct step *s);
/*
 * The same, by name, for explain and the state: "run" and "folder" (with
 * their values), "input PATH", "script WORD", "var NAME" (keyinputs.h) and
 * "sync ID".  Never fails: a missing file's hash is zero.
 */
void hook_inputs(struct planner *pl, struct step *s, struct inputs *in);

#endif
