/*
 * hash.h - XXH3-128 hashes, and the stat cache that lets a no-op run hash
 * no file.
 */
#ifndef IDPMAKE_HASH_H
#define IDPMAKE_HASH_H

#include <stddef.h>
#include <stdint.h>

#include "base/util.h"

/* a 128-bit XXH3 hash; all zero means "none" */
struct hash {
	uint64_t hi, lo;
};

struct hasher;

struct hasher *hasher_new(void);
void hasher_add(struct hasher *h, const void *p, size_t n);
void hasher_adds(struct hasher *h, const char *s);	/* includes the NUL: unambiguous */
void hasher_addh(struct hasher *h, struct hash x);
struct hash hasher_end(struct hasher *h);
/* the hash of a file's bytes, read in pieces; 0, or -1 with errno */
int hash_fd(int fd, struct hash *out);			/* hash_path's, of fd, which it closes */
int hash_path(const char *path, struct hash *out);		/* frees h */

struct hash hash_bytes(const void *p, size_t n);
int hash_eq(struct hash a, struct hash b);
int hash_zero(struct hash a);
void hash_hex(struct hash h, char out[33]);
int hash_parse(const char *hex, struct hash *h);	/* 0 or -1 */
const char *hash_short(struct hash h);			/* 12 hex digits, arena */

/*
 * One named component of a key: a file, the spec, the rule, a variable.
 * value: what explain shows for it (a variable's or a distro field's value),
 * or NULL; masked: it looks secret, so only its hash is kept and "***" shown.
 */
struct input {
	const char *name;
	struct hash h;
	const char *value;
	int masked;
};

struct inputs {
	struct input *v;
	size_t n;
};

void inputs_add(struct inputs *in, const char *name, struct hash h);	/* arena */
/* with the value explain shows (kept in the state beside the hash unless masked) */
void inputs_add_value(struct inputs *in, const char *name, struct hash h, const char *value, int masked);
struct hash inputs_hash(const struct inputs *in);
/*
 * serialise for the state (malloc'd) and back (arena).  An entry with a value
 * is written as its name, 0x1f and the value (at most INPUT_VALUE_MAX bytes:
 * a longer one is cut, its hash is whole); a masked one as its name and
 * 0x1e, so a blob written before values existed reads as before.
 */
#define INPUT_VALUE_MAX 240
void *inputs_encode(const struct inputs *in, size_t *len);
int inputs_decode(const void *blob, size_t len, struct inputs *out);
/* names whose hash differs or that were added or removed: "a changed" */
void inputs_diff(const struct inputs *old, const struct inputs *new, struct strlist *changed);

/*
 * A tree of input files: every regular file under `dir` matching one of the
 * globs (fnmatch with "**" for any depth; none: every file), sorted by
 * relative path.  A symlink is followed only when it points inside `dir`
 * itself (the package folder, not the distro folder around it); one that
 * points out of it is an error naming the symlink and its target, so a
 * package never reads, hashes or pushes a file of another package or of the
 * machine.  A dangling symlink is skipped.
 *
 * scan_tree() only stats (readdir + fstatat) and returns a fingerprint of
 * (path, size, mtime, ctime, inode, device) for every file.  When it equals
 * the fingerprint recorded in the state and that record was not racy, the
 * recorded content hash stands and no file is read.  Otherwise
 * hash_tree() reads the files whose stat changed (the per-file records say
 * which) and hashes them.
 */
struct tree_file {
	const char *path;		/* relative to dir */
	int64_t size, mtime, ctime;	/* ns */
	uint64_t ino, dev;
	struct hash h;			/* content, once known */
	int racy;			/* changed too close to the run to trust its stat */
};

struct tree {
	const char *dir;
	struct tree_file *v;
	size_t n;
	struct hash fingerprint;	/* of the stat data */
	struct hash content;		/* of the paths and contents */
	int racy;			/* a file's mtime is not safely older than the run */
	int known;			/* plan.c: 1 content known, 2 and per-file hashes */
	int dropped;			/* plan.c: the file list was freed (content known) */
};

/* -1 after printing an error */
int scan_tree(const char *dir, const struct strlist *globs, struct tree *t);
void tree_free(struct tree *t);		/* what scan_tree allocated */
/* fill content hashes; `old`, `nold` are the files recorded last time */
int hash_tree(struct tree *t, const struct tree_file *old, size_t nold, long long run_start_ns);
void *tree_encode(const struct tree *t, size_t *len);			/* malloc'd */
int tree_decode(const void *blob, size_t len, struct tree_file **v, size_t *n);	/* arena */
void tree_inputs(const struct tree *t, const char *prefix, struct inputs *in);

/* does `path` match the glob (with "**")? */
int glob_match(const char *glob, const char *path);

#endif
