/* state.h - the state store: STATE/state.db (SQLite), the lock, the folders */
#ifndef IDPMAKE_STATE_H
#define IDPMAKE_STATE_H

#include "graph/graph.h"
#include "base/hash.h"
#include "base/statedir.h"

struct state;

/* what the state remembers of a step */
struct record {
	int have;		/* a row exists */
	int ok;			/* the last attempt succeeded */
	struct hash key;	/* key of the last success (zero: none) */
	struct hash output;	/* output hash of the last success */
	const char *commit;	/* push: the commit; render: the commit that holds it */
	long long at;		/* unix seconds of the last attempt */
	int ms;			/* how long it took */
	const char *error;	/* the last failure's cause */
};

/*
 * Open (creating and migrating) STATE/state.db.  readonly: do not create
 * anything; a missing state is then an empty one.  NULL after an error.
 */
struct state *state_open(const char *dir, int readonly);
void state_close(struct state *s);
/* remove DIR/state.db (forget --all) under the run lock, without opening it: 1 removed, 0 none, -1 */
int state_remove(const char *dir, int wait);
const char *state_dir(const struct state *s);


/* the run lock: 0, or -1 after naming the holder (pid, start) unless wait */
int state_lock(struct state *s, int wait);

/* steps: the preloaded record of id (have=0 if none) */
struct record state_step(struct state *s, const char *id);
int state_step_inputs(struct state *s, const char *id, struct inputs *in);
/* a success: key, output, inputs; one transaction */
int state_step_ok(struct state *s, const char *id, struct hash key, struct hash output,
		  const struct inputs *in, const char *commit, int ms);
/* a failure: the last success's key stays */
int state_step_failed(struct state *s, const char *id, const char *error, int ms);
int state_forget(struct state *s, const char *id_prefix);	/* number of steps dropped */
/* every step id in the state, sorted; for status and pruning */
const char **state_step_ids(struct state *s, size_t *n);

/* the stat cache, per scanned tree (dir + globs) */
int state_tree(struct state *s, const char *name, struct hash *fingerprint, int *racy,
	       struct hash *content);
int state_tree_files(struct state *s, const char *name, struct tree_file **v, size_t *n);
int state_tree_put(struct state *s, const char *name, const struct tree *t);

/* tool versions, cached by the binary's stat */
const char *state_tool(struct state *s, const char *path, struct hash stat);
int state_tool_put(struct state *s, const char *path, struct hash stat, const char *version);

/* what the GitOps repository holds per package folder */
struct pushed {
	const char *path;
	struct hash output;
	const char *commit;
};
int state_pushed(struct state *s, const char *path, struct pushed *p);	/* 1 found, 0 not */
const struct pushed *state_pushed_all(struct state *s, size_t *n);
/* for this run only: take a folder as not pushed, so the push writes it again (up --overwrite) */
void state_pushed_drop(struct state *s, const char *path);
/* for good: the folder is not known to hold what the state said (a false keys index line); 0 or -1 */
int state_pushed_forget(struct state *s, const char *path);
/* one transaction around many state_step_ok (not around state_push_done, which has its own); 0 or -1 */
int state_begin(struct state *s);
/* commit (or, with commit 0, roll back) what state_begin started */
int state_end(struct state *s, int commit);
/* before a push: the folders it writes (not those it removes) hold nothing known (a zero output), one transaction */
int state_pushed_unknown(struct state *s, const struct pushed *v, size_t n);
/* after a push: every folder's new output (zero hash: removed) at v[i].commit, or at commit; one transaction */
int state_push_done(struct state *s, const struct pushed *v, size_t n, const char *commit);

/* runs, for `log` */
long long state_run_begin(struct state *s, const char *command);
int state_run_end(struct state *s, long long run, int result, const char *summary, const char *commit);
struct run_row {
	long long id, started, finished;
	int pid, result;
	const char *command, *summary, *commit;
};
struct run_row *state_runs(struct state *s, size_t *n);

#endif
