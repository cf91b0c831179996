/* bundle.c - rendered packages on disk (format in bundle.h) */
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "bundle.h"
#include "hash.h"
#include "util.h"

#define MAGIC "idpmake-bundle 1\n"

int bundle_parse(char *text, size_t len, struct bundle *b, const char *what)
{
	size_t off = strlen(MAGIC), cap = 0;

	memset(b, 0, sizeof(*b));
	b->text = text;
	b->len = len;
	if (len < off || memcmp(text, MAGIC, off))
		goto bad;
	while (off < len) {
		char *nl = memchr(text + off, '\n', len - off), *sp, *end;
		unsigned long long n;
		if (!nl || !(sp = memchr(text + off, ' ', (size_t)(nl - (text + off)))))
			goto bad;
		n = strtoull(sp + 1, &end, 10);
		if (end != nl || n > len - (size_t)(nl + 1 - text) - 1 || nl[1 + n] != '\n')
			goto bad;
		if (b->n == cap) {
			cap = cap ? cap * 2 : 64;
			b->v = xrealloc(b->v, cap * sizeof(*b->v));
		}
		*sp = 0;
		b->v[b->n].name = text + off;
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

int bundle_read(const char *path, struct bundle *b)
{
	size_t len;
	char *text = read_file(path, &len);

	if (!text) {
		memset(b, 0, sizeof(*b));
		return error("cannot read rendered output %s:", path);
	}
	return bundle_parse(text, len, b, path);
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
