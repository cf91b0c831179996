/* re.h - regular expressions through PCRE2 */
#ifndef IDPMAKE_RE_H
#define IDPMAKE_RE_H

#include "base/buf.h"

struct re;

/* compile; on error NULL and a message in *err (arena) */
struct re *re_compile(const char *pattern, const char **err);
int re_match(const struct re *re, const char *s, size_t len);	/* 1, 0 */
/*
 * replace every match of re in s by repl ($1 style references); the number
 * of matches, -1 on error, -2 when the result would be longer than max bytes
 */
int re_subst(const struct re *re, const char *s, size_t len, const char *repl, size_t max, struct buf *out);
void re_free(struct re *re);

int is_dns_label(const char *s);	/* DNS-1123 label: [a-z0-9]([-a-z0-9]*[a-z0-9])?, <= 63 */
int is_dns_subdomain(const char *s);	/* DNS-1123 subdomain: labels joined by '.', <= 253 */

#endif
