/* hash.c - XXH3-128, key inputs, and the stat cache (see hash.h) */
#include <ctype.h>
#include <dirent.h>
#include <limits.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/hash.h"
#include "base/util.h"

struct hasher {
	XXH3_state_t st;
};

struct hasher *hasher_new(void)
{
	struct hasher *h = xmalloc(sizeof(*h));
	XXH3_INITSTATE(&h->st);
	XXH3_128bits_reset(&h->st);
	return h;
}

void hasher_add(struct hasher *h, const void *p, size_t n)
{
	XXH3_128bits_update(&h->st, p, n);
}

void hasher_adds(struct hasher *h, const char *s)
{
	hasher_add(h, s ? s : "", s ? strlen(s) + 1 : 1);
}

void hasher_addh(struct hasher *h, struct hash x)
{
	hasher_add(h, &x, sizeof(x));
}

struct hash hasher_end(struct hasher *h)
{
	XXH128_hash_t r = XXH3_128bits_digest(&h->st);
	free(h);
	return (struct hash){ r.high64, r.low64 };
}

struct hash hash_bytes(const void *p, size_t n)
{
	XXH128_hash_t r = XXH3_128bits(p, n);
	return (struct hash){ r.high64, r.low64 };
}

int hash_eq(struct hash a, struct hash b)
{
	return a.hi == b.hi && a.lo == b.lo;
}

int hash_zero(struct hash a)
{
	return !a.hi && !a.lo;
}

void hash_hex(struct hash h, char out[33])
{
	snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.hi, (unsigned long long)h.lo);
}

int hash_parse(const char *hex, struct hash *h)
{
	char a[17], b[17], *e1, *e2;

	if (!hex || strlen(hex) != 32)
		return -1;
	for (int i = 0; i < 32; i++)
		if (!isxdigit((unsigned char)hex[i]))
			return -1;
	memcpy(a, hex, 16);
	a[16] = 0;
	memcpy(b, hex + 16, 16);
	b[16] = 0;
	h->hi = strtoull(a, &e1, 16);
	h->lo = strtoull(b, &e2, 16);
	return *e1 || *e2 ? -1 : 0;
}

const char *hash_short(struct hash h)
{
	char hex[33];
	hash_hex(h, hex);
	return astrndup(hex, 12);
}

/* ---- inputs ---- */

void inputs_add(struct inputs *in, const char *name, struct hash h)
{
	in->v = agrow(in->v, in->n, sizeof(*in->v));
	in->v[in->n].name = name;
	in->v[in->n].value = NULL;
	in->v[in->n].masked = 0;
	in->v[in->n++].h = h;
}

void inputs_add_value(struct inputs *in, const char *name, struct hash h, const char *value, int masked)
{
	inputs_add(in, name, h);
	in->v[in->n - 1].value = masked ? NULL : value;
	in->v[in->n - 1].masked = masked;
}

/* the name as the state keeps it: with its value or its mask (hash.h) */
static const char *stored_name(const struct input *e)
{
	if (e->masked)
		return aprintf("%s\x1e", e->name);
	if (e->value)
		return aprintf("%s\x1f%.*s", e->name, INPUT_VALUE_MAX, e->value);
	return e->name;
}

struct hash inputs_hash(const struct inputs *in)
{
	struct hasher *h = hasher_new();
	for (size_t i = 0; i < in->n; i++) {
		hasher_adds(h, in->v[i].name);
		hasher_addh(h, in->v[i].h);
	}
	return hasher_end(h);
}

static void put16(unsigned char **p, size_t n)
{
	(*p)[0] = (unsigned char)(n >> 8);
	(*p)[1] = (unsigned char)n;
	*p += 2;
}

static void put64(unsigned char **p, uint64_t v)
{
	for (int i = 7; i >= 0; i--)
		*(*p)++ = (unsigned char)(v >> (i * 8));
}

static uint64_t get64(const unsigned char **p)
{
	uint64_t v = 0;
	for (int i = 0; i < 8; i++)
		v = v << 8 | *(*p)++;
	return v;
}

void *inputs_encode(const struct inputs *in, size_t *len)
{
	size_t n = 0;
	unsigned char *buf, *p;

	const char **names = xmalloc((in->n + 1) * sizeof(*names));

	for (size_t i = 0; i < in->n; i++) {
		names[i] = stored_name(&in->v[i]);
		n += 2 + (strlen(names[i]) & 0xffff) + 16;
	}
	p = buf = xmalloc(n);
	for (size_t i = 0; i < in->n; i++) {
		size_t l = strlen(names[i]) & 0xffff;
		put16(&p, l);
		memcpy(p, names[i], l);
		p += l;
		put64(&p, in->v[i].h.hi);
		put64(&p, in->v[i].h.lo);
	}
	free(names);
	*len = n;
	return buf;
}

int inputs_decode(const void *blob, size_t len, struct inputs *out)
{
	const unsigned char *p = blob, *end = p + len;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		size_t l;
		struct hash h;
		char *name, *sep;
		if (end - p < 2)
			return -1;
		l = (size_t)p[0] << 8 | p[1];
		p += 2;
		if ((size_t)(end - p) < l + 16)
			return -1;
		name = astrndup((const char *)p, l);
		p += l;
		h.hi = get64(&p);
		h.lo = get64(&p);
		if ((sep = memchr(name, '\x1f', l))) {
			*sep = 0;
			inputs_add_value(out, name, h, sep + 1, 0);
		} else if (l && name[l - 1] == '\x1e') {
			name[l - 1] = 0;
			inputs_add_value(out, name, h, NULL, 1);
		} else {
			inputs_add(out, name, h);
		}
	}
	return 0;
}

static const struct input *find_input(const struct inputs *in, const char *name)
{
	for (size_t i = 0; i < in->n; i++)
		if (!strcmp(in->v[i].name, name))
			return &in->v[i];
	return NULL;
}

void inputs_diff(const struct inputs *old, const struct inputs *new, struct strlist *changed)
{
	for (size_t i = 0; i < new->n; i++) {
		const struct input *o = find_input(old, new->v[i].name);
		const char *what = NULL;
		if (!o)
			what = aprintf("%s added", new->v[i].name);
		else if (!hash_eq(o->h, new->v[i].h))
			what = aprintf("%s changed", new->v[i].name);
		if (what) {
			changed->v = agrow(changed->v, changed->n, sizeof(*changed->v));
			changed->v[changed->n++] = what;
		}
	}
	for (size_t i = 0; i < old->n; i++)
		if (!find_input(new, old->v[i].name)) {
			changed->v = agrow(changed->v, changed->n, sizeof(*changed->v));
			changed->v[changed->n++] = aprintf("%s removed", old->v[i].name);
		}
}

/* ---- globs ---- */

int glob_match(const char *g, const char *p)
{
	if (!strcmp(g, "**"))
		return 1;
	if (!strncmp(g, "**/*", 4) && !strpbrk(g + 4, "*?[\\/")) {
		/* the common case, a suffix such as .yaml anywhere: no fnmatch */
		size_t gl = strlen(g + 4), pl = strlen(p);
		const char *base = strrchr(p, '/');
		base = base ? base + 1 : p;
		return pl >= gl && !strcmp(p + pl - gl, g + 4) && (size_t)(p + pl - base) >= gl;
	}
	if (!strncmp(g, "**/", 3)) {
		if (glob_match(g + 3, p))
			return 1;
		for (const char *s = strchr(p, '/'); s; s = strchr(s + 1, '/'))
			if (glob_match(g + 3, s + 1))
				return 1;
		return 0;
	}
	{
		const char *dd = strstr(g, "/**/");
		if (dd) {
			/* prefix must match the leading segments exactly */
			size_t pl = (size_t)(dd - g);
			char *prefix = xmalloc(pl + 1);
			int r = 0;
			memcpy(prefix, g, pl);
			prefix[pl] = 0;
			for (const char *s = strchr(p, '/'); s && !r; s = strchr(s + 1, '/')) {
				char *head = xmalloc((size_t)(s - p) + 1);
				memcpy(head, p, (size_t)(s - p));
				head[s - p] = 0;
				if (!fnmatch(prefix, head, FNM_PATHNAME))
					r = glob_match(dd + 1, s + 1);
				free(head);
			}
			free(prefix);
			return r;
		}
	}
	return !fnmatch(g, p, FNM_PATHNAME);
}

/* ---- trees and the stat cache ---- */

struct scan {
	struct tree *t;
	const struct strlist *globs;
	size_t cap;
	char path[4096];
};

static int wanted(const struct scan *s, const char *rel)
{
	if (!s->globs || !s->globs->n)
		return 1;
	for (size_t i = 0; i < s->globs->n; i++)
		if (glob_match(s->globs->v[i], rel))
			return 1;
	return 0;
}

static int walk(struct scan *s, int dfd, size_t plen, int depth)
{
	DIR *d;
	struct dirent *e;

	if (depth > 64)
		return close(dfd), error("%s/%s: folders nested too deep (a symlink loop?)", s->t->dir, s->path);
	if (!(d = fdopendir(dfd)))
		return close(dfd), error("cannot read %s/%s:", s->t->dir, s->path);
	while ((e = readdir(d))) {
		struct stat st;
		size_t nlen = strlen(e->d_name);
		if (e->d_name[0] == '.' && (!e->d_name[1] || (e->d_name[1] == '.' && !e->d_name[2])))
			continue;
		if (plen + nlen + 2 >= sizeof(s->path)) {
			closedir(d);
			return error("%s: path too long", s->t->dir);
		}
		memcpy(s->path + plen, e->d_name, nlen + 1);
		if (e->d_type == DT_LNK || e->d_type == DT_UNKNOWN) {
			/* a symlink may point anywhere: it must stay inside dir (hash.h) */
			char *full = aprintf("%s/%s", s->t->dir, s->path), real[PATH_MAX], root[PATH_MAX];
			if (realpath(full, real) && realpath(s->t->dir, root) &&
			    (strncmp(real, root, strlen(root)) || (real[strlen(root)] && real[strlen(root)] != '/'))) {
				closedir(d);
				return error("%s is a symlink out of %s (to %s); inputs must stay inside the folder",
					     full, s->t->dir, real);
			}
		}
		if (fstatat(dirfd(d), e->d_name, &st, 0) < 0) {
			if (errno == ENOENT)
				continue;	/* dangling symlink or raced away */
			closedir(d);
			return error("cannot stat %s/%s:", s->t->dir, s->path);
		}
		if (S_ISDIR(st.st_mode)) {
			int sub;
			if (e->d_name[0] == '.')
				continue;	/* .git and friends are never inputs */
			sub = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
			if (sub < 0) {
				closedir(d);
				return error("cannot open %s/%s:", s->t->dir, s->path);
			}
			s->path[plen + nlen] = '/';
			s->path[plen + nlen + 1] = 0;
			if (walk(s, sub, plen + nlen + 1, depth + 1) < 0) {
				closedir(d);
				return -1;
			}
			continue;
		}
		if (!S_ISREG(st.st_mode) || !wanted(s, s->path))
			continue;
		if (s->t->n == s->cap) {
			s->cap = s->cap ? s->cap * 2 : 128;
			s->t->v = xrealloc(s->t->v, s->cap * sizeof(*s->t->v));
		}
		s->t->v[s->t->n++] = (struct tree_file){
			xstrdup(s->path), (int64_t)st.st_size,
			(int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec,
			(int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec,
			(uint64_t)st.st_ino, (uint64_t)st.st_dev, { 0, 0 }, 0
		};
	}
	closedir(d);
	return 0;
}

static int filecmp(const void *a, const void *b)
{
	return strcmp(((const struct tree_file *)a)->path, ((const struct tree_file *)b)->path);
}

int scan_tree(const char *dir, const struct strlist *globs, struct tree *t)
{
	struct scan s = { t, globs, 0, { 0 } };
	struct hasher *h;
	int fd;

	memset(t, 0, sizeof(*t));
	t->dir = dir;
	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
		return error("cannot open folder %s:", dir);
	if (walk(&s, fd, 0, 0) < 0)
		return -1;
	if (t->n > 1)
		qsort(t->v, t->n, sizeof(*t->v), filecmp);
	h = hasher_new();
	for (size_t i = 0; globs && i < globs->n; i++)
		hasher_adds(h, globs->v[i]);
	hasher_adds(h, "");
	for (size_t i = 0; i < t->n; i++) {
		const struct tree_file *f = &t->v[i];
		uint64_t st[5] = { (uint64_t)f->size, (uint64_t)f->mtime, (uint64_t)f->ctime, f->ino, f->dev };
		hasher_adds(h, f->path);
		hasher_add(h, st, sizeof(st));
	}
	t->fingerprint = hasher_end(h);
	return 0;
}

void tree_free(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free((char *)t->v[i].path);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

int hash_path(const char *path, struct hash *out)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? -1 : hash_fd(fd, out);
}

int hash_fd(int fd, struct hash *out)
{
	struct hasher *h;
	char *chunk;
	ssize_t r;
	int e;

	/* in pieces: a 100 MB input or bundle costs 64 KiB, not 100 MB */
	h = hasher_new();
	chunk = xmalloc(1 << 16);
	while ((r = read(fd, chunk, 1 << 16)) != 0) {
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			break;
		hasher_add(h, chunk, (size_t)r);
	}
	free(chunk);
	e = errno;
	close(fd);
	*out = hasher_end(h);
	errno = e;
	return r < 0 ? -1 : 0;
}

static int hash_file(const char *dir, const char *rel, struct hash *out)
{
	const char *p = aprintf("%s/%s", dir, rel);

	return hash_path(p, out) < 0 ? error("cannot read %s:", p) : 0;
}

int hash_tree(struct tree *t, const struct tree_file *old, size_t nold, long long run_start_ns)
{
	struct hasher *h = hasher_new();
	size_t j = 0;

	t->racy = 0;
	for (size_t i = 0; i < t->n; i++) {
		struct tree_file *f = &t->v[i];
		int c = 1;
		while (j < nold && (c = strcmp(old[j].path, f->path)) < 0)
			j++;
		f->racy = f->mtime + 2000000000LL > run_start_ns;
		if (j < nold && c == 0 && !old[j].racy && !f->racy && old[j].size == f->size &&
		    old[j].mtime == f->mtime && old[j].ctime == f->ctime && old[j].ino == f->ino && old[j].dev == f->dev) {
			f->h = old[j].h;
		} else if (hash_file(t->dir, f->path, &f->h) < 0) {
			free(h);
			return -1;
		}
		/*
		 * git's racy rule: a file changed within 2 s of the run may change
		 * again without its stat changing; it is recorded as racy and
		 * hashed again next time.
		 */
		if (f->racy)
			t->racy = 1;
		hasher_adds(h, f->path);
		hasher_addh(h, f->h);
	}
	t->content = hasher_end(h);
	return 0;
}

void *tree_encode(const struct tree *t, size_t *len)
{
	size_t n = 0;
	unsigned char *buf, *p;

	for (size_t i = 0; i < t->n; i++)
		n += 2 + strlen(t->v[i].path) + 6 * 8 + 16;
	p = buf = xmalloc(n ? n : 1);
	for (size_t i = 0; i < t->n; i++) {
		const struct tree_file *f = &t->v[i];
		size_t l = strlen(f->path) & 0xffff;
		put16(&p, l);
		memcpy(p, f->path, l);
		p += l;
		put64(&p, (uint64_t)f->size);
		put64(&p, (uint64_t)f->mtime);
		put64(&p, (uint64_t)f->ctime);
		put64(&p, f->ino);
		put64(&p, f->dev);
		put64(&p, f->h.hi);
		put64(&p, f->h.lo);
		put64(&p, (uint64_t)f->racy);
	}
	*len = n;
	return buf;
}

int tree_decode(const void *blob, size_t len, struct tree_file **v, size_t *n)
{
	const unsigned char *p = blob, *end = p + len;
	size_t cnt = 0, cap = 0;
	struct tree_file *out = NULL;

	while (p < end) {
		size_t l;
		if (end - p < 2)
			return -1;
		l = (size_t)p[0] << 8 | p[1];
		p += 2;
		if ((size_t)(end - p) < l + 64) {
			free(out);
			return -1;
		}
		if (cnt == cap) {
			cap = cap ? cap * 2 : 64;
			out = xrealloc(out, cap * sizeof(*out));
		}
		out[cnt].path = astrndup((const char *)p, l);
		p += l;
		out[cnt].size = (int64_t)get64(&p);
		out[cnt].mtime = (int64_t)get64(&p);
		out[cnt].ctime = (int64_t)get64(&p);
		out[cnt].ino = get64(&p);
		out[cnt].dev = get64(&p);
		out[cnt].h.hi = get64(&p);
		out[cnt].h.lo = get64(&p);
		out[cnt].racy = (int)get64(&p);
		cnt++;
	}
	*v = amalloc((cnt ? cnt : 1) * sizeof(**v));
	if (cnt)
		memcpy(*v, out, cnt * sizeof(**v));
	free(out);
	*n = cnt;
	return 0;
}

void tree_inputs(const struct tree *t, const char *prefix, struct inputs *in)
{
	for (size_t i = 0; i < t->n; i++)
		inputs_add(in, prefix ? aprintf("%s/%s", prefix, t->v[i].path) : astrdup(t->v[i].path), t->v[i].h);
}
