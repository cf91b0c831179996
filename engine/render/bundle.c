/* bundle.c - rendered packages on disk (format in bundle.h) */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "base/hash.h"
#include "base/names.h"
#include "base/util.h"

#define MAGIC BUNDLE_MAGIC

/*
 * Every bound is checked as "what is left" so that nothing can wrap: a
 * header on the last line, a length past the end (a truncated file) or a
 * length that is not a plain decimal number make the bundle invalid, and
 * so does a NUL in a header line (a name cut short names another file).
 */
/*
 * A header line line[0..n) without its newline: NAME SP LEN.  0 with the
 * name's end (*sp, the last space: the length has none, a name may, as
 * RBAC names do) and the length, or -1: a NUL (a name cut short names
 * another file), no length, no name, or a length that is not plain
 * decimal (a leading zero: one bundle, one text), or a name that is not a
 * relative path down (an empty, "." or ".." part, a control character:
 * hooks' IDPMAKE_RENDERED and diff write a bundle out as DIR/NAME).
 */
static int header(char *line, size_t n, char **sp, unsigned long long *len)
{
	char *nl = line + n, *end;
	int bad;

	*sp = NULL;
	if (memchr(line, 0, n))
		return -1;
	for (char *c = nl; c > line; c--)
		if (c[-1] == ' ') {
			*sp = c - 1;
			break;
		}
	if (!*sp || *sp == line || nl == *sp + 1 || (*sp)[1] < '0' || (*sp)[1] > '9' || ((*sp)[1] == '0' && *sp + 2 != nl))
		return -1;
	for (char *c = *sp + 1; c < nl; c++)
		if (*c < '0' || *c > '9')
			return -1;
	/* a name is a relative path down (names.c): no empty, "." or ".." part (readers write dir/NAME) */
	**sp = 0;
	bad = name_bad(line, NAME_PATH) != NULL;
	**sp = ' ';
	if (bad)
		return -1;
	errno = 0;
	*len = strtoull(*sp + 1, &end, 10);
	return end != nl || errno ? -1 : 0;
}

int bundle_parse(char *text, size_t len, struct bundle *b, const char *what)
{
	size_t off = strlen(MAGIC), cap = 0;

	memset(b, 0, sizeof(*b));
	b->text = text;
	b->len = len;
	if (len < off || memcmp(text, MAGIC, off))
		goto bad;
	while (off < len) {
		char *line = text + off, *nl = memchr(line, '\n', len - off), *sp;
		unsigned long long n;
		size_t rest;
		if (!nl || header(line, (size_t)(nl - line), &sp, &n) < 0)
			goto bad;
		rest = len - (size_t)(nl + 1 - text);	/* bytes after the header line */
		if (n >= rest || nl[1 + n] != '\n')
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

/* a cache file that is not there, written by on_missing; 0, or -1 with errno ENOENT */
static int fill_missing(const char *path)
{
	struct hash h;

	if (!on_missing || path_hash(path, &h) < 0)
		return errno = ENOENT, -1;
	/* STATE/cache/rendered/XX/REST: STATE is the path up to its last 49 characters */
	if (on_missing(astrndup(path, strlen(path) - 49), h) < 0)
		return errno = ENOENT, -1;
	return 0;
}

/*
 * A cache file opened for reading, after on_missing wrote it if it was
 * missing; -1 with errno.  Only a regular file: a FIFO put in its place
 * would make the run wait forever for a writer.
 */
static int open_cached(const char *path)
{
	int fd = open_regular(path);

	if (fd >= 0 || errno != ENOENT || fill_missing(path) < 0)
		return fd;
	return open_regular(path);
}

static char *read_cached(const char *path, size_t *len)
{
	int fd = open_cached(path);

	return fd < 0 ? NULL : read_fd(fd, len);
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

/* ---- one entry at a time ---------------------------------------------- */

#define HEADER_MAX 4096	/* a name is at most a path; a longer header line is corrupt */

int bundle_open(struct bundle_stream *bs, const char *path)
{
	char magic[sizeof(MAGIC) - 1];
	struct stat st;
	int fd;

	memset(bs, 0, sizeof(*bs));
	bs->path = path;
	bs->check = !path_hash(path, &bs->want);
	if ((fd = open_cached(path)) >= 0 && !(bs->f = fdopen(fd, "r")))
		close(fd);
	if (!bs->f || fstat(fileno(bs->f), &st) < 0) {
		if (bs->f)
			fclose(bs->f);
		bs->f = NULL;
		return error("cannot read rendered output %s: %s", path, strerror(errno));
	}
	bs->left = (unsigned long long)st.st_size;
	bs->h = hasher_new();
	bs->line = xmalloc(HEADER_MAX + 1);
	if (fread(magic, 1, sizeof(magic), bs->f) != sizeof(magic) || memcmp(magic, MAGIC, sizeof(magic))) {
		bundle_close(bs);
		return error("%s is not a valid rendered bundle (remove it and run again)", path);
	}
	hasher_add(bs->h, magic, sizeof(magic));
	bs->left -= sizeof(magic);
	return 0;
}

/* the end of a bad stream: its message, and a cache file that lies removed */
static int stream_bad(struct bundle_stream *bs, const char *why)
{
	if (bs->check)
		unlink(bs->path);
	return error("%s is not a valid rendered bundle (%s): %s", bs->path, why,
		     bs->check ? "removed, the next run renders it again" : "remove it and run again");
}

int bundle_next(struct bundle_stream *bs, const char **name, const char **data, size_t *len)
{
	size_t n = 0;
	int c;
	char *sp;
	unsigned long long dl;

	while ((c = getc(bs->f)) != EOF && c != '\n' && n < HEADER_MAX)
		bs->line[n++] = (char)c;
	if (c == EOF && !n) {
		if (ferror(bs->f))
			return error("cannot read rendered output %s: %s", bs->path, strerror(errno));
		/* the end: every byte read, and they hash to the file's name */
		if (bs->check) {
			struct hash got = hasher_end(bs->h);
			bs->h = NULL;
			if (!hash_eq(bs->want, got))
				return stream_bad(bs, "its bytes do not match its hash: a truncated or corrupt cache file");
		}
		return 0;
	}
	bs->line[n] = 0;	/* header's strtoull stops here */
	if (c != '\n' || n + 1 > bs->left || header(bs->line, n, &sp, &dl) < 0 || dl >= bs->left - n - 1)
		return stream_bad(bs, "a bad header line");
	hasher_add(bs->h, bs->line, n);
	hasher_add(bs->h, "\n", 1);
	bs->left -= n + 1;
	*sp = 0;
	if (bs->cap < dl + 1) {
		bs->cap = (size_t)dl + 1;
		bs->data = xrealloc(bs->data, bs->cap);
	}
	if (fread(bs->data, 1, (size_t)dl + 1, bs->f) != (size_t)dl + 1 || bs->data[dl] != '\n')
		return stream_bad(bs, "an entry cut short");
	hasher_add(bs->h, bs->data, (size_t)dl + 1);
	bs->left -= dl + 1;
	bs->data[dl] = 0;
	*name = bs->line;
	*data = bs->data;
	*len = (size_t)dl;
	return 1;
}

void bundle_close(struct bundle_stream *bs)
{
	if (bs->f)
		fclose(bs->f);
	if (bs->h)
		hasher_end(bs->h);
	free(bs->line);
	free(bs->data);
	memset(bs, 0, sizeof(*bs));
}

int bundle_check(const char *statedir, struct hash h)
{
	const char *path = bundle_path(statedir, h);
	struct hash got;
	int fd = open_cached(path);

	if (fd < 0) {
		if (errno == EINVAL)
			unlink(path);	/* not a regular file: the next render writes one in its place */
		return -1;
	}
	if (hash_fd(fd, &got) < 0)
		return -1;
	if (hash_eq(h, got))
		return 0;
	unlink(path);
	return -1;
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

int bundle_is_manifest(const char *name)
{
	size_t n = strlen(name);

	return (n > 5 && !strcmp(name + n - 5, ".yaml")) || (n > 4 && !strcmp(name + n - 4, ".yml")) ||
	       (n > 5 && !strcmp(name + n - 5, ".json"));
}
