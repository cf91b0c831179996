/* hookscript.h - the scripts a hook's command runs (for its key, plan.c) */
#ifndef IDPMAKE_HOOKSCRIPT_H
#define IDPMAKE_HOOKSCRIPT_H

/*
 * The scripts a hook's command `run` runs from its folder `dir` (fn gets
 * each, the word as written and its path), so that an edit to one changes
 * the hook's key as an edit to an input does: the first word of each
 * command of `run`
 * (`./smoke.sh`, `./a.sh && ./b.sh`), or the first word after an
 * interpreter (`sh checks/slo.sh`, `/bin/sh x.sh`, `python3 -u x.py`,
 * `. ./lib.sh`) or a wrapper (`env X=1 ./a.sh`, `timeout 60 ./a.sh`,
 * `nice ./a.sh`), that names a regular file by a relative path from the
 * hook's folder, or from the folder a `cd DIR` before it went to.  Words
 * are split at blanks and the shell's operators and lose their quotes; a
 * word the shell would expand ($, `, globs, ~), an absolute path (a tool
 * of the system) and a redirection's target are not read.
 */
void hook_scripts(const char *run, const char *dir, void (*fn)(void *ctx, const char *word, const char *path),
		  void *ctx);

struct planner;
struct hook;
struct hasher;
/*
 * Add what a hook or a wave check runs to a key (plan.c, rollout.c): its
 * command, folder, inputs' contents, and the content of every file the
 * command names by a relative path (its script).  *err = 1 when an input is
 * missing.
 */
void plan_hook_hash(struct planner *pl, const struct hook *hk, struct hasher *h, int *err);

#endif
