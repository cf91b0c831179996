/* bundle.c - rendered packages on disk (format in bundle.h) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "buf.h"
#include "bundle.h"
#include "hash.h"
#include "util.h"

#define MAGIC "idpmake-bundle 1\n"

/*
 * Every bound is checked as "what is left" so that nothing can wrap: a
 * header on the last line, a length past the end (a truncated file) or a
 * length that is not a plain decimal number make the bundle invalid, and
 * so does a NUL in a header line (a name cut short names another file).
 */
int bundle_parse(char *text, size_t len, struct bundle *b, const char *what)
{
	size_t off = strlen(MAGIC), cap = 0;

	memset(b, 0, sizeof(*b));
	b->text = text;
	b->len = len;
	if (len < off || memcmp(text, MAGIC, off))
		goto bad;
	while (off < len) {
		char *line = text + off, *nl = memchr(line, '\n', len - off), *sp = NULL, *end;
		unsigned long long n;
		size_t rest;
		if (!nl || memchr(line, 0, (size_t)(nl - line)))
			goto bad;	/* no end, or a NUL that would cut the name short */
		/* the last space: the length has none, a name may (RBAC names) */
		for (char *c = nl; c > line; c--)
			if (c[-1] == ' ') {
				sp = c - 1;
				break;
			}
		if (!sp || sp == line || sp[1] < '0' || sp[1] > '9' || (sp[1] == '0' && sp + 2 != nl))
			goto bad;	/* no length, no name, or a length with a leading zero (one bundle, one text) */
		errno = 0;
		n = strtoull(sp + 1, &end, 10);
		rest = len - (size_t)(nl + 1 - text);	/* bytes after the header line */
		if (end != nl || errno || n >= rest || nl[1 + n] != '\n')
			goto bad;
		if (b->n == cap) {
			cap = cap ? cap * 2 : 64;
			b->v = xrealloc(b->v, cap * sizeof(*b->v));
		}
		*sp = 0;
		b->v[b->n].name = line;
		b->v[b->n].data = nl + 1;
		b->v[b->n++].len = (size_t)n;
		off = (size_t)(nl + 1 - text) + (size_t)n + 1;
	}
	return 0;
bad:
	error("%s is not a valid rendered bundle (remove it and run again)", what);
	bundle_free(b);
	return -1;
}

/* the output hash a cache path names (bundle_path's inverse); 0 or -1 */
static int path_hash(const char *path, struct hash *h)
{
	const char *base = path_base(path);
	size_t blen = strlen(base), plen = (size_t)(base - path);
	char hex[33];

	/* ".../cache/rendered/XX/" + 30 hex digits */
	if (blen != 30 || plen < 19 || path[plen - 1] != '/' || path[plen - 4] != '/' ||
	    strncmp(path + plen - 19, "/cache/rendered/", 16))
		return -1;
	memcpy(hex, path + plen - 3, 2);
	memcpy(hex + 2, base, 30);
	hex[32] = 0;
	return hash_parse(hex, h);
}

static int (*on_missing)(const char *statedir, struct hash h);

void bundle_on_missing(int (*fn)(const char *statedir, struct hash h))
{
	on_missing = fn;
}

/* a cache file that is not there: read_file's answer again, after on_missing wrote it */
static char *read_cached(const char *path, size_t *len)
{
	char *text = read_file(path, len);
	struct hash h;

	if (text || errno != ENOENT || !on_missing || path_hash(path, &h) < 0)
		return text;
	/* STATE/cache/rendered/XX/REST: STATE is the path up to its last 49 characters */
	if (on_missing(astrndup(path, strlen(path) - 49), h) < 0) {
		errno = ENOENT;
		return NULL;
	}
	return read_file(path, len);
}

int bundle_read(const char *path, struct bundle *b)
{
	size_t len;
	char *text = read_cached(path, &len);
	struct hash want;

	if (!text) {
		memset(b, 0, sizeof(*b));
		return error("cannot read rendered output %s:", path);
	}
	if (!path_hash(path, &want) && !hash_eq(want, hash_bytes(text, len))) {
		/* truncated or corrupt: never trusted; gone, so the next plan renders it again */
		free(text);
		memset(b, 0, sizeof(*b));
		unlink(path);
		return error("rendered output %s does not match its hash (a truncated or corrupt cache file): "
			     "removed, the next run renders it again", path);
	}
	return bundle_parse(text, len, b, path);
}

int bundle_check(const char *statedir, struct hash h)
{
	const char *path = bundle_path(statedir, h);
	size_t len;
	char *text = read_cached(path, &len);
	int ok = text && hash_eq(h, hash_bytes(text, len));

	free(text);
	if (!ok && text)
		unlink(path);
	return ok ? 0 : -1;
}

void bundle_free(struct bundle *b)
{
	free(b->text);
	free(b->v);
	memset(b, 0, sizeof(*b));
}

void bundle_write(const struct bundle_entry *v, size_t n, struct buf *out)
{
	buf_adds(out, MAGIC);
	for (size_t i = 0; i < n; i++) {
		buf_addf(out, "%s %zu\n", v[i].name, v[i].len);
		buf_add(out, v[i].data, v[i].len);
		buf_addc(out, '\n');
	}
}

const char *bundle_path(const char *statedir, struct hash h)
{
	char hex[33];
	hash_hex(h, hex);
	return aprintf("%s/cache/rendered/%.2s/%s", statedir, hex, hex + 2);
}
