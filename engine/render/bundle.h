/*
 * bundle.h - a rendered package on disk.
 *
 * render.c writes the normalised objects of one package as one file, a
 * bundle, under STATE/cache/rendered/HASH (HASH is the output hash, so
 * identical outputs share one file).  gitops.c turns a bundle into a git
 * tree; `render -o`, `diff` and hooks read it back.  The format:
 *
 *     idpmake-bundle 1\n
 *     NAME SP LEN \n  CONTENT (LEN bytes) \n      one entry per object file,
 *     ...                                        sorted by NAME (byte order)
 *
 * NAME is a file path in the package folder (KIND.NAME.yaml; folders only
 * for argocd-app packages), no newline, checked at render time; it may hold
 * spaces (RBAC names may): the length follows the line's last space.  LEN
 * decimal.  One file per package instead of one per object keeps a
 * 200,000-object distro at a few thousand files in the cache.
 *
 * The file's name is the hash of its bytes, so a reader can tell a
 * truncated or corrupt file (a crash before the data reached the disk, a
 * full disk) from a good one: bundle_read checks it for cache paths and
 * removes a bad file, and the planner checks a cached bundle before a push
 * reads it (bundle_check), so that it is rendered again, never pushed.
 */
#ifndef IDPMAKE_BUNDLE_H
#define IDPMAKE_BUNDLE_H

#include <stddef.h>
#include <stdio.h>

#include "graph/graph.h"

#define BUNDLE_MAGIC "idpmake-bundle 1\n"

struct bundle_entry {
	const char *name;	/* file name in the package folder */
	const char *data;	/* points into the bundle's text */
	size_t len;
};

struct bundle {
	char *text;		/* the whole file (malloc'd) */
	size_t len;
	struct bundle_entry *v;	/* malloc'd */
	size_t n;
};

/*
 * read and check a bundle; -1 with a message printed.  A cache path whose
 * bytes do not hash to its name is removed and refused.
 */
int bundle_read(const char *path, struct bundle *b);
/*
 * One entry at a time, for a reader that need not hold the whole file (the
 * push): memory is the largest entry.  bundle_next gives 1 and the entry
 * (valid until the next call), 0 at the end, -1 on a bad file (printed).
 * A cache path is checked against its name as it is read: a file whose
 * bytes do not hash to it ends in -1, after every entry, and is removed.
 */
struct bundle_stream {
	const char *path;
	FILE *f;
	struct hasher *h;
	struct hash want;
	int check;
	unsigned long long left;	/* bytes not read yet */
	char *line, *data;
	size_t cap;
};
int bundle_open(struct bundle_stream *bs, const char *path);
int bundle_next(struct bundle_stream *bs, const char **name, const char **data, size_t *len);
void bundle_close(struct bundle_stream *bs);

/* does the cached bundle of output hash h hash to h?  0, or -1 (missing, or removed) */
int bundle_check(const char *statedir, struct hash h);
/* parse bundle text already in memory (takes ownership of text) */
int bundle_parse(char *text, size_t len, struct bundle *b, const char *what);
void bundle_free(struct bundle *b);
/* serialise entries (must be sorted) to out; the hash of the bytes is the output hash */
struct buf;
void bundle_write(const struct bundle_entry *v, size_t n, struct buf *out);
/*
 * who writes a cache bundle that is missing when it is read (lazycache.c):
 * fn(statedir, h) writes it and returns 0, or -1
 */
void bundle_on_missing(int (*fn)(const char *statedir, struct hash h));
/* is a bundle entry a file Argo CD reads as manifests (.yaml, .yml, .json), not another file of the folder? */
int bundle_is_manifest(const char *name);
/* the cache path of a bundle with output hash h */
const char *bundle_path(const char *statedir, struct hash h);

#endif
