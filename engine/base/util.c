/* util.c - diagnostics, allocation, the arena, small file helpers */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdalign.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <pthread.h>

#include "base/diag.h"
#include "base/util.h"

const char *argv0 = "idpmake";
int loc_errors, loc_quiet;
void (*diag_hook)(void);

/* the message of a diagnostic, for diag_add (a format ending in ':' gets strerror(e)) */
static void capture(const char *severity, const char *file, int line, int col, int e, const char *fmt, va_list ap)
{
	char msg[4096];
	size_t n = strlen(fmt);
	int len = vsnprintf(msg, sizeof(msg), fmt, ap);

	if (len >= 0 && (size_t)len < sizeof(msg) && n && fmt[n - 1] == ':')
		snprintf(msg + len, sizeof(msg) - (size_t)len, " %s", strerror(e));
	diag_add(severity, file, line, col, msg);
}

static void vwarnx(const char *prefix, const char *fmt, va_list ap)
{
	int e = errno;
	size_t n = strlen(fmt);

	if (diag_capturing()) {
		capture(*prefix == 'w' ? "warning" : "error", NULL, 0, 0, e, fmt, ap);
		return;
	}
	if (diag_hook)
		diag_hook();	/* status.c: end the terminal's status line first */
	fprintf(stderr, "%s: %s", argv0, prefix);
	vfprintf(stderr, fmt, ap);
	if (n && fmt[n - 1] == ':')
		fprintf(stderr, " %s", strerror(e));
	fputc('\n', stderr);
}

void warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarnx("warning: ", fmt, ap);
	va_end(ap);
}

int error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vwarnx("error: ", fmt, ap);
	va_end(ap);
	return -1;
}

void fatal(const char *fmt, ...)
{
	va_list ap;
	diag_capture(0);	/* it exits: said now, on stderr */
	va_start(ap, fmt);
	vwarnx("error: ", fmt, ap);
	va_end(ap);
	exit(1);
}

/* "file:line:col: KIND: msg" (or "file: KIND: msg"), or captured as data (diag.h) */
static void located(const char *kind, struct loc loc, const char *fmt, va_list ap)
{
	if (diag_capturing()) {
		capture(kind, loc.file ? loc.file : argv0, loc.line, loc.col, errno, fmt, ap);
		return;
	}
	if (loc.line)
		fprintf(stderr, "%s:%d:%d: %s: ", loc.file, loc.line, loc.col, kind);
	else
		fprintf(stderr, "%s: %s: ", loc.file ? loc.file : argv0, kind);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
}

/*
 * loc_errors is the manifest loader's count (one thread).  Render workers
 * print through here too, so the count is kept with atomics, but they decide
 * a render's failure by their own per-call counts, never by this one.
 */
void loc_verror(struct loc loc, const char *fmt, va_list ap)
{
	if (loc_quiet) {
		__atomic_add_fetch(&loc_errors, 1, __ATOMIC_RELAXED);
		return;
	}
	located("error", loc, fmt, ap);
	__atomic_add_fetch(&loc_errors, 1, __ATOMIC_RELAXED);
}

void loc_error(struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	loc_verror(loc, fmt, ap);
	va_end(ap);
}

/* "file:line:col: warning: msg" (or captured, diag.h); counts nothing */
void loc_warn(struct loc loc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	located("warning", loc, fmt, ap);
	va_end(ap);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		fatal("out of memory");
	return p;
}

void *xcalloc(size_t n, size_t m)
{
	void *p = calloc(n ? n : 1, m ? m : 1);
	if (!p)
		fatal("out of memory");
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		fatal("out of memory");
	return p;
}

char *xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	return memcpy(xmalloc(n), s, n);
}

/*
 * The arena: blocks of 1 MiB (or one block per larger request) chained
 * together.  Worker threads allocate too, so it takes a mutex.
 */
struct block {
	struct block *next;
	size_t used, size;
	alignas(max_align_t) unsigned char data[];
};

static struct block *arena;
static pthread_mutex_t arena_lock = PTHREAD_MUTEX_INITIALIZER;

void *amalloc(size_t n)
{
	const size_t align = alignof(max_align_t);
	void *p;

	n = (n + align - 1) & ~(align - 1);
	pthread_mutex_lock(&arena_lock);
	if (!arena || arena->size - arena->used < n) {
		size_t size = n > (1u << 20) ? n : (1u << 20);
		struct block *b = xmalloc(sizeof(*b) + size);
		b->used = 0;
		b->size = size;
		b->next = arena;
		arena = b;
	}
	p = arena->data + arena->used;
	arena->used += n;
	pthread_mutex_unlock(&arena_lock);
	return memset(p, 0, n);
}

char *astrndup(const char *s, size_t n)
{
	char *p = amalloc(n + 1);
	memcpy(p, s, n);
	p[n] = 0;
	return p;
}

char *astrdup(const char *s)
{
	return s ? astrndup(s, strlen(s)) : NULL;
}

/* the length of a control character at s that `keep` does not name: 1 (C0, DEL), 2 (C1 in UTF-8), or 0 */
static size_t control_at(const unsigned char *s, const char *keep)
{
	if ((*s < 0x20 || *s == 0x7f) && !strchr(keep, *s))
		return 1;
	return *s == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f ? 2 : 0;
}

/* the escaping of term_safe and term_safe_text: control characters but those in `keep` as \xHH */
static const char *escape_controls(const char *s, const char *keep)
{
	const unsigned char *p;
	size_t n = 0;
	char *out, *o;

	if (!s)
		return NULL;
	for (p = (const unsigned char *)s; *p;) {
		size_t k = control_at(p, keep);
		n += k ? 4 * k : 1;
		p += k ? k : 1;
	}
	if (n == (size_t)(p - (const unsigned char *)s))
		return s;
	o = out = amalloc(n + 1);
	for (p = (const unsigned char *)s; *p;) {
		size_t k = control_at(p, keep);
		if (!k) {
			*o++ = (char)*p++;
			continue;
		}
		for (; k; k--, p++)
			o += sprintf(o, "\\x%02x", *p);
	}
	*o = 0;
	return out;
}

const char *term_safe(const char *s)
{
	return escape_controls(s, "");
}

const char *term_safe_text(const char *s)
{
	return escape_controls(s, "\n\t");
}

char *aprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	p = amalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}

void afree_all(void)
{
	while (arena) {
		struct block *b = arena;
		arena = b->next;
		free(b);
	}
}

struct amark amark(void)
{
	struct amark m;

	pthread_mutex_lock(&arena_lock);
	m.block = arena;
	m.used = arena ? arena->used : 0;
	pthread_mutex_unlock(&arena_lock);
	return m;
}

void arelease(struct amark m)
{
	pthread_mutex_lock(&arena_lock);
	while (arena && arena != m.block) {
		struct block *b = arena;
		arena = b->next;
		free(b);
	}
	if (arena)
		arena->used = m.used;
	pthread_mutex_unlock(&arena_lock);
}

void *agrow(void *p, size_t n, size_t sz)
{
	/* capacity is the next power of two >= n+1; grows when n is one */
	if (n == 0 || (n & (n - 1)) == 0) {
		size_t cap = n ? n * 2 : 1;
		void *q = amalloc(cap * sz);
		if (n)
			memcpy(q, p, n * sz);
		return q;
	}
	return p;
}

mode_t user_umask = (mode_t)-1;

/* mode: what a new folder gets, (mode_t)-1 for 0777 under the process's umask */
static int mkdirs_mode(const char *path, mode_t mode)
{
	char *p = xstrdup(path), *s;
	int r = 0;

	for (s = p + 1; ; s++) {
		if (*s == '/' || !*s) {
			char c = *s;
			*s = 0;
			if (mkdir(p, 0777) == 0) {
				if (mode != (mode_t)-1 && chmod(p, mode) < 0) {
					r = -1;
					break;
				}
			} else if (errno != EEXIST) {
				r = -1;
				break;
			}
			*s = c;
			if (!c)
				break;
		}
	}
	free(p);
	return r;
}

int mkdirs(const char *path)
{
	return mkdirs_mode(path, (mode_t)-1);
}

int mkdirs_user(const char *path)
{
	return mkdirs_mode(path, user_umask == (mode_t)-1 ? (mode_t)-1 : 0777 & ~user_umask);
}

int rmtree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st) < 0)
		return errno == ENOENT ? 0 : -1;
	if (!S_ISDIR(st.st_mode))
		return unlink(path);
	if (!(d = opendir(path)))
		return -1;
	while ((e = readdir(d))) {
		char *sub;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		sub = xmalloc(strlen(path) + strlen(e->d_name) + 2);
		sprintf(sub, "%s/%s", path, e->d_name);
		rmtree(sub);
		free(sub);
	}
	closedir(d);
	return rmdir(path);
}

char *read_file(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	return fd < 0 ? NULL : read_fd(fd, len);
}

int open_regular(const char *path)
{
	/* O_NONBLOCK: opening a FIFO for reading would wait for a writer */
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK), fl, e;
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0)
		e = errno;
	else if (!S_ISREG(st.st_mode))
		e = S_ISDIR(st.st_mode) ? EISDIR : EINVAL;	/* a FIFO, a device, a socket */
	else if ((fl = fcntl(fd, F_GETFL)) < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0)
		e = errno;
	else
		return fd;
	close(fd);
	errno = e;
	return -1;
}

char *read_fd(int fd, size_t *len)
{
	struct stat st;
	char *buf;
	size_t n = 0, cap;
	ssize_t r;

	if (fstat(fd, &st) < 0) {
		close(fd);
		return NULL;
	}
	cap = (size_t)st.st_size + 1;
	buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0) {
			if (errno == EINTR)
				continue;
			free(buf);
			close(fd);
			return NULL;
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	close(fd);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

int write_all(int fd, const void *data, size_t len)
{
	size_t off = 0;

	while (off < len) {
		ssize_t r = write(fd, (const char *)data + off, len - off);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -1;
		off += (size_t)r;
	}
	return 0;
}

/* open_tmp_beside's, created with mode (less the umask) */
static int open_tmp_mode(const char *path, char **tmp, mode_t mode)
{
	static unsigned long counter;	/* threads write too: a name per call */
	int fd;

	*tmp = xmalloc(strlen(path) + 48);
	sprintf(*tmp, "%s.tmp%ld.%lu", path, (long)getpid(), __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED));
	fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST && unlink(*tmp) == 0)	/* left by a crashed run with our pid */
		fd = open(*tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, mode);
	return fd;
}

int open_tmp_beside(const char *path, char **tmp)
{
	return open_tmp_mode(path, tmp, 0666);
}

/* fsync the folder holding path, so that a rename in it survives a crash */
int sync_dir(const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t n = !slash ? 0 : slash == path ? 1 : (size_t)(slash - path);
	char *dir = xmalloc(n + 2);
	int fd, r = 0, e;

	if (n)
		memcpy(dir, path, n);
	else
		dir[n++] = '.';
	dir[n] = 0;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0 || (fsync(fd) < 0 && errno != EINVAL))
		r = -1;	/* EINVAL: a file system that cannot sync folders */
	e = errno;
	if (fd >= 0)
		close(fd);
	free(dir);
	errno = e;
	return r;
}

/*
 * Write a temporary file beside path, fsync it, rename it over path, fsync
 * the folder: a reader sees the old file or the whole new one, and after a
 * crash the name never points at data that did not reach the disk (a
 * truncated cache bundle, issue 12 #6).  Without `sync`, no fsync: copies
 * made again on demand (render -o, a hook's IDPMAKE_RENDERED), where two
 * fsyncs a file made 20,000 objects cost a minute.
 */
static int write_file_mode(const char *path, const void *data, size_t len, mode_t mode, int sync)
{
	char *tmp;
	/* a mode is the file's from its creation: no moment where another user may open it */
	int fd = open_tmp_mode(path, &tmp, mode == (mode_t)-1 ? 0666 : mode), e;

	if (fd < 0)
		goto fail;
	if (mode != (mode_t)-1 && fchmod(fd, mode) < 0) {
		close(fd);
		goto fail;
	}
	if (write_all(fd, data, len) < 0) {
		close(fd);
		goto fail;
	}
	/* the data is on the disk before the name points at it, and the name is too */
	if (sync && fsync(fd) < 0) {
		close(fd);
		goto fail;
	}
	if (close(fd) < 0 || rename(tmp, path) < 0)
		goto fail;
	free(tmp);
	return sync ? sync_dir(path) : 0;
fail:
	e = errno;
	unlink(tmp);
	free(tmp);
	errno = e;
	return -1;
}

int write_file_atomic(const char *path, const void *data, size_t len)
{
	return write_file_mode(path, data, len, (mode_t)-1, 1);
}

int write_file_copy(const char *path, const void *data, size_t len)
{
	return write_file_mode(path, data, len, (mode_t)-1, 0);
}

int write_file_private(const char *path, const void *data, size_t len)
{
	return write_file_mode(path, data, len, 0600, 1);
}

int write_file_user(const char *path, const void *data, size_t len)
{
	return write_file_mode(path, data, len, user_umask == (mode_t)-1 ? (mode_t)-1 : 0666 & ~user_umask, 0);
}

char *path_join(const char *a, const char *b)
{
	if (!a || !*a || b[0] == '/' || !strcmp(a, "."))
		return astrdup(b);
	return aprintf("%s%s%s", a, a[strlen(a) - 1] == '/' ? "" : "/", b);
}

const char *path_base(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

char *path_dir(const char *p)
{
	const char *s = strrchr(p, '/');
	if (!s)
		return astrdup(".");
	if (s == p)
		return astrdup("/");
	return astrndup(p, (size_t)(s - p));
}

int strptrcmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

long long wall_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/*
 * Edit distance for "did you mean": Levenshtein's insert, delete and
 * substitute, plus a swap of two neighbours as one edit (the optimal string
 * alignment distance), so 'snyc' is one edit from 'sync', as 'synx' is.
 */
size_t edit_distance(const char *a, const char *b, int fold)
{
	size_t la = strlen(a), lb = strlen(b), small[3][128], r;
	/* called once per candidate (a cluster lists many): no allocation for short names */
	size_t *rows = lb < 128 ? &small[0][0] : xcalloc(3 * (lb + 1), sizeof(size_t));
	size_t *pp = rows, *prev = rows + (lb < 128 ? 128 : lb + 1), *row = prev + (lb < 128 ? 128 : lb + 1);

#define EQ_(x, y) (fold ? tolower((unsigned char)(x)) == tolower((unsigned char)(y)) : (x) == (y))
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *t = pp;
		pp = prev;
		prev = row;
		row = t;
		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t best = prev[j - 1] + !EQ_(a[i - 1], b[j - 1]);
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			if (i > 1 && j > 1 && EQ_(a[i - 1], b[j - 2]) && EQ_(a[i - 2], b[j - 1]) && pp[j - 2] + 1 < best)
				best = pp[j - 2] + 1;
			row[j] = best;
		}
	}
#undef EQ_
	r = row[lb];
	if (rows != &small[0][0])
		free(rows);
	return r;
}

/*
 * "did you mean", the one rule: the word of `words` fewest edits from s
 * (edit_distance), when that is at most 2 (3 for a word over 4 letters) and
 * leaves some of s standing; of equally near ones, the one that shares the
 * longest start with s ('packs' is 'packages', not 'vars'), then the first.
 */
const char *closest(const char *s, const char *const *words, size_t n)
{
	const char *best = NULL;
	size_t bd = (size_t)-1, bp = 0, ls = strlen(s);

	for (size_t i = 0; i < n; i++) {
		size_t d, p = 0;
		if (!words[i])
			continue;
		d = edit_distance(s, words[i], 0);
		while (s[p] && s[p] == words[i][p])
			p++;
		if (d < bd || (d == bd && p > bp)) {
			bd = d;
			bp = p;
			best = words[i];
		}
	}
	return best && bd <= (ls > 4 ? 3u : 2u) && bd < ls ? best : NULL;
}

const char *text_last_line(const char *text)
{
	const char *end = text + strlen(text), *start;

	while (end > text && (end[-1] == '\n' || end[-1] == '\r' || end[-1] == ' '))
		end--;
	start = end;
	while (start > text && start[-1] != '\n')
		start--;
	return term_safe(astrndup(start, (size_t)(end - start)));
}

void memwipe(void *p, size_t n)
{
	if (p && n)
		explicit_bzero(p, n);	/* a memset before free() is a dead store the compiler may drop */
}
