/*
 * state.c - the state store.
 *
 * STATE/ (default .idpmake/ next to distro.yaml) holds:
 *   state.db       this file's SQLite database, WAL mode
 *   lock           the run lock (flock), holding "pid start-time command"
 *   cache/         rendered bundles by hash, unpacked built-in distros
 *   logs/          one log per step run
 *   repo/          idpmake's clone of the GitOps remote (gitops.c)
 *   gitops.git     the embedded default remote
 *   explain-salt   16 random bytes keying the hashes of masked values (keyinputs.h)
 *
 * Schema, PRAGMA user_version = 1:
 *
 *   step(id TEXT PRIMARY KEY,   CLUSTER/PKG:KIND[:HOOK] or :push
 *        key BLOB,              key of the last success, NULL: never succeeded
 *        output BLOB,           output hash of that success
 *        inputs BLOB,           its per-input hashes (hash.c encoding), for explain;
 *                               a variable's or a field's value beside its hash
 *                               (never one that looks secret, hash.h)
 *        commit_id TEXT,        push: the commit made
 *        ok INTEGER,            1: last attempt succeeded, 0: it failed
 *        at INTEGER, ms INTEGER, error TEXT)
 *   tree(name TEXT PRIMARY KEY, the stat cache: a scanned folder and its globs
 *        fingerprint BLOB, racy INTEGER, content BLOB, files BLOB)
 *   tool(path TEXT PRIMARY KEY, stat BLOB, version TEXT)
 *        also "hookvars:PATH": the variables a hook's file names, by its
 *        content hash (hookvars.c)
 *   pushed(path TEXT PRIMARY KEY, output BLOB, commit_id TEXT)
 *   run(id INTEGER PRIMARY KEY, started INTEGER, finished INTEGER, pid INTEGER,
 *       command TEXT, result INTEGER, summary TEXT, commit_id TEXT)
 *
 * Invariants:
 *   1. A step's key is written only after the step succeeded, in the same
 *      transaction as its outputs (state_step_ok), so an interrupted run
 *      never records a success it did not have.
 *   2. A failure (state_step_failed) keeps the last success's key: the next
 *      run compares against it and redoes the step.
 *   3. `pushed` never says a folder holds what it may not: before a push,
 *      the folders it writes are marked unknown (a zero output, the row and
 *      its commit kept: state_pushed_unknown, one transaction; build.c);
 *      after the remote accepted it they get the new one (one
 *      transaction; the push step's record is a second).  If idpmake dies
 *      in between, the next run pushes those folders again, and finds the
 *      remote already holds the content and makes no commit (gitops.c).
 *   4. Migrations run forward only, each in a transaction that also sets
 *      user_version; a database newer than this idpmake is refused, naming
 *      both versions.  A read-only open (status, plan) never migrates.
 *
 * Schema history: 1 since 0.1.0.  tests/fixtures/state-v<N>/ holds a state
 * written by the last release with schema N (SQL text, and its GitOps
 * remote); t3620 opens it and checks the migration to SCHEMA_VERSION.  A
 * change to the schema adds a migration below and keeps the old fixture.
 *
 * The step and tree rows are preloaded at open into hash tables (a no-op
 * run then makes one query per table); blobs are read on demand.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph/state.h"
#include "base/util.h"

#define SCHEMA_VERSION 1

static const char *const migrations[] = {
	/* 0 -> 1 */
	"CREATE TABLE step(id TEXT PRIMARY KEY, key BLOB, output BLOB, inputs BLOB, commit_id TEXT,"
	"  ok INTEGER, at INTEGER, ms INTEGER, error TEXT);"
	"CREATE TABLE tree(name TEXT PRIMARY KEY, fingerprint BLOB, racy INTEGER, content BLOB, files BLOB);"
	"CREATE TABLE tool(path TEXT PRIMARY KEY, stat BLOB, version TEXT);"
	"CREATE TABLE pushed(path TEXT PRIMARY KEY, output BLOB, commit_id TEXT);"
	"CREATE TABLE run(id INTEGER PRIMARY KEY, started INTEGER, finished INTEGER, pid INTEGER,"
	"  command TEXT, result INTEGER, summary TEXT, commit_id TEXT);",
};

struct slot {
	const char *name;
	struct record r;
	struct hash fingerprint, content;	/* tree rows */
	int racy;
};

struct table {
	struct slot *v;
	size_t cap, n;
};

struct state {
	const char *dir;
	sqlite3 *db;
	int readonly;
	int lockfd;
	struct table steps, trees;
	struct pushed *pushed;
	size_t npushed;
	sqlite3_stmt *put_step, *fail_step, *get_inputs, *put_tree, *get_files, *get_tool, *put_tool;
};

/*
 * The one place SQLite errors are shown: the file, what was being done,
 * SQLite's message, and the way out where one is known.  state.db holds only
 * what idpmake remembers (the GitOps remote and Argo CD hold what was done),
 * so a damaged one is removed with `forget --all` and the next up redoes
 * every step; a push then finds the remote already holding its content.
 */
static int db_error(struct state *s, const char *what)
{
	int code = s->db ? sqlite3_extended_errcode(s->db) : SQLITE_CANTOPEN;
	int sys = s->db ? sqlite3_system_errno(s->db) : 0;
	const char *msg = s->db ? sqlite3_errmsg(s->db) : "out of memory";
	const char *hint = "";

	if ((code & 0xff) == SQLITE_IOERR && sys)	/* "disk I/O error": say which */
		msg = aprintf("%s (%s)", msg, strerror(sys));
	if (sys == ENOSPC || sys == EDQUOT)
		code = SQLITE_FULL;
	switch (code & 0xff) {
	case SQLITE_ERROR:	/* a table or column missing: not a state idpmake wrote */
		if (!strstr(msg, "no such table") && !strstr(msg, "no such column"))
			break;
		/* fall through */
	case SQLITE_CORRUPT:
	case SQLITE_NOTADB:
		hint = "; the state is damaged: 'idpmake forget --all' (with the same -C, -f or --state) removes it,"
		       " and the next up redoes every step";
		break;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		hint = "; another process (not an idpmake run: those take the lock file first) holds a lock on it;"
		       " end that process (a sqlite3 shell, a backup) and run again";
		break;
	case SQLITE_FULL:
		hint = "; the disk is full: free space and run again (nothing was recorded as done)";
		break;
	case SQLITE_READONLY:
	case SQLITE_CANTOPEN:
	case SQLITE_PERM:
		hint = "; check that the state folder and state.db are yours and writable";
		break;
	}
	return error("state %s/state.db: %s: %s%s", s->dir, what, msg, hint);
}

/* sqlite3_step over a whole result: SQLITE_DONE at the end, or the error */
static int step_done(int rc)
{
	return rc == SQLITE_DONE ? 0 : -1;
}

/* ---- a string-keyed hash table over arena strings ---- */

static size_t strhash(const char *s)
{
	size_t h = 1469598103934665603ULL;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 1099511628211ULL;
	/* FNV-1a's low bits follow the last bytes ("c12/p3:sync"): mix the high ones in */
	return h ^ (h >> 29) ^ (h >> 47);
}

static struct slot *table_find(struct table *t, const char *name, int insert)
{
	size_t i;

	if (insert && (t->n + 1) * 2 > t->cap) {
		struct table nt = { xcalloc(t->cap ? t->cap * 2 : 1024, sizeof(struct slot)),
				    t->cap ? t->cap * 2 : 1024, 0 };
		for (size_t j = 0; j < t->cap; j++)
			if (t->v[j].name)
				*table_find(&nt, t->v[j].name, 1) = t->v[j];
		free(t->v);
		*t = nt;
	}
	if (!t->cap)
		return NULL;
	for (i = strhash(name) & (t->cap - 1); t->v[i].name; i = (i + 1) & (t->cap - 1))
		if (!strcmp(t->v[i].name, name))
			return &t->v[i];
	if (!insert)
		return NULL;
	t->v[i].name = astrdup(name);
	t->n++;
	return &t->v[i];
}

static struct hash col_hash(sqlite3_stmt *st, int col)
{
	struct hash h = { 0, 0 };
	if (sqlite3_column_bytes(st, col) == sizeof(h))
		memcpy(&h, sqlite3_column_blob(st, col), sizeof(h));
	return h;
}

static const char *col_str(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? astrdup((const char *)t) : NULL;
}

static int migrate(struct state *s)
{
	sqlite3_stmt *st;
	int version = 0;

	if (sqlite3_prepare_v2(s->db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
		return db_error(s, "reading the schema version");
	if (sqlite3_step(st) != SQLITE_ROW) {
		sqlite3_finalize(st);
		return db_error(s, "reading the schema version");
	}
	version = sqlite3_column_int(st, 0);
	sqlite3_finalize(st);
	if (version > SCHEMA_VERSION)
		return error("state %s/state.db has schema version %d; this idpmake knows up to %d: a newer idpmake"
			     " wrote it (upgrade idpmake, or 'idpmake forget --all' to start the state afresh)",
			     s->dir, version, SCHEMA_VERSION);
	if (version < SCHEMA_VERSION && s->readonly)
		return 1;	/* nothing recorded that we could read */
	for (; version < SCHEMA_VERSION; version++) {
		char *sql = aprintf("BEGIN IMMEDIATE; %s PRAGMA user_version = %d; COMMIT;",
				    migrations[version], version + 1);
		if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK) {
			db_error(s, "migrating the schema");
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
	}
	return 0;
}

/* the pushed folders, sorted by path (state_pushed bisects) */
static int load_pushed(struct state *s)
{
	sqlite3_stmt *st;
	int rc;

	s->pushed = NULL;
	s->npushed = 0;
	if (sqlite3_prepare_v2(s->db, "SELECT path, output, commit_id FROM pushed ORDER BY path", -1, &st, NULL) != SQLITE_OK)
		return db_error(s, "reading pushed folders");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_TEXT)
			continue;	/* names no folder: ignored */
		s->pushed = agrow(s->pushed, s->npushed, sizeof(*s->pushed));
		s->pushed[s->npushed].path = col_str(st, 0);
		s->pushed[s->npushed].output = col_hash(st, 1);
		s->pushed[s->npushed++].commit = col_str(st, 2);
	}
	sqlite3_finalize(st);
	return step_done(rc) < 0 ? db_error(s, "reading pushed folders") : 0;
}

static int preload(struct state *s)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(s->db, "SELECT id, key, output, commit_id, ok, at, ms, error FROM step",
			       -1, &st, NULL) != SQLITE_OK)
		return db_error(s, "reading steps");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct slot *sl;
		if (sqlite3_column_type(st, 0) != SQLITE_TEXT)
			continue;	/* a row without an id names no step: ignored */
		sl = table_find(&s->steps, (const char *)sqlite3_column_text(st, 0), 1);
		sl->r.have = 1;
		sl->r.key = col_hash(st, 1);
		sl->r.output = col_hash(st, 2);
		sl->r.commit = col_str(st, 3);
		sl->r.ok = sqlite3_column_int(st, 4);
		sl->r.at = sqlite3_column_int64(st, 5);
		sl->r.ms = sqlite3_column_int(st, 6);
		sl->r.error = col_str(st, 7);
	}
	sqlite3_finalize(st);
	if (step_done(rc) < 0)
		return db_error(s, "reading steps");
	if (sqlite3_prepare_v2(s->db, "SELECT name, fingerprint, racy, content FROM tree", -1, &st, NULL) != SQLITE_OK)
		return db_error(s, "reading the stat cache");
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct slot *sl;
		if (sqlite3_column_type(st, 0) != SQLITE_TEXT)
			continue;	/* a stat cache row without a name: the folder is scanned again */
		sl = table_find(&s->trees, (const char *)sqlite3_column_text(st, 0), 1);
		sl->fingerprint = col_hash(st, 1);
		sl->racy = sqlite3_column_int(st, 2);
		sl->content = col_hash(st, 3);
	}
	sqlite3_finalize(st);
	if (step_done(rc) < 0)
		return db_error(s, "reading the stat cache");
	return load_pushed(s);
}

static int prepare(struct state *s, sqlite3_stmt **st, const char *sql)
{
	if (sqlite3_prepare_v2(s->db, sql, -1, st, NULL) != SQLITE_OK)
		return db_error(s, "preparing a statement");
	return 0;
}

struct state *state_open(const char *dir, int readonly)
{
	struct state *s = amalloc(sizeof(*s));
	const char *path = aprintf("%s/state.db", dir);
	int r;

	s->dir = dir;
	s->readonly = readonly;
	s->lockfd = -1;
	if (state_dir_check(dir, "the state folder") < 0)
		return NULL;
	if (readonly && access(path, R_OK) < 0)
		return s;	/* no state yet: everything is "never" */
	if (!readonly && mkdirs(dir) < 0) {
		error("cannot create the state folder %s:", dir);
		return NULL;
	}
	/* private, also when an older idpmake made them under a wider umask; one that cannot be is refused */
	if (!readonly && chmod(dir, 0700) < 0) {
		error("cannot make the state folder %s private (chmod 700):", dir);
		return NULL;
	}
	if (!readonly && state_dir_check(dir, "the state folder") < 0)
		return NULL;	/* made by another user between the check above and mkdirs */
	if (sqlite3_open_v2(path, &s->db, readonly ? SQLITE_OPEN_READONLY :
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
		db_error(s, "opening");
		goto fail;
	}
	if (!readonly && chmod(path, 0600) < 0) {
		error("cannot make %s private (chmod 600; is it another user's?):", path);
		goto fail;
	}
	sqlite3_busy_timeout(s->db, 10000);
	if (!readonly && sqlite3_exec(s->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
				      NULL, NULL, NULL) != SQLITE_OK) {
		db_error(s, "setting WAL mode");
		goto fail;
	}
	if ((r = migrate(s)) < 0)
		goto fail;
	if (r > 0) {	/* read-only and not migrated yet: empty */
		sqlite3_close(s->db);
		s->db = NULL;
		return s;
	}
	if (preload(s) < 0)
		goto fail;
	if (readonly)
		return s;
	if (prepare(s, &s->put_step, "INSERT OR REPLACE INTO step(id, key, output, inputs, commit_id, ok, at, ms, error)"
		    " VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, NULL)") < 0 ||
	    prepare(s, &s->fail_step, "INSERT INTO step(id, ok, at, ms, error) VALUES (?1, 0, ?2, ?3, ?4)"
		    " ON CONFLICT(id) DO UPDATE SET ok = 0, at = ?2, ms = ?3, error = ?4") < 0 ||
	    prepare(s, &s->put_tree, "INSERT OR REPLACE INTO tree(name, fingerprint, racy, content, files)"
		    " VALUES (?1, ?2, ?3, ?4, ?5)") < 0 ||
	    prepare(s, &s->put_tool, "INSERT OR REPLACE INTO tool(path, stat, version) VALUES (?1, ?2, ?3)") < 0)
		goto fail;
	return s;
fail:
	state_close(s);
	return NULL;
}

/*
 * forget --all: remove state.db and its WAL files under the run lock,
 * without opening the database (it may be damaged, or newer than this idpmake).
 */
int state_remove(const char *dir, int wait)
{
	static const char *const files[] = { "state.db", "state.db-wal", "state.db-shm", "state.db-journal" };
	struct state s = { .dir = dir, .lockfd = -1 };
	int n = 0;

	if (access(dir, F_OK) < 0)
		return 0;	/* nothing to forget */
	if (state_dir_check(dir, "the state folder") < 0)
		return -1;
	if (state_lock(&s, wait) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		const char *path = aprintf("%s/%s", dir, files[i]);
		if (unlink(path) == 0)
			n += !i;
		else if (errno != ENOENT) {
			error("cannot remove %s:", path);
			close(s.lockfd);
			return -1;
		}
	}
	close(s.lockfd);
	return n;
}

void state_close(struct state *s)
{
	if (!s)
		return;
	sqlite3_finalize(s->put_step);
	sqlite3_finalize(s->fail_step);
	sqlite3_finalize(s->get_inputs);
	sqlite3_finalize(s->put_tree);
	sqlite3_finalize(s->get_files);
	sqlite3_finalize(s->get_tool);
	sqlite3_finalize(s->put_tool);
	if (s->db)
		sqlite3_close(s->db);
	s->db = NULL;
	free(s->steps.v);
	free(s->trees.v);
	s->steps.v = s->trees.v = NULL;
	s->steps.cap = s->trees.cap = 0;
	if (s->lockfd >= 0)
		close(s->lockfd);
	s->lockfd = -1;
}

const char *state_dir(const struct state *s)
{
	return s->dir;
}

int state_lock(struct state *s, int wait)
{
	const char *path = aprintf("%s/lock", s->dir);
	char info[256];
	int fd;

	if (s->lockfd >= 0)
		return 0;	/* held already: a bundle's run takes it before unpacking (ctx.c) */
	if (state_dir_check(s->dir, "the state folder") < 0)
		return -1;
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666)) < 0)
		return error("cannot open the lock %s:", path);
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		ssize_t n = pread(fd, info, sizeof(info) - 1, 0);
		long pid = 0;
		long long started = 0;
		info[n > 0 ? n : 0] = 0;
		sscanf(info, "%ld %lld", &pid, &started);
		if (!wait) {
			char when[64] = "?";
			time_t t = (time_t)started;
			struct tm tm;
			if (started && localtime_r(&t, &tm))
				strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
			close(fd);
			return error("another idpmake (pid %ld, started %s) holds %s; wait for it, or use --wait",
				     pid, when, path);
		}
		fprintf(stderr, "idpmake: waiting for pid %ld to release %s\n", pid, path);
		if (flock(fd, LOCK_EX) < 0) {
			close(fd);
			return error("waiting for %s:", path);
		}
	}
	snprintf(info, sizeof(info), "%ld %lld\n", (long)getpid(), (long long)time(NULL));
	if (ftruncate(fd, 0) < 0 || pwrite(fd, info, strlen(info), 0) < 0)
		warn("cannot write %s:", path);
	s->lockfd = fd;
	return 0;
}

struct record state_step(struct state *s, const char *id)
{
	struct slot *sl = table_find(&s->steps, id, 0);
	struct record none = { 0 };
	return sl ? sl->r : none;
}

int state_step_inputs(struct state *s, const char *id, struct inputs *in)
{
	int r = 0;

	memset(in, 0, sizeof(*in));
	if (!s->db)
		return 0;
	if (!s->get_inputs && prepare(s, &s->get_inputs, "SELECT inputs FROM step WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_text(s->get_inputs, 1, id, -1, SQLITE_STATIC);
	if (sqlite3_step(s->get_inputs) == SQLITE_ROW && sqlite3_column_bytes(s->get_inputs, 0))
		r = inputs_decode(sqlite3_column_blob(s->get_inputs, 0),
				  (size_t)sqlite3_column_bytes(s->get_inputs, 0), in);
	sqlite3_reset(s->get_inputs);
	return r;
}

static int run_stmt(struct state *s, sqlite3_stmt *st, const char *what)
{
	int r = sqlite3_step(st);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return r == SQLITE_DONE ? 0 : db_error(s, what);
}

int state_step_ok(struct state *s, const char *id, struct hash key, struct hash output,
		  const struct inputs *in, const char *commit, int ms)
{
	size_t len = 0;
	void *blob = in ? inputs_encode(in, &len) : NULL;
	struct slot *sl;
	int r;

	sqlite3_bind_text(s->put_step, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s->put_step, 2, &key, sizeof(key), SQLITE_STATIC);
	sqlite3_bind_blob(s->put_step, 3, &output, sizeof(output), SQLITE_STATIC);
	if (blob)
		sqlite3_bind_blob(s->put_step, 4, blob, (int)len, SQLITE_STATIC);
	if (commit)
		sqlite3_bind_text(s->put_step, 5, commit, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->put_step, 6, (sqlite3_int64)time(NULL));
	sqlite3_bind_int(s->put_step, 7, ms);
	r = run_stmt(s, s->put_step, "recording a step");
	free(blob);
	if (!r) {
		sl = table_find(&s->steps, id, 1);
		sl->r = (struct record){ 1, 1, key, output, astrdup(commit), (long long)time(NULL), ms, NULL };
	}
	return r;
}

int state_step_failed(struct state *s, const char *id, const char *err, int ms)
{
	struct slot *sl;

	sqlite3_bind_text(s->fail_step, 1, id, -1, SQLITE_STATIC);
	sqlite3_bind_int64(s->fail_step, 2, (sqlite3_int64)time(NULL));
	sqlite3_bind_int(s->fail_step, 3, ms);
	sqlite3_bind_text(s->fail_step, 4, err ? err : "failed", -1, SQLITE_STATIC);
	if (run_stmt(s, s->fail_step, "recording a failure") < 0)
		return -1;
	sl = table_find(&s->steps, id, 1);
	sl->r.have = 1;
	sl->r.ok = 0;
	sl->r.at = (long long)time(NULL);
	sl->r.ms = ms;
	sl->r.error = astrdup(err);
	return 0;
}

int state_forget(struct state *s, const char *prefix)
{
	sqlite3_stmt *st;
	int n;

	if (!s->db)
		return 0;
	if (prepare(s, &st, prefix ? "DELETE FROM step WHERE substr(id, 1, length(?1)) = ?1" : "DELETE FROM step") < 0)
		return -1;
	if (prefix)
		sqlite3_bind_text(st, 1, prefix, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_finalize(st);
		return db_error(s, "forgetting steps");
	}
	sqlite3_finalize(st);
	n = sqlite3_changes(s->db);
	for (size_t i = 0; i < s->steps.cap; i++)
		if (s->steps.v[i].name && (!prefix || !strncmp(s->steps.v[i].name, prefix, strlen(prefix))))
			s->steps.v[i].r = (struct record){ 0 };
	return n;
}

const char **state_step_ids(struct state *s, size_t *n)
{
	const char **v = amalloc((s->steps.n + 1) * sizeof(*v));
	size_t k = 0;

	for (size_t i = 0; i < s->steps.cap; i++)
		if (s->steps.v[i].name && s->steps.v[i].r.have)
			v[k++] = s->steps.v[i].name;
	qsort(v, k, sizeof(*v), strptrcmp);
	*n = k;
	return v;
}

int state_tree(struct state *s, const char *name, struct hash *fp, int *racy, struct hash *content)
{
	struct slot *sl = table_find(&s->trees, name, 0);

	if (!sl)
		return 0;
	*fp = sl->fingerprint;
	*racy = sl->racy;
	*content = sl->content;
	return 1;
}

int state_tree_files(struct state *s, const char *name, struct tree_file **v, size_t *n)
{
	int r = 0;

	*v = NULL;
	*n = 0;
	if (!s->db)
		return 0;
	if (!s->get_files && prepare(s, &s->get_files, "SELECT files FROM tree WHERE name = ?1") < 0)
		return -1;
	sqlite3_bind_text(s->get_files, 1, name, -1, SQLITE_STATIC);
	if (sqlite3_step(s->get_files) == SQLITE_ROW && sqlite3_column_bytes(s->get_files, 0))
		r = tree_decode(sqlite3_column_blob(s->get_files, 0),
				(size_t)sqlite3_column_bytes(s->get_files, 0), v, n);
	sqlite3_reset(s->get_files);
	return r;
}

int state_tree_put(struct state *s, const char *name, const struct tree *t)
{
	size_t len;
	void *blob = tree_encode(t, &len);
	struct slot *sl;
	int r;

	sqlite3_bind_text(s->put_tree, 1, name, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s->put_tree, 2, &t->fingerprint, sizeof(t->fingerprint), SQLITE_STATIC);
	sqlite3_bind_int(s->put_tree, 3, t->racy);
	sqlite3_bind_blob(s->put_tree, 4, &t->content, sizeof(t->content), SQLITE_STATIC);
	sqlite3_bind_blob(s->put_tree, 5, blob, (int)len, SQLITE_STATIC);
	r = run_stmt(s, s->put_tree, "recording the stat cache");
	free(blob);
	if (!r) {
		sl = table_find(&s->trees, name, 1);
		sl->fingerprint = t->fingerprint;
		sl->racy = t->racy;
		sl->content = t->content;
	}
	return r;
}

const char *state_tool(struct state *s, const char *path, struct hash stat)
{
	const char *v = NULL;

	if (!s->db)
		return NULL;
	if (!s->get_tool && prepare(s, &s->get_tool, "SELECT stat, version FROM tool WHERE path = ?1") < 0)
		return NULL;
	sqlite3_bind_text(s->get_tool, 1, path, -1, SQLITE_STATIC);
	if (sqlite3_step(s->get_tool) == SQLITE_ROW && hash_eq(col_hash(s->get_tool, 0), stat))
		v = col_str(s->get_tool, 1);
	sqlite3_reset(s->get_tool);
	return v;
}

int state_tool_put(struct state *s, const char *path, struct hash stat, const char *version)
{
	if (!s->put_tool)
		return 0;	/* read-only (plan): nothing is recorded */
	sqlite3_bind_text(s->put_tool, 1, path, -1, SQLITE_STATIC);
	sqlite3_bind_blob(s->put_tool, 2, &stat, sizeof(stat), SQLITE_STATIC);
	sqlite3_bind_text(s->put_tool, 3, version, -1, SQLITE_STATIC);
	return run_stmt(s, s->put_tool, "recording a tool version");
}

int state_pushed(struct state *s, const char *path, struct pushed *p)
{
	size_t lo = 0, hi = s->npushed;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		int c = strcmp(s->pushed[mid].path, path);
		if (!c) {
			*p = s->pushed[mid];
			return 1;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

void state_pushed_drop(struct state *s, const char *path)
{
	for (size_t i = 0; i < s->npushed; i++) {
		if (!strcmp(s->pushed[i].path, path)) {
			memmove(&s->pushed[i], &s->pushed[i + 1], (s->npushed - i - 1) * sizeof(*s->pushed));
			s->npushed--;
			return;
		}
	}
}

int state_pushed_forget(struct state *s, const char *path)
{
	sqlite3_stmt *del;
	int rc;

	if (prepare(s, &del, "DELETE FROM pushed WHERE path = ?1") < 0)
		return -1;
	sqlite3_bind_text(del, 1, path, -1, SQLITE_STATIC);
	rc = run_stmt(s, del, "forgetting a pushed folder");
	sqlite3_finalize(del);
	if (rc < 0)
		return -1;
	state_pushed_drop(s, path);	/* not reloaded: this run's other drops stay */
	return 0;
}

const struct pushed *state_pushed_all(struct state *s, size_t *n)
{
	*n = s->npushed;
	return s->pushed;
}

int state_begin(struct state *s)
{
	return sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK ? 0 :
	       db_error(s, "starting a transaction");
}

int state_end(struct state *s, int commit)
{
	if (!commit) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return 0;
	}
	return sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK ? 0 : db_error(s, "committing");
}

int state_pushed_unknown(struct state *s, const struct pushed *v, size_t n)
{
	static const struct hash unknown;	/* zero: holds nothing known (plan.c pushes it) */
	sqlite3_stmt *up;

	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(s, "starting a transaction");
	if (prepare(s, &up, "UPDATE pushed SET output = ?2 WHERE path = ?1") < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		if (hash_zero(v[i].output))
			continue;	/* a removal keeps its record: the next run removes the folder again */
		sqlite3_bind_text(up, 1, v[i].path, -1, SQLITE_STATIC);
		sqlite3_bind_blob(up, 2, &unknown, sizeof(unknown), SQLITE_STATIC);
		if (run_stmt(s, up, "marking pushed folders unknown") < 0) {
			sqlite3_finalize(up);
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
	}
	sqlite3_finalize(up);
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(s, "committing pushed folders");
	return load_pushed(s);
}

int state_push_done(struct state *s, const struct pushed *v, size_t n, const char *commit)
{
	sqlite3_stmt *up, *del;

	if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(s, "starting a transaction");
	if (prepare(s, &up, "INSERT OR REPLACE INTO pushed(path, output, commit_id) VALUES (?1, ?2, ?3)") < 0 ||
	    prepare(s, &del, "DELETE FROM pushed WHERE path = ?1") < 0) {
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	for (size_t i = 0; i < n; i++) {
		sqlite3_stmt *st = hash_zero(v[i].output) ? del : up;
		sqlite3_bind_text(st, 1, v[i].path, -1, SQLITE_STATIC);
		if (st == up) {
			sqlite3_bind_blob(st, 2, &v[i].output, sizeof(v[i].output), SQLITE_STATIC);
			sqlite3_bind_text(st, 3, v[i].commit ? v[i].commit : commit, -1, SQLITE_STATIC);
		}
		if (run_stmt(s, st, "recording pushed folders") < 0) {
			sqlite3_finalize(up);
			sqlite3_finalize(del);
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			return -1;
		}
	}
	sqlite3_finalize(up);
	sqlite3_finalize(del);
	if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
		return db_error(s, "committing pushed folders");
	return load_pushed(s);
}

long long state_run_begin(struct state *s, const char *command)
{
	sqlite3_stmt *st;
	long long id;

	if (prepare(s, &st, "INSERT INTO run(started, pid, command) VALUES (?1, ?2, ?3)") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, (sqlite3_int64)time(NULL));
	sqlite3_bind_int(st, 2, (int)getpid());
	sqlite3_bind_text(st, 3, command, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_finalize(st);
		return db_error(s, "recording the run");
	}
	sqlite3_finalize(st);
	id = sqlite3_last_insert_rowid(s->db);
	return id;
}

int state_run_end(struct state *s, long long run, int result, const char *summary, const char *commit)
{
	sqlite3_stmt *st;

	if (prepare(s, &st, "UPDATE run SET finished = ?2, result = ?3, summary = ?4, commit_id = ?5 WHERE id = ?1") < 0)
		return -1;
	sqlite3_bind_int64(st, 1, run);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)time(NULL));
	sqlite3_bind_int(st, 3, result);
	sqlite3_bind_text(st, 4, summary, -1, SQLITE_STATIC);
	if (commit)
		sqlite3_bind_text(st, 5, commit, -1, SQLITE_STATIC);
	if (sqlite3_step(st) != SQLITE_DONE) {
		sqlite3_finalize(st);
		return db_error(s, "recording the run's end");
	}
	sqlite3_finalize(st);
	return 0;
}

struct run_row *state_runs(struct state *s, size_t *n)
{
	sqlite3_stmt *st;
	struct run_row *v = NULL;

	*n = 0;
	if (!s->db || prepare(s, &st, "SELECT id, started, finished, pid, result, command, summary, commit_id"
			      " FROM run ORDER BY id DESC LIMIT 200") < 0)
		return NULL;
	while (sqlite3_step(st) == SQLITE_ROW) {
		v = agrow(v, *n, sizeof(*v));
		v[*n] = (struct run_row){ sqlite3_column_int64(st, 0), sqlite3_column_int64(st, 1),
					  sqlite3_column_int64(st, 2), sqlite3_column_int(st, 3),
					  sqlite3_column_type(st, 4) == SQLITE_NULL ? -1 : sqlite3_column_int(st, 4),
					  col_str(st, 5), col_str(st, 6), col_str(st, 7) };
		(*n)++;
	}
	sqlite3_finalize(st);
	return v;
}
