/*
 * t-hash.c - hash.c: hashes and their hex form, globs with "**", key
 * inputs (encode, decode, diff), scan_tree (sorted, globs, no dot-folders,
 * symlinks), hash_tree with the stat cache (a file whose stat is unchanged
 * is not read again: a deliberately wrong recorded hash must come through;
 * a changed one is; recent files are racy), tree_encode/decode.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/hash.h"
#include "base/looksecret.h"
#include "graph/state.h"
#include "base/util.h"
#include "scratch.h"
#include "test.h"


/* set a file's mtime (and so its ctime to now) to `sec` seconds ago */
static void age(const char *rel, int sec)
{
	struct timespec ts[2];

	clock_gettime(CLOCK_REALTIME, &ts[0]);
	ts[0].tv_sec -= sec;
	ts[1] = ts[0];
	if (utimensat(AT_FDCWD, path_join(tmp, rel), ts, 0) < 0) {
		perror("utimensat");
		exit(2);
	}
}

static void free_tree(struct tree *t)
{
	for (size_t i = 0; i < t->n; i++)
		free((char *)t->v[i].path);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

static struct strlist globs(const char *a, const char *b, const char *c)
{
	struct strlist l = { 0 };
	const char *v[3] = { a, b, c };

	l.v = amalloc(3 * sizeof(*l.v));
	for (int i = 0; i < 3; i++)
		if (v[i])
			l.v[l.n++] = v[i];
	return l;
}

static const char *tree_paths(const struct tree *t)
{
	struct buf b = BUF_INIT;
	const char *r;

	for (size_t i = 0; i < t->n; i++)
		buf_addf(&b, "%s%s", i ? " " : "", t->v[i].path);
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

/* ---- hashes ---- */

static void test_hash(void)
{
	struct hash a = hash_bytes("abc", 3), b = hash_bytes("abd", 3), c, z = { 0, 0 };
	struct hasher *h;
	char hex[33], hex2[33];

	CHECK(hash_eq(a, hash_bytes("abc", 3)));
	CHECK(!hash_eq(a, b));
	CHECK(!hash_zero(a) && hash_zero(z));
	CHECK(!hash_zero(hash_bytes("", 0)));

	/* streaming equals one shot */
	h = hasher_new();
	hasher_add(h, "a", 1);
	hasher_add(h, "bc", 2);
	CHECK(hash_eq(hasher_end(h), a));

	/* hasher_adds includes the NUL: "ab"+"c" differs from "a"+"bc" */
	h = hasher_new();
	hasher_adds(h, "ab");
	hasher_adds(h, "c");
	c = hasher_end(h);
	h = hasher_new();
	hasher_adds(h, "a");
	hasher_adds(h, "bc");
	CHECK(!hash_eq(c, hasher_end(h)));
	h = hasher_new();
	hasher_adds(h, NULL);
	CHECK(hash_eq(hasher_end(h), hash_bytes("", 1)));

	hash_hex(a, hex);
	CHECK(strlen(hex) == 32);
	CHECK(strspn(hex, "0123456789abcdef") == 32);
	CHECK(hash_parse(hex, &c) == 0 && hash_eq(a, c));
	hash_hex((struct hash){ 0x0123456789abcdefULL, 0xfULL }, hex2);
	CHECK_STR(hex2, "0123456789abcdef000000000000000f");
	CHECK(hash_parse("0123456789abcdef000000000000000f", &c) == 0 &&
	      c.hi == 0x0123456789abcdefULL && c.lo == 0xf);
	hash_hex(z, hex2);
	CHECK_STR(hex2, "00000000000000000000000000000000");
	CHECK_STR(hash_short(a), astrndup(hex, 12));

	CHECK(hash_parse(NULL, &c) == -1);
	CHECK(hash_parse("", &c) == -1);
	CHECK(hash_parse("0123456789abcdef000000000000000", &c) == -1);	/* 31 */
	CHECK(hash_parse("0123456789abcdef000000000000000f0", &c) == -1);	/* 33 */
	CHECK(hash_parse("0123456789abcdeg000000000000000f", &c) == -1);
	CHECK(hash_parse("0123456789abcdef00000000000000 f", &c) == -1);
	/* only hex digits: no sign, no blanks, no 0x that strtoull would take */
	CHECK(hash_parse("-123456789abcdef000000000000000f", &c) == -1);
	CHECK(hash_parse(" 123456789abcdef000000000000000f", &c) == -1);
	CHECK(hash_parse("0x23456789abcdef000000000000000f", &c) == -1);
}

/* ---- globs ---- */

static void test_glob(void)
{
	CHECK(glob_match("**/*.yaml", "a.yaml"));
	CHECK(glob_match("**/*.yaml", "x/a.yaml"));
	CHECK(glob_match("**/*.yaml", "x/y/a.yaml"));
	CHECK(!glob_match("**/*.yaml", "a.yml"));
	CHECK(!glob_match("**/*.yaml", "x/a.yaml.bak"));
	CHECK(!glob_match("**/*.yaml", "x/a.yml"));
	CHECK(glob_match("**", "a"));
	CHECK(glob_match("**", "a/b/c"));
	CHECK(glob_match("*.yaml", "a.yaml"));
	CHECK(!glob_match("*.yaml", "x/a.yaml"));	/* * does not cross '/' */
	CHECK(glob_match("dir/**/x", "dir/x"));
	CHECK(glob_match("dir/**/x", "dir/a/x"));
	CHECK(glob_match("dir/**/x", "dir/a/b/x"));
	CHECK(!glob_match("dir/**/x", "other/x"));
	CHECK(!glob_match("dir/**/x", "x"));
	CHECK(!glob_match("dir/**/x", "dir/a/x/y"));
	CHECK(!glob_match("dir/**/x", "dirt/x"));
	CHECK(!glob_match("dir/**/x", "a/dir/x"));
	CHECK(glob_match("a/b/**/*.json", "a/b/c/d.json"));
	CHECK(glob_match("a/b/**/*.json", "a/b/d.json"));
	CHECK(!glob_match("a/b/**/*.json", "a/c/d.json"));
	CHECK(glob_match("d*/**/x", "dir/q/x"));
	CHECK(glob_match("**/templates/*.yaml", "chart/templates/a.yaml"));
	CHECK(glob_match("**/templates/*.yaml", "templates/a.yaml"));
	CHECK(!glob_match("**/templates/*.yaml", "chart/templates/sub/a.yaml"));
	CHECK(glob_match("values.yaml", "values.yaml"));
	CHECK(!glob_match("values.yaml", "sub/values.yaml"));
	CHECK(glob_match("?.txt", "a.txt") && !glob_match("?.txt", "ab.txt"));
	CHECK(glob_match("[ab].txt", "b.txt") && !glob_match("[ab].txt", "c.txt"));
}

/* ---- inputs ---- */

static void test_inputs(void)
{
	struct inputs a = { 0 }, b = { 0 }, d = { 0 }, e = { 0 };
	struct strlist changed = { 0 };
	void *blob;
	size_t len;
	struct hash h1 = hash_bytes("1", 1), h2 = hash_bytes("2", 1), h3 = hash_bytes("3", 1);
	char longname[300];

	memset(longname, 'n', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	inputs_add(&a, "spec", h1);
	inputs_add(&a, "rule", h2);
	inputs_add(&a, "files/a.yaml", h3);
	inputs_add(&a, "", h1);
	inputs_add(&a, longname, h2);
	CHECK(a.n == 5);

	blob = inputs_encode(&a, &len);
	CHECK(len > 0);
	CHECK(inputs_decode(blob, len, &d) == 0);
	CHECK(d.n == 5);
	for (size_t i = 0; i < d.n && i < a.n; i++) {
		CHECK_STR(d.v[i].name, a.v[i].name);
		CHECK(hash_eq(d.v[i].h, a.v[i].h));
	}
	CHECK(hash_eq(inputs_hash(&a), inputs_hash(&d)));
	/* truncated blobs are refused */
	CHECK(inputs_decode(blob, len - 1, &e) == -1);
	CHECK(inputs_decode(blob, 1, &e) == -1);
	free(blob);
	/* nothing */
	blob = inputs_encode(&b, &len);
	CHECK(len == 0);
	CHECK(inputs_decode(blob, len, &e) == 0 && e.n == 0);
	free(blob);

	/* a value and a mask round-trip; the key (inputs_hash) sees neither */
	{
		struct inputs v = { 0 }, w = { 0 }, plain = { 0 };
		void *vb;
		size_t vl;
		char big[INPUT_VALUE_MAX + 50];
		memset(big, 'x', sizeof(big) - 1);
		big[sizeof(big) - 1] = 0;
		inputs_add_value(&v, "var region", h1, "eu-west-1", 0);
		inputs_add_value(&v, "var api_token", h2, "hunter2", 1);
		inputs_add_value(&v, "var big", h3, big, 0);
		inputs_add(&v, "rule", h1);
		inputs_add(&plain, "var region", h1);
		inputs_add(&plain, "var api_token", h2);
		inputs_add(&plain, "var big", h3);
		inputs_add(&plain, "rule", h1);
		CHECK(hash_eq(inputs_hash(&v), inputs_hash(&plain)));
		vb = inputs_encode(&v, &vl);
		{
			int clear = 0;	/* the masked value is nowhere in the blob */
			for (size_t k = 0; k + 7 <= vl; k++)
				clear |= !memcmp((char *)vb + k, "hunter2", 7);
			CHECK(!clear);
		}
		CHECK(inputs_decode(vb, vl, &w) == 0 && w.n == 4);
		if (w.n == 4) {
			CHECK_STR(w.v[0].name, "var region");
			CHECK_STR(w.v[0].value, "eu-west-1");
			CHECK(!w.v[0].masked);
			CHECK_STR(w.v[1].name, "var api_token");
			CHECK(w.v[1].masked && !w.v[1].value);
			CHECK(hash_eq(w.v[1].h, h2));
			CHECK(strlen(w.v[2].value) == INPUT_VALUE_MAX);
			CHECK(!w.v[3].value && !w.v[3].masked);
		}
		free(vb);
	}
	/* what looks secret */
	CHECK(looks_secret("api_token", "x"));
	CHECK(looks_secret("DB_PASSWORD", "x"));
	CHECK(looks_secret("ssh-key", "x"));
	CHECK(looks_secret("db_pass", "x"));
	CHECK(looks_secret("smtp_pwd", "x"));
	CHECK(looks_secret("auth", "x"));
	CHECK(looks_secret("private_pem", "x"));
	CHECK(!looks_secret("run", "git commit --author me"));	/* in a value, "auth" tells nothing */
	CHECK(looks_secret("url", "https://user:pw@example.com/x"));
	CHECK(looks_secret("x", "ghp_abcdefghijklmnopqrstuvwxyz0123"));
	CHECK(looks_secret("x", "Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5"));
	CHECK(looks_secret("run", "curl -H 'Authorization: Bearer glpat-abcdefghijkl12345'"));
	CHECK(!looks_secret("region", "eu-west-1"));
	CHECK(!looks_secret("replicas", "3"));
	CHECK(!looks_secret("url", "https://example.com/a/b"));
	CHECK(!looks_secret("run", "./hooks/smoke.sh --fast"));

	/* the key depends on names, hashes and order */
	inputs_add(&b, "spec", h1);
	inputs_add(&b, "rule", h2);
	CHECK(!hash_eq(inputs_hash(&a), inputs_hash(&b)));
	{
		struct inputs x = { 0 }, y = { 0 }, w = { 0 };
		inputs_add(&x, "a", h1);
		inputs_add(&x, "b", h2);
		inputs_add(&y, "b", h2);
		inputs_add(&y, "a", h1);
		inputs_add(&w, "a", h2);
		inputs_add(&w, "b", h1);
		CHECK(!hash_eq(inputs_hash(&x), inputs_hash(&y)));
		CHECK(!hash_eq(inputs_hash(&x), inputs_hash(&w)));
	}

	/* diff: changed, added, removed; nothing when equal */
	{
		struct inputs old = { 0 }, now = { 0 };
		inputs_add(&old, "spec", h1);
		inputs_add(&old, "values a.yaml", h2);
		inputs_add(&old, "gone", h3);
		inputs_add(&now, "spec", h1);
		inputs_add(&now, "values a.yaml", h3);
		inputs_add(&now, "new", h3);
		inputs_diff(&old, &now, &changed);
		CHECK(changed.n == 3);
		if (changed.n == 3) {
			CHECK_STR(changed.v[0], "values a.yaml changed");
			CHECK_STR(changed.v[1], "new added");
			CHECK_STR(changed.v[2], "gone removed");
		}
		changed.n = 0;
		inputs_diff(&old, &old, &changed);
		CHECK(changed.n == 0);
	}
}

/* ---- scanning ---- */

static void test_scan_tree(void)
{
	struct tree t;
	struct strlist g;
	const char *dir = path_join(tmp, "scan");

	put("scan/b.yaml", "b: 1\n");
	put("scan/a.yaml", "a: 1\n");
	put("scan/A.yaml", "A: 1\n");
	put("scan/c.yml", "c: 1\n");
	put("scan/z/d.yaml", "d: 1\n");
	put("scan/z/y/e.json", "{}\n");
	put("scan/a-b/f.yaml", "f: 1\n");
	put("scan/.git/config", "[core]\n");
	put("scan/.hidden/h.yaml", "h: 1\n");
	put("scan/.dotfile.yaml", "dot: 1\n");
	put("scan/README", "read me\n");
	if (mkdirs(path_join(tmp, "scan/empty")) < 0)
		perror("mkdirs");
	if (symlink("a.yaml", path_join(tmp, "scan/link.yaml")) < 0)
		perror("symlink");
	if (symlink("nowhere", path_join(tmp, "scan/dangling.yaml")) < 0)
		perror("symlink");
	if (mkfifo(path_join(tmp, "scan/fifo.yaml"), 0600) < 0)
		perror("mkfifo");

	/* every regular file, sorted by byte order, no dot-folders */
	CHECK(scan_tree(dir, NULL, &t) == 0);
	CHECK_STR(t.dir, dir);
	CHECK_STR(tree_paths(&t), ".dotfile.yaml A.yaml README a-b/f.yaml a.yaml b.yaml c.yml link.yaml "
		  "z/d.yaml z/y/e.json");
	for (size_t i = 0; i < t.n; i++)
		CHECK(hash_zero(t.v[i].h));
	{
		struct stat st;
		size_t i;
		for (i = 0; i < t.n && strcmp(t.v[i].path, "b.yaml"); i++)
			;
		CHECK(i < t.n && stat(path_join(dir, "b.yaml"), &st) == 0 && t.v[i].size == 5 &&
		      t.v[i].ino == (uint64_t)st.st_ino && t.v[i].dev == (uint64_t)st.st_dev &&
		      t.v[i].mtime == (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec &&
		      t.v[i].ctime == (int64_t)st.st_ctim.tv_sec * 1000000000 + st.st_ctim.tv_nsec);
	}
	free_tree(&t);

	/* the manifests rule's globs */
	g = globs("**/*.yaml", "**/*.yml", "**/*.json");
	CHECK(scan_tree(dir, &g, &t) == 0);
	CHECK_STR(tree_paths(&t), ".dotfile.yaml A.yaml a-b/f.yaml a.yaml b.yaml c.yml link.yaml z/d.yaml z/y/e.json");
	free_tree(&t);
	g = globs("z/**/*.json", NULL, NULL);
	CHECK(scan_tree(dir, &g, &t) == 0);
	CHECK_STR(tree_paths(&t), "z/y/e.json");
	free_tree(&t);
	g = globs("*.yaml", NULL, NULL);
	CHECK(scan_tree(dir, &g, &t) == 0);
	CHECK_STR(tree_paths(&t), ".dotfile.yaml A.yaml a.yaml b.yaml link.yaml");
	free_tree(&t);

	/* a missing folder is an error */
	{
		int r, saved, fd;
		fflush(stderr);
		saved = dup(2);
		fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		close(fd);
		r = scan_tree(path_join(tmp, "no-such"), NULL, &t);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		CHECK(r == -1);
		free_tree(&t);
	}
}

/* the fingerprint: stat data and globs, not contents */
static void test_fingerprint(void)
{
	struct tree t1, t2;
	struct strlist g = globs("**", NULL, NULL);
	const char *dir = path_join(tmp, "fp");

	put("fp/one", "1");
	put("fp/two", "2");
	age("fp/one", 100);
	age("fp/two", 100);
	CHECK(scan_tree(dir, NULL, &t1) == 0);
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(hash_eq(t1.fingerprint, t2.fingerprint));
	free_tree(&t2);
	CHECK(scan_tree(dir, &g, &t2) == 0);
	CHECK(!hash_eq(t1.fingerprint, t2.fingerprint));	/* other globs */
	free_tree(&t2);
	age("fp/two", 50);
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(!hash_eq(t1.fingerprint, t2.fingerprint));	/* another mtime */
	free_tree(&t2);
	put("fp/three", "3");
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(!hash_eq(t1.fingerprint, t2.fingerprint));	/* another file */
	free_tree(&t2);
	free_tree(&t1);
}

static struct tree_file *copy_files(const struct tree *t)
{
	struct tree_file *v = amalloc((t->n + 1) * sizeof(*v));

	memcpy(v, t->v, t->n * sizeof(*v));
	for (size_t i = 0; i < t->n; i++)
		v[i].path = astrdup(t->v[i].path);
	return v;
}

static size_t find(const struct tree *t, const char *path)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].path, path))
			return i;
	return (size_t)-1;
}

static void test_hash_tree(void)
{
	struct tree t, t2;
	struct tree_file *old;
	const char *dir = path_join(tmp, "ht");
	struct hash wrong = hash_bytes("not the content", 15), content1;
	long long later;
	size_t ia, ib, ic;

	put("ht/a.yaml", "kind: A\n");
	put("ht/b.yaml", "kind: B\n");
	put("ht/sub/c.yaml", "kind: C\n");
	age("ht/a.yaml", 100);
	age("ht/b.yaml", 100);
	age("ht/sub/c.yaml", 100);
	/* a run that starts 10 s from now: age() set the mtimes 100 s back, but
	 * setting them made the ctimes now, and a recent ctime counts as racy too */
	later = wall_ns() + 10 * 1000000000LL;

	/* first time: every file is read */
	CHECK(scan_tree(dir, NULL, &t) == 0);
	CHECK(hash_tree(&t, NULL, 0, later) == 0);
	ia = find(&t, "a.yaml");
	ib = find(&t, "b.yaml");
	ic = find(&t, "sub/c.yaml");
	CHECK(t.n == 3 && ia < 3 && ib < 3 && ic < 3);
	if (t.n != 3 || ia >= 3 || ib >= 3 || ic >= 3)
		return;
	CHECK(hash_eq(t.v[ia].h, hash_bytes("kind: A\n", 8)));
	CHECK(hash_eq(t.v[ic].h, hash_bytes("kind: C\n", 8)));
	CHECK(!t.racy);		/* changed 10 s before the run */
	content1 = t.content;
	CHECK(!hash_zero(content1));

	/* same stat: the recorded hash stands, the file is not read */
	old = copy_files(&t);
	old[ia].h = wrong;
	old[ib].h = wrong;
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(hash_tree(&t2, old, t.n, later) == 0);
	CHECK(hash_eq(t2.v[ia].h, wrong));
	CHECK(hash_eq(t2.v[ib].h, wrong));
	CHECK(hash_eq(t2.v[ic].h, t.v[ic].h));
	CHECK(!hash_eq(t2.content, content1));	/* the content hash is built from them */
	free_tree(&t2);

	/* an unreadable file with a matching record is not opened at all */
	if (chmod(path_join(dir, "b.yaml"), 0) < 0)
		perror("chmod");
	CHECK(scan_tree(dir, NULL, &t2) == 0);	/* new ctime */
	{
		struct tree_file *rec = copy_files(&t2);
		for (size_t i = 0; i < t2.n; i++)
			rec[i].h = wrong;
		CHECK(hash_tree(&t2, rec, t2.n, later) == 0);
		for (size_t i = 0; i < t2.n; i++)
			CHECK(hash_eq(t2.v[i].h, wrong));
	}
	free_tree(&t2);

	/* a file whose ctime changed (chmod) is read again, the others are not */
	if (chmod(path_join(dir, "b.yaml"), 0644) < 0)
		perror("chmod");
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(hash_tree(&t2, old, t.n, later) == 0);
	CHECK(hash_eq(t2.v[ia].h, wrong));
	CHECK(hash_eq(t2.v[ib].h, hash_bytes("kind: B\n", 8)));
	free_tree(&t2);

	/* a changed file (same size, other mtime) is read again */
	put("ht/a.yaml", "kind: Z\n");
	age("ht/a.yaml", 90);
	later = wall_ns() + 10 * 1000000000LL;
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(hash_tree(&t2, old, t.n, later) == 0);
	CHECK(hash_eq(t2.v[ia].h, hash_bytes("kind: Z\n", 8)));
	CHECK(hash_eq(t2.v[ic].h, t.v[ic].h));
	CHECK(!t2.racy);
	free_tree(&t2);

	/* records of other files, or of none, do not matter */
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	{
		struct tree_file other = t.v[ia];
		other.path = "a.yamm";
		other.h = wrong;
		CHECK(hash_tree(&t2, &other, 1, later) == 0);
		CHECK(hash_eq(t2.v[ia].h, hash_bytes("kind: Z\n", 8)));
	}
	free_tree(&t2);

	/* a file read after it vanished is an error */
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	unlink(path_join(dir, "sub/c.yaml"));
	{
		int saved, fd, r;
		fflush(stderr);
		saved = dup(2);
		fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		close(fd);
		r = hash_tree(&t2, NULL, 0, later);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		CHECK(r == -1);
	}
	free_tree(&t2);
	free_tree(&t);
}

/*
 * git's racy rule (engine.md "Reading files"): a file whose mtime is not
 * safely older than the run's start may change again within the same
 * timestamp, unseen by stat; it is hashed again next time.
 */
static void test_racy(void)
{
	struct tree t, t2;
	struct tree_file *old;
	const char *dir = path_join(tmp, "racy");
	struct hash wrong = hash_bytes("stale", 5);
	long long start;

	put("racy/old.yaml", "old\n");
	age("racy/old.yaml", 100);
	put("racy/new.yaml", "new\n");		/* written just now */
	start = wall_ns();

	CHECK(scan_tree(dir, NULL, &t) == 0);
	CHECK(hash_tree(&t, NULL, 0, start) == 0);
	CHECK(t.racy);
	/* the run started long after: nothing is racy */
	CHECK(hash_tree(&t, NULL, 0, start + 60 * 1000000000LL) == 0);
	CHECK(!t.racy);
	/* 1.5 s before the run is not safely older; 3 s is */
	CHECK(hash_tree(&t, NULL, 0, start + 1500000000LL) == 0);
	CHECK(t.racy);
	CHECK(hash_tree(&t, NULL, 0, start + 3000000000LL) == 0);
	CHECK(!t.racy);

	/*
	 * Next run: the recent file's record has the same stat, but it was
	 * taken while the file was racy, so its hash must not be trusted: the
	 * file is read again.  The old file's record still stands.
	 */
	old = copy_files(&t);
	for (size_t i = 0; i < t.n; i++)
		old[i].h = wrong;
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(hash_tree(&t2, old, t.n, start) == 0);
	{
		size_t in = find(&t2, "new.yaml"), io = find(&t2, "old.yaml");
		CHECK(in < t2.n && io < t2.n);
		if (in < t2.n && io < t2.n) {
			CHECK(hash_eq(t2.v[io].h, wrong));
			CHECK(hash_eq(t2.v[in].h, hash_bytes("new\n", 4)));
		}
	}
	free_tree(&t2);
	free_tree(&t);
}

static void test_tree_encode(void)
{
	struct tree t;
	struct tree_file *v;
	size_t n, len;
	void *blob;
	const char *dir = path_join(tmp, "enc");

	put("enc/x.yaml", "x\n");
	put("enc/deep/er/y.yaml", "yy\n");
	put("enc/z", "");
	CHECK(scan_tree(dir, NULL, &t) == 0);
	CHECK(hash_tree(&t, NULL, 0, wall_ns()) == 0);
	blob = tree_encode(&t, &len);
	CHECK(tree_decode(blob, len, &v, &n) == 0);
	CHECK(n == t.n && n == 3);
	for (size_t i = 0; i < n && i < t.n; i++) {
		CHECK_STR(v[i].path, t.v[i].path);
		CHECK(v[i].size == t.v[i].size && v[i].mtime == t.v[i].mtime && v[i].ctime == t.v[i].ctime);
		CHECK(v[i].ino == t.v[i].ino && v[i].dev == t.v[i].dev);
		CHECK(hash_eq(v[i].h, t.v[i].h) && !hash_zero(v[i].h));
	}
	/* decoded records are what hash_tree takes: nothing is read */
	{
		struct tree t2;
		CHECK(scan_tree(dir, NULL, &t2) == 0);
		CHECK(hash_tree(&t2, v, n, wall_ns() + 60 * 1000000000LL) == 0);
		CHECK(hash_eq(t2.content, t.content));
		free_tree(&t2);
	}
	/* truncated: refused */
	CHECK(tree_decode(blob, 1, &v, &n) == -1);
	CHECK(tree_decode(blob, 20, &v, &n) == -1);
	CHECK(tree_decode(blob, len - 1, &v, &n) == -1);
	free(blob);
	/* empty */
	{
		struct tree e = { 0 };
		blob = tree_encode(&e, &len);
		CHECK(len == 0);
		CHECK(tree_decode(blob, len, &v, &n) == 0 && n == 0);
		free(blob);
	}
	/* tree_inputs: one input per file, prefixed */
	{
		struct inputs in = { 0 };
		tree_inputs(&t, "pkg", &in);
		CHECK(in.n == 3);
		if (in.n == 3) {
			CHECK_STR(in.v[0].name, "pkg/deep/er/y.yaml");
			CHECK(hash_eq(in.v[0].h, hash_bytes("yy\n", 3)));
			CHECK_STR(in.v[2].name, "pkg/z");
		}
		in.n = 0;
		tree_inputs(&t, NULL, &in);
		CHECK(in.n == 3 && !strcmp(in.v[1].name, "x.yaml"));
	}
	free_tree(&t);
}

/*
 * hash.h: "Symlinks are followed only when they stay inside `root` (the
 * distro folder); they are errors otherwise."  A link inside the folder is
 * followed (test_scan_tree: link.yaml); one that leads out is an error.
 */
static void test_symlink_out(void)
{
	char *outside = aprintf("%s/t-hash-outside.XXXXXX", test_tmpdir());
	int fd = mkstemp(outside), r;
	struct tree t;

	if (fd < 0) {
		perror("mkstemp");
		return;
	}
	if (write(fd, "secret\n", 7) != 7)
		perror("write");
	close(fd);
	put("sym/ok.yaml", "ok\n");
	if (symlink(outside, path_join(tmp, "sym/out.yaml")) < 0)
		perror("symlink");
	fflush(stderr);
	{
		int saved = dup(2), nul = open("/dev/null", O_WRONLY);
		dup2(nul, 2);
		close(nul);
		r = scan_tree(path_join(tmp, "sym"), NULL, &t);
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
	}
	CHECK(r == -1);
	if (r == 0)
		fprintf(stderr, "  scan_tree followed a symlink out of the folder: %s\n", tree_paths(&t));
	free_tree(&t);
	unlink(outside);
}

/* the stat cache as the state keeps it: the records hash_tree takes next time */
static void test_state_cache(void)
{
	const char *dir = path_join(tmp, "st"), *sdir = path_join(tmp, "state");
	struct state *st;
	struct tree t, t2;
	struct tree_file *v = NULL;
	size_t n = 0;
	struct hash fp, content;
	int racy = -1;
	long long later;

	put("st/a.yaml", "a\n");
	put("st/sub/b.yaml", "b\n");
	later = wall_ns() + 10 * 1000000000LL;
	CHECK(scan_tree(dir, NULL, &t) == 0);
	CHECK(hash_tree(&t, NULL, 0, later) == 0);
	st = state_open(sdir, 0);
	CHECK(st != NULL);
	if (!st) {
		free_tree(&t);
		return;
	}
	CHECK(state_tree(st, "t:st", &fp, &racy, &content) == 0);
	CHECK(state_tree_put(st, "t:st", &t) == 0);
	state_close(st);

	st = state_open(sdir, 1);
	CHECK(st != NULL);
	if (!st) {
		free_tree(&t);
		return;
	}
	CHECK(state_tree(st, "t:st", &fp, &racy, &content) == 1);
	CHECK(hash_eq(fp, t.fingerprint) && hash_eq(content, t.content) && racy == t.racy);
	CHECK(state_tree_files(st, "t:st", &v, &n) == 0);
	CHECK(n == 2);
	for (size_t i = 0; i < n && i < t.n; i++) {
		CHECK_STR(v[i].path, t.v[i].path);
		CHECK(hash_eq(v[i].h, t.v[i].h) && v[i].mtime == t.v[i].mtime && v[i].ino == t.v[i].ino);
	}
	CHECK(state_tree(st, "t:other", &fp, &racy, &content) == 0);
	state_close(st);

	/* nothing changed: the same fingerprint, and the records give the same content */
	CHECK(scan_tree(dir, NULL, &t2) == 0);
	CHECK(hash_eq(t2.fingerprint, t.fingerprint));
	CHECK(hash_tree(&t2, v, n, later) == 0);
	CHECK(hash_eq(t2.content, t.content));
	free_tree(&t2);
	free_tree(&t);
}

/*
 * A folder with no file to hash (empty, or no file matching the globs):
 * an empty tree.  Run in a child, so that a crash (a sanitizer's abort)
 * fails these checks and not the whole test.
 */
static int scan_nothing(const char *dir, const struct strlist *g)
{
	pid_t pid;
	int status;

	fflush(NULL);
	if ((pid = fork()) < 0)
		return -1;
	if (pid == 0) {
		struct tree t;
		int ok = scan_tree(dir, g, &t) == 0 && t.n == 0 &&
			 hash_tree(&t, NULL, 0, wall_ns()) == 0 && !hash_zero(t.content);
		free_tree(&t);
		_exit(ok ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static void test_scan_nothing(void)
{
	struct strlist g = globs("nothing", NULL, NULL);
	int r;

	if (mkdirs(path_join(tmp, "empty")) < 0)
		perror("mkdirs");
	r = scan_nothing(path_join(tmp, "empty"), NULL);
	CHECK(r == 0);
	if (r)
		fprintf(stderr, "  scan of an empty folder: child exited %d\n", r);
	put("nothing-matches/a.yaml", "a: 1\n");
	put("nothing-matches/z/b.yml", "b: 1\n");
	r = scan_nothing(path_join(tmp, "nothing-matches"), &g);
	CHECK(r == 0);
	if (r)
		fprintf(stderr, "  scan with no file matching: child exited %d\n", r);
}

static void setup(void)
{
	scratch_setup("t-hash");
}

TEST_MAIN_SHUFFLE(setup, scratch_end,
	  test_hash, test_glob, test_inputs, test_scan_tree, test_fingerprint, test_hash_tree, test_racy, test_tree_encode, test_symlink_out, test_state_cache, test_scan_nothing)
