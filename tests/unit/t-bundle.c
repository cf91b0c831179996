/*
 * t-bundle.c - the bundle format's reader (engine/bundle.c) on inputs a
 * truncated or corrupt cache file gives, under ASan in the asan build: a
 * header on the last line, lengths past the end or not plain decimal; names
 * with spaces; the cache's hash check (a file whose bytes do not hash to its
 * name is refused and removed); write_file_atomic leaves no temporary file.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <dirent.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "base/hash.h"
#include "base/util.h"
#include "test.h"
#include "scratch.h"

/* parse exactly `len` bytes in a buffer of that size (no NUL after it), so ASan sees any over-read */
static int parse_exact(const char *s, size_t len, struct bundle *b)
{
	char *text = xmalloc(len ? len : 1);
	int r;

	memcpy(text, s, len);
	capture_start();
	r = bundle_parse(text, len, b, "test-bundle");
	capture_end();
	return r;
}

static void test_bad_inputs(void)
{
	static const char *const bad[] = {
		"idpmake-bundle 1\nconfigmap.a.yaml 5\n",	/* the header on the last line (issue 12 #6) */
		"idpmake-bundle 1\nconfigmap.a.yaml 0\n",	/* the same, length 0 */
		"idpmake-bundle 1\nconfigmap.a.yaml 5\nab",	/* truncated content */
		"idpmake-bundle 1\nconfigmap.a.yaml 2\nab",	/* no newline after it */
		"idpmake-bundle 1\nconfigmap.a.yaml 2\nabc\n",	/* wrong terminator */
		"idpmake-bundle 1\nconfigmap.a.yaml 18446744073709551615\nx\n",
		"idpmake-bundle 1\nconfigmap.a.yaml 18446744073709551616\nx\n",	/* overflows */
		"idpmake-bundle 1\nconfigmap.a.yaml 99999999999999999999999\nx\n",
		"idpmake-bundle 1\nconfigmap.a.yaml -1\nx\n",
		"idpmake-bundle 1\nconfigmap.a.yaml +1\nx\n",
		"idpmake-bundle 1\nconfigmap.a.yaml 1x\nx\n",
		"idpmake-bundle 1\nconfigmap.a.yaml 01\nx\n",	/* a leading zero: bundle_write writes 1 */
		"idpmake-bundle 1\nconfigmap.a.yaml 00\n\n",
		"idpmake-bundle 1\nconfigmap.a.yaml \nx\n",
		"idpmake-bundle 1\n 1\nx\n",			/* no name */
		"idpmake-bundle 1\nnospace\n",
		"idpmake-bundle 1\nnospace",
		"idpmake-bundle 1\ncm.yaml 1\nx\ncm2.yaml 3\n",	/* a second header on the last line */
		"idpmake-bundle 1",
		"idpmake-bundle 2\n",
		"",
		"idpmake-bundle 1\n../x 1\nx\n",		/* a name that leads out of DIR/NAME */
		"idpmake-bundle 1\na/../../x 1\nx\n",
		"idpmake-bundle 1\n/etc/x 1\nx\n",
		"idpmake-bundle 1\na//b 1\nx\n",
		"idpmake-bundle 1\n. 1\nx\n",
	};

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct bundle b;
		int r = parse_exact(bad[i], strlen(bad[i]), &b);
		CHECK(r == -1 && b.n == 0 && b.v == NULL && b.text == NULL);
		if (r != -1)
			fprintf(stderr, "  bad input %zu was accepted\n", i);
	}
	{
		/* dots inside a part are a name like any other */
		static const char dots[] = "idpmake-bundle 1\n..a/b../.c 1\nx\n";
		struct bundle b;
		CHECK(parse_exact(dots, sizeof(dots) - 1, &b) == 0 && b.n == 1 && !strcmp(b.v[0].name, "..a/b../.c"));
		bundle_free(&b);
	}
	{
		/* a NUL in a name cuts it short: another file (found by tests/fuzz/fuzz-bundle) */
		static const char nul[] = "idpmake-bundle 1\nRoleBinding.my bind\0ing.yaml 5\nab cd\n";
		struct bundle b;
		int r = parse_exact(nul, sizeof(nul) - 1, &b);
		CHECK(r == -1 && b.n == 0 && b.v == NULL);
	}
}

static void test_round_trip(void)
{
	struct bundle_entry in[] = {
		{ "clusterrole.system:a b.yaml", "kind: ClusterRole\n", 18 },	/* RBAC names may hold spaces */
		{ "configmap.x.yaml", "", 0 },
		{ "dir/sub file.yaml", "a: 1\n\n", 6 },
	};
	struct buf out = BUF_INIT;
	struct bundle b;

	bundle_write(in, 3, &out);
	CHECK(parse_exact(out.s, out.len, &b) == 0);
	CHECK(b.n == 3);
	for (size_t i = 0; i < 3 && i < b.n; i++) {
		CHECK_STR(b.v[i].name, in[i].name);
		CHECK(b.v[i].len == in[i].len && !memcmp(b.v[i].data, in[i].data, in[i].len));
	}
	bundle_free(&b);
	/*
	 * every proper prefix is read without reading past it, and refused
	 * unless it ends between entries: such a truncation is a valid bundle
	 * of fewer files, which only the hash in the cache's file name tells
	 */
	for (size_t n = 0; n < out.len; n++) {
		size_t boundary = strlen("idpmake-bundle 1\n"), nb = 0;
		int r = parse_exact(out.s, n, &b), at_boundary = n == boundary;
		for (size_t i = 0; i < 3; i++) {
			boundary += strlen(in[i].name) + 1 + (in[i].len > 9 ? 2 : 1) + 1 + in[i].len + 1;
			if (n == boundary)
				at_boundary = 1, nb = i + 1;
		}
		CHECK(at_boundary ? r == 0 && b.n == nb : r == -1);
		bundle_free(&b);
	}
	buf_release(&out);
}

static int exists(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0;
}

static void test_cache_hash(void)
{
	struct bundle_entry in[] = { { "configmap.a.yaml", "data: {a: '1'}\n", 15 } };
	struct buf out = BUF_INIT;
	struct hash h;
	struct bundle b;
	const char *path;

	bundle_write(in, 1, &out);
	h = hash_bytes(out.s, out.len);
	path = bundle_path(statedir, h);
	CHECK(mkdirs(path_dir(path)) == 0 && write_file_atomic(path, out.s, out.len) == 0);
	CHECK(bundle_check(statedir, h) == 0);
	CHECK(bundle_read(path, &b) == 0 && b.n == 1);
	bundle_free(&b);

	/* truncated as a crash before the data reached the disk leaves it */
	CHECK(write_file_atomic(path, out.s, out.len - 3) == 0);
	capture_start();
	CHECK(bundle_read(path, &b) == -1 && b.n == 0);
	CHECK(strstr(capture_end(), "does not match its hash") != NULL);
	CHECK(!exists(path));	/* removed: the next plan renders it again */

	/* the same length, one byte changed: parses, but is not what was rendered */
	out.s[out.len - 3] ^= 1;
	CHECK(write_file_atomic(path, out.s, out.len) == 0);
	CHECK(bundle_check(statedir, h) == -1);
	CHECK(!exists(path));
	CHECK(bundle_check(statedir, h) == -1);	/* missing */

	/* a path outside the cache is not checked by name */
	path = path_join(tmp, "elsewhere.bundle");
	CHECK(write_file_atomic(path, out.s, out.len) == 0);
	CHECK(bundle_read(path, &b) == 0 && b.n == 1);
	bundle_free(&b);
	buf_release(&out);
}

static void test_write_atomic(void)
{
	const char *dir = path_join(tmp, "w"), *path = path_join(dir, "f");
	DIR *d;
	struct dirent *e;
	int others = 0;
	size_t len;
	char *text;

	CHECK(mkdirs(dir) == 0);
	CHECK(write_file_atomic(path, "one", 3) == 0);
	CHECK(write_file_atomic(path, "two!", 4) == 0);
	text = read_file(path, &len);
	CHECK(text && len == 4 && !memcmp(text, "two!", 4));
	free(text);
	if ((d = opendir(dir))) {
		while ((e = readdir(d)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && strcmp(e->d_name, "f"))
				others++;
		closedir(d);
	}
	CHECK(others == 0);
	CHECK(write_file_atomic(path_join(tmp, "no/such/dir/f"), "x", 1) == -1);
}

/* stream the file at path: the entries (names joined by '|') and the result (0 or -1) */
static int stream(const char *path, struct buf *names)
{
	struct bundle_stream bs;
	const char *name, *data;
	size_t len;
	int r;

	buf_reset(names);
	capture_start();
	if (bundle_open(&bs, path) < 0) {
		capture_end();
		return -1;
	}
	while ((r = bundle_next(&bs, &name, &data, &len)) > 0)
		buf_addf(names, "%s%s:%zu:%.*s", names->len ? "|" : "", name, len, (int)len, data);
	bundle_close(&bs);
	capture_end();
	return r;
}

/* bundle_open/bundle_next, the push's reader: the same rules as bundle_parse, an entry at a time */
static void test_stream(void)
{
	struct bundle_entry in[] = {
		{ "clusterrole.system:a b.yaml", "kind: ClusterRole\n", 18 },
		{ "configmap.x.yaml", "", 0 },
		{ "dir/sub file.yaml", "a: 1\n\n", 6 },
	};
	static const char *const bad[] = {
		"idpmake-bundle 1\nconfigmap.a.yaml 5\n", "idpmake-bundle 1\nconfigmap.a.yaml 5\nab",
		"idpmake-bundle 1\nconfigmap.a.yaml 2\nabc\n", "idpmake-bundle 1\nconfigmap.a.yaml 18446744073709551615\nx\n",
		"idpmake-bundle 1\nconfigmap.a.yaml 01\nx\n", "idpmake-bundle 1\nconfigmap.a.yaml \nx\n",
		"idpmake-bundle 1\n 1\nx\n", "idpmake-bundle 1\nnospace", "idpmake-bundle 1\ncm.yaml 1\nx\ncm2.yaml 3\n",
		"idpmake-bundle 1", "idpmake-bundle 2\n", "",
		/* names that are not a relative path down: a reader writes DIR/NAME */
		"idpmake-bundle 1\n../x 1\nx\n", "idpmake-bundle 1\na/../../x 1\nx\n", "idpmake-bundle 1\n/etc/x 1\nx\n",
		"idpmake-bundle 1\na//b 1\nx\n", "idpmake-bundle 1\na/./b 1\nx\n", "idpmake-bundle 1\na/ 1\nx\n",
		"idpmake-bundle 1\n.. 1\nx\n", "idpmake-bundle 1\nx 0\n\n../passwd 6\nowned\n",
	};
	struct buf out = BUF_INIT, names = BUF_INIT;
	const char *path = path_join(tmp, "s.bundle");
	struct hash h;

	bundle_write(in, 3, &out);
	CHECK(write_file_atomic(path, out.s, out.len) == 0);
	CHECK(stream(path, &names) == 0);
	CHECK_STR(names.s, "clusterrole.system:a b.yaml:18:kind: ClusterRole\n|configmap.x.yaml:0:|dir/sub file.yaml:6:a: 1\n\n");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(write_file_atomic(path, bad[i], strlen(bad[i])) == 0);
		CHECK(stream(path, &names) == -1);
	}
	/* a header line longer than any name is refused, not grown without bound */
	buf_reset(&names);
	buf_adds(&names, "idpmake-bundle 1\n");
	for (int i = 0; i < 10000; i++)
		buf_addc(&names, 'a');
	buf_adds(&names, " 1\nx\n");
	CHECK(write_file_atomic(path, names.s, names.len) == 0);
	CHECK(stream(path, &names) == -1);

	/* in the cache: every entry is given, then the end says the bytes do not hash to the name */
	h = hash_bytes(out.s, out.len);
	out.s[out.len - 2] ^= 1;
	path = bundle_path(statedir, h);
	CHECK(mkdirs(path_dir(path)) == 0 && write_file_atomic(path, out.s, out.len) == 0);
	CHECK(stream(path, &names) == -1);
	CHECK(!exists(path));	/* removed: the next plan renders it again */
	out.s[out.len - 2] ^= 1;
	CHECK(write_file_atomic(path, out.s, out.len) == 0);
	CHECK(stream(path, &names) == 0 && exists(path));
	buf_release(&names);
	buf_release(&out);
}

static void run(void)
{
	scratch_setup("t-bundle");
	test_bad_inputs();
	test_round_trip();
	test_cache_hash();
	test_write_atomic();
	test_stream();
	scratch_end();
}

TEST_MAIN(run)
