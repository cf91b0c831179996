/*
 * yaml.h - YAML documents as trees with locations, over libyaml.
 *
 * libyaml parses (aliases resolved by its composer); this file only turns
 * its documents into `struct ynode` trees that remember file, line and
 * column, and emits trees back through libyaml's emitter with sorted keys,
 * so that rendered objects have one stable form.
 *
 * A tree lives in a `struct ypool`; ypool_free releases all of it.
 */
#ifndef IDPMAKE_YAML_H
#define IDPMAKE_YAML_H

#include <stddef.h>
#include <stdio.h>

#include "base/buf.h"
#include "base/util.h"

enum ytype { Y_SCALAR, Y_SEQ, Y_MAP };

/* how a scalar was written: plain scalars may be null, bool or numbers */
enum ystyle { YS_PLAIN, YS_QUOTED, YS_BLOCK };

struct ynode {
	enum ytype type;
	enum ystyle style;	/* scalars */
	const char *s;		/* scalar text */
	size_t slen;
	struct ynode **k;	/* map keys (scalars), NULL for sequences */
	struct ynode **v;	/* map values or sequence items */
	size_t n;
	struct loc loc;
};

struct ypool;

struct ypool *ypool_new(void);
void ypool_free(struct ypool *p);
/* ypool_free, every byte it handed out zeroed first: a tree of secrets, also one a parse error left half-built
   (libyaml's own copies, in its parser, are freed unzeroed) */
void ypool_free_wipe(struct ypool *p);

/*
 * Parse every document of `text`.  On a syntax error print
 * "file:line:col: error: ..." and return -1.  Empty documents are skipped.
 */
int yaml_parse(struct ypool *p, const char *file, const char *text, size_t len,
	       struct ynode ***docs, size_t *ndocs);

/*
 * The same, one document at a time, from text or (text NULL) the stream
 * in: fn gets each non-empty document in a pool of its own, freed when fn
 * returns, so only one document's tree is in memory.  fn returns < 0 to
 * stop; the result is then fn's.
 */
int yaml_parse_each(const char *file, const char *text, size_t len, FILE *in,
		    int (*fn)(void *arg, struct ynode *doc), void *arg);

struct ynode *ynew(struct ypool *p, enum ytype t, struct loc loc);
struct ynode *yscalar(struct ypool *p, const char *s, enum ystyle style, struct loc loc);
void yset(struct ypool *p, struct ynode *map, struct ynode *key, struct ynode *val);
void ypush(struct ypool *p, struct ynode *seq, struct ynode *item);
struct ynode *ycopy(struct ypool *p, const struct ynode *n);

struct ynode *yget(const struct ynode *map, const char *key);	/* NULL if absent */
struct ynode *ypath(const struct ynode *n, const char *dotted);	/* a.b.c */
int yisnull(const struct ynode *n);	/* ~, null, empty plain scalar */
int ystr_eq(const struct ynode *n, const char *s);

/*
 * What a scalar means to a YAML 1.1 (and 1.2) reader, as Kubernetes reads
 * it: yes/no/on/off/y/n are booleans (*truth says which), 0755 is octal.
 * A quoted or block scalar, or a non-scalar, is YK_STR.
 */
enum ykind { YK_STR, YK_NULL, YK_BOOL, YK_INT, YK_FLOAT, YK_OTHER /* timestamp, =, << */ };
enum ykind yresolve(const struct ynode *n, int *truth);

/* emit one document, keys sorted, to `out`; 0 or -1 */
int yaml_emit(const struct ynode *doc, struct buf *out);
/* canonical one-line text of a tree (sorted keys), for hashing */
void ycanon(const struct ynode *n, struct buf *out);

#endif
