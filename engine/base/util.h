/* util.h - diagnostics, allocation and the run's arena */
#ifndef IDPMAKE_UTIL_H
#define IDPMAKE_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <sys/types.h>

/* where something was written, for file:line:col diagnostics */
struct loc {
	const char *file;	/* the manifest or rule file */
	int line, col;		/* 1-based; 0 when unknown */
};

/* an ordered string map entry (vars, labels, set) */
struct kv {
	const char *key;
	const char *value;
	struct loc loc;		/* where the value was written */
};

struct kvlist {
	struct kv *v;
	size_t n;
};

struct strlist {
	const char **v;
	struct loc *loc;	/* loc[i] is where v[i] was written */
	size_t n;
};


extern const char *argv0;	/* "idpmake" */

/*
 * warn, error and fatal print "idpmake: ..." to stderr; a format ending in
 * ':' appends strerror(errno).  error() returns -1 so callers can write
 * `return error(...)` and not print again.  fatal() exits 1.
 */
void warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* called before each of them prints (any thread): status.c ends its status line */
extern void (*diag_hook)(void);
int error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
_Noreturn void fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/*
 * "file:line:col: error: msg" for manifests; counts into loc_errors, the
 * manifest loader's count.  Code that runs on worker threads (renders)
 * counts its own errors and must not read or reset loc_errors.
 */
void loc_error(struct loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void loc_verror(struct loc loc, const char *fmt, va_list ap);
/* "file:line:col: warning: msg"; counts nothing.  Both are kept as data instead while diag.h's capture is on */
void loc_warn(struct loc loc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
extern int loc_errors;
extern int loc_quiet;		/* count errors without printing them (probing) */

void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t m);
/* zero n bytes of a secret (a token, a key, a password) so that it stays zeroed: never dropped as a dead store */
void memwipe(void *p, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* arena: run-lifetime memory, freed all at once at exit */
void *amalloc(size_t n);		/* zeroed, aligned for any type */
char *astrdup(const char *s);
char *astrndup(const char *s, size_t n);
char *aprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void afree_all(void);
/*
 * s as it may reach a terminal (arena; s itself when it needs nothing):
 * every control character, newline and tab included, DEL, and the C1
 * controls (U+0080..U+009F, which some terminals take as ESC [) as \xHH.
 * For every text read from git or Argo CD (a commit's author and summary,
 * Argo CD's messages, the names of objects): colour, cursor and
 * title-setting escapes, and a newline forging a line of output, stop here.
 */
const char *term_safe(const char *s);
/* the last non-empty line of text (a child's log), made safe for a terminal (arena) */
const char *text_last_line(const char *text);
/* the same for text of many lines shown as such (a diff's patch): newlines and tabs stay */
const char *term_safe_text(const char *s);
/* the arena's top, and freeing what was allocated since (one thread; the fuzz targets) */
struct amark {
	void *block;
	size_t used;
};
struct amark amark(void);
void arelease(struct amark m);

/* grow a dynamic array: `p` has `*n` elements of size `sz`, room for one more */
void *agrow(void *p, size_t n, size_t sz);

/*
 * Modes: main sets umask 077, so what idpmake creates for itself (the state
 * folder, its database, cache, logs, clone; what children create) is 0600,
 * folders 0700.  What it writes for the user (init, render -o) goes through
 * the *_user functions, which give the modes of the user's own umask.
 */
extern mode_t user_umask;		/* the umask idpmake started with; (mode_t)-1: not changed */
/* write all of data, through EINTR and short writes; 0 or -1 with errno */
int write_all(int fd, const void *data, size_t len);
/* create PATH.tmpPID.N for writing (O_EXCL, no symlink followed); fd, *tmp malloc'd */
int open_tmp_beside(const char *path, char **tmp);
/* fsync the folder holding path, so that a rename in it survives a crash; 0 or -1 */
int sync_dir(const char *path);
int mkdirs(const char *path);		/* mkdir -p; -1 with errno */
int mkdirs_user(const char *path);	/* mkdir -p, new folders 0777 & ~user_umask */
int rmtree(const char *path);		/* rm -rf */
char *read_file(const char *path, size_t *len);	/* malloc'd, NUL-terminated; NULL with errno */
char *read_fd(int fd, size_t *len);		/* read_file's, of fd, which it closes */
int open_regular(const char *path);		/* read-only fd of a regular file, never waiting on a FIFO; -1 with errno */
int write_file_atomic(const char *path, const void *data, size_t len);	/* renamed into place, fsynced */
int write_file_copy(const char *path, const void *data, size_t len);	/* renamed into place, no fsync */
int write_file_user(const char *path, const void *data, size_t len);	/* as _copy, mode 0666 & ~user_umask */
int write_file_private(const char *path, const void *data, size_t len);	/* as _atomic, 0600 from its creation (a key) */
char *path_join(const char *a, const char *b);	/* arena */
const char *path_base(const char *p);
char *path_dir(const char *p);			/* arena */
int strptrcmp(const void *a, const void *b);	/* qsort/bsearch over const char * */
double now_s(void);				/* monotonic seconds */
long long wall_ns(void);			/* realtime ns */

/* edit distance of a and b, a swap of neighbours one edit (for "did you mean"); fold: ASCII case folded */
size_t edit_distance(const char *a, const char *b, int fold);
/* "did you mean": the nearest of words[n] to s by the one rule (util.c), or NULL */
const char *closest(const char *s, const char *const *words, size_t n);

#endif
