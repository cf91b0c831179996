/*
 * buf.h - growable strings and argv vectors, as git's strbuf and strvec.
 *
 * Invariants: a struct buf is never NULL-pointed after buf_init (BUF_INIT
 * points at a shared empty string until the first write) and s[len] is
 * always NUL.  A struct strvec's v[n] is always NULL.  Both use malloc, not
 * the arena: they are for temporary text; buf_release frees.
 */
#ifndef IDPMAKE_BUF_H
#define IDPMAKE_BUF_H

#include <stdarg.h>
#include <stddef.h>

struct buf {
	char *s;
	size_t len, cap;
};

extern char buf_empty[];
#define BUF_INIT { buf_empty, 0, 0 }

void buf_init(struct buf *b);
void buf_release(struct buf *b);
void buf_grow(struct buf *b, size_t extra);
void buf_add(struct buf *b, const void *p, size_t n);
void buf_adds(struct buf *b, const char *s);
void buf_addc(struct buf *b, char c);
void buf_addf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void buf_vaddf(struct buf *b, const char *fmt, va_list ap);
void buf_reset(struct buf *b);
char *buf_detach(struct buf *b);	/* malloc'd; b is reset */

struct strvec {
	const char **v;
	size_t n, cap;
};

#define STRVEC_INIT { NULL, 0, 0 }

void strvec_push(struct strvec *sv, const char *s);	/* copies s */
void strvec_pushf(struct strvec *sv, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void strvec_clear(struct strvec *sv);

#endif
