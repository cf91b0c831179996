/*
 * t-gitops.c - gitops.c against local bare repositories: the first push to a
 * created remote, one commit per change touching only its folder, no commit
 * for content the remote holds, removal, the remote moving under a push
 * (rebuilt when it touched other folders, refused when it touched ours,
 * bounded retries), hand edits of idpmake's folders, a run that died after
 * its push landed, file:// URLs, another branch, reading, and no password in
 * any message.  The git CLI plays the other operator and checks the results.
 */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "git/gitops.h"
#include "git/gitremote.h"
#include "git/lazycache.h"
#include "git/remotekeys.h"
#include "base/util.h"
#include "test.h"

extern void (*gitops_test_after_fetch)(int attempt);

static char *tmp;		/* scratch folder, removed at the end */
static char *dir;		/* the running test's own folder in it */
static int nbundle;

static char *vfmt(const char *fmt, va_list ap)
{
	struct buf b = BUF_INIT;
	char *s;

	buf_vaddf(&b, fmt, ap);
	s = astrdup(b.s);
	buf_release(&b);
	return s;
}

/* run a shell command; its exit status */
static int run(const char *fmt, ...)
{
	va_list ap;
	char *cmd;

	va_start(ap, fmt);
	cmd = vfmt(fmt, ap);
	va_end(ap);
	return system(cmd);
}

/* a shell command's output without the trailing newline ("" on failure) */
static char *out(const char *fmt, ...)
{
	struct buf b = BUF_INIT;
	char chunk[4096], *s;
	size_t n;
	va_list ap;
	FILE *f;

	va_start(ap, fmt);
	f = popen(vfmt(fmt, ap), "r");
	va_end(ap);
	if (!f)
		return "";
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_add(&b, chunk, n);
	pclose(f);
	while (b.len && b.s[b.len - 1] == '\n')
		b.s[--b.len] = 0;
	s = astrdup(b.s);
	buf_release(&b);
	return s;
}

/* a bundle file of NULL-terminated name, content pairs (sorted by the caller) */
static const char *mkbundle(const char *name, ...)
{
	struct bundle_entry v[16];
	struct buf b = BUF_INIT;
	const char *path = aprintf("%s/bundle%d", tmp, nbundle++);
	size_t n = 0;
	va_list ap;

	va_start(ap, name);
	for (; name; name = va_arg(ap, const char *)) {
		v[n].name = name;
		v[n].data = va_arg(ap, const char *);
		v[n].len = strlen(v[n].data);
		n++;
	}
	va_end(ap);
	bundle_write(v, n, &b);
	if (write_file_atomic(path, b.s, b.len))
		fatal("cannot write %s:", path);
	buf_release(&b);
	return path;
}

/* stderr into a file between capture() and captured() */
static int saved_stderr = -1;

static void capture(void)
{
	int fd;

	fflush(stderr);
	saved_stderr = dup(2);
	fd = open(aprintf("%s/stderr", tmp), O_WRONLY | O_CREAT | O_TRUNC, 0644);
	dup2(fd, 2);
	close(fd);
}

static char *captured(void)
{
	size_t len;
	char *s, *text;

	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	text = read_file(aprintf("%s/stderr", tmp), &len);
	s = astrdup(text ? text : "");
	free(text);
	return s;
}

static struct gitops_opts opts(const char *name, const char *remote, int create)
{
	struct gitops_opts o = { 0 };

	o.statedir = aprintf("%s/%s", dir, name);
	o.remote = remote;
	o.create_remote = create;
	o.branch = "main";
	o.author_name = "Idp Maker";
	o.author_email = "idp@example.com";
	return o;
}

static int count_commits(const char *remote)
{
	return atoi(out("git -C %s rev-list --count main 2>/dev/null", remote));
}

/* the objects the clone holds itself (loose or packed), not through its alternate */
static int clone_objects(const char *statedir)
{
	return atoi(out("git -C %s/repo count-objects -v | awk '/^count:|^in-pack:/ {n += $2} END {print n}'",
			statedir));
}

/* the other operator: a clone of `remote` that commits FILE with CONTENT and pushes */
static const char *other_remote;
static int other_n;

static void other_push(const char *file, const char *content)
{
	const char *w = aprintf("%s/other%d", tmp, other_n++);

	if (run("git clone -q %s %s && mkdir -p \"$(dirname %s/%s)\" && printf '%%s' '%s' >%s/%s &&"
		" git -C %s add -A && git -C %s commit -q -m 'other operator' && git -C %s push -q origin HEAD:main",
		other_remote, w, w, file, content, w, file, w, w, w))
		fatal("the other operator's push failed");
}

static void hook_other_folder(int attempt)
{
	if (attempt == 0)
		other_push("other/c/config.yaml", "c: 1\n");
}

static void hook_our_folder(int attempt)
{
	if (attempt == 0)
		other_push("in-cluster/a/x.yaml", "x: theirs\n");
}

static void hook_racer(int attempt)
{
	if (attempt == 0)
		other_push("in-cluster/a/x.yaml", "x: racer\n");
}

static void hook_always(int attempt)
{
	other_push(aprintf("busy/f%d.yaml", attempt), "busy\n");
}

/* ---- tests -------------------------------------------------------------- */

/*
 * Each test starts in a folder of its own (begin), most from a remote of their
 * own holding the base commit (base): no test depends on another having run.
 */
static const char *remote;	/* the running test's remote */
static struct gitops_result first;	/* its base commit */

static void begin(const char *name)
{
	dir = aprintf("%s/%s", tmp, name);
	mkdirs(dir);
	remote = aprintf("%s/state/gitops.git", dir);
	other_remote = remote;
	gitops_test_after_fetch = NULL;
	gitops_set_owners(NULL, 0);
}

/* the first push to a created remote: in-cluster/a (x, y), in-cluster/b, prod/z */
static int push_base(struct gitops_result *r)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_change c[3] = { 0 };

	c[0].path = "in-cluster/a";
	c[0].bundle = mkbundle("x.yaml", "x: 1\n", "y.yaml", "y: 1\n", NULL);
	c[1].path = "in-cluster/b/";
	c[1].bundle = mkbundle("deployment.app.yaml", "kind: Deployment\n", NULL);
	c[2].path = "prod/z";
	c[2].bundle = mkbundle("z.yaml", "z: 1\n", NULL);
	return gitops_push(&o, c, 3, "idpmake: in-cluster/a, in-cluster/b, prod/z\n\nIdpmake-Run: 1", r);
}

static void base(const char *name)
{
	begin(name);
	if (push_base(&first) || !first.made_commit)
		fatal("%s: the base push failed", name);
}

static void test_first_push(void)
{
	struct gitops_result r;

	begin("first-push");
	CHECK(push_base(&r) == 0);
	CHECK(r.made_commit == 1);
	CHECK(r.retries == 0);
	CHECK_STR(r.parent, "");
	CHECK(strlen(r.commit) == 40);
	CHECK_STR(out("git -C %s rev-parse refs/heads/main", remote), r.commit);
	CHECK_STR(out("git -C %s symbolic-ref HEAD", remote), "refs/heads/main");
	CHECK_STR(out("git -C %s rev-parse --is-bare-repository", remote), "true");
	CHECK_STR(out("git -C %s ls-tree -r --name-only main | paste -sd' '", remote),
		  "in-cluster/a/x.yaml in-cluster/a/y.yaml in-cluster/b/deployment.app.yaml prod/z/z.yaml");
	CHECK_STR(out("git -C %s ls-tree main in-cluster/a/x.yaml | cut -c1-6", remote), "100644");
	CHECK_STR(out("git -C %s show main:in-cluster/a/y.yaml", remote), "y: 1");
	CHECK_STR(out("git -C %s log -1 --format='%%an <%%ae>|%%s|%%(trailers:key=Idpmake-Run,valueonly)' main",
		      remote),
		  "Idp Maker <idp@example.com>|idpmake: in-cluster/a, in-cluster/b, prod/z|1");
	CHECK(count_commits(remote) == 1);
	CHECK(run("git -C %s fsck --no-progress >/dev/null 2>&1", remote) == 0);
	/* the clone: bare, origin is the remote, the tracking ref is the tip */
	CHECK_STR(out("git -C %s/state/repo rev-parse --is-bare-repository", dir), "true");
	CHECK_STR(out("git -C %s/state/repo remote get-url origin", dir), remote);
	CHECK_STR(out("git -C %s/state/repo rev-parse refs/remotes/origin/main", dir), r.commit);
	CHECK_STR(out("git -C %s/state/repo for-each-ref --format='%%(refname)' refs/idpmake refs/heads", dir),
		  "refs/idpmake/known/main");
	CHECK_STR(out("git -C %s/state/repo rev-parse refs/idpmake/known/main^", dir), r.commit);
}

static void in_one_folder_changes(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c[2] = { 0 };
	const char *btree = out("git -C %s rev-parse main:in-cluster/b", remote);
	const char *ztree = out("git -C %s rev-parse main:prod/z", remote);
	int before = clone_objects(o.statedir);

	c[0].path = "in-cluster/a";
	c[0].bundle = mkbundle("x.yaml", "x: 2\n", "y.yaml", "y: 1\n", NULL);
	c[1].path = "in-cluster/b";	/* unchanged content */
	c[1].bundle = mkbundle("deployment.app.yaml", "kind: Deployment\n", NULL);
	CHECK(gitops_push(&o, c, 2, "idpmake: in-cluster/a", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(r.parent, first.commit);
	CHECK_STR(out("git -C %s rev-parse main^", remote), first.commit);
	CHECK(count_commits(remote) == 2);
	CHECK_STR(out("git -C %s diff-tree -r --name-only --no-commit-id main", remote), "in-cluster/a/x.yaml");
	CHECK_STR(out("git -C %s rev-parse main:in-cluster/b", remote), btree);
	CHECK_STR(out("git -C %s rev-parse main:prod/z", remote), ztree);
	/* new objects: one blob, the trees in-cluster/a, in-cluster and the root, the commit,
	 * and idpmake's bookkeeping (the commit of the known folders and its trees);
	 * nothing of the unchanged folders */
	CHECK(clone_objects(o.statedir) - before >= 5 && clone_objects(o.statedir) - before <= 8);
}

static void in_same_content_no_commit(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c = { .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: 1\n", "y.yaml", "y: 1\n", NULL) };
	const char *tip = out("git -C %s rev-parse main", remote);

	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0);
	CHECK(r.made_commit == 0);
	CHECK_STR(r.commit, tip);
	CHECK(count_commits(remote) == 1);
	/* a previous run's push landed, its record did not: a fresh clone finds no change */
	CHECK(run("rm -rf %s/state/repo", dir) == 0);
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0);
	CHECK(r.made_commit == 0);
	CHECK_STR(r.commit, tip);
	CHECK(count_commits(remote) == 1);
	/* the local remote lends its objects: the new clone copied none (it wrote 3: the
	 * commit of the known folders, its trees for in-cluster/ and the root), and is whole */
	CHECK(clone_objects(o.statedir) == 3);
	CHECK_STR(out("git -C %s/state/repo rev-parse origin/main", dir), tip);
	CHECK(run("git -C %s/state/repo fsck --no-progress >/dev/null 2>&1", dir) == 0);
	/* no change at all */
	CHECK(gitops_push(&o, NULL, 0, "idpmake", &r) == 0);
	CHECK(r.made_commit == 0);
	CHECK_STR(r.commit, tip);
}

static void in_remove(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c[2] = { { .path = "in-cluster/b", .bundle = NULL }, { .path = "gone/never-there", .bundle = NULL } };

	CHECK(gitops_push(&o, c, 2, "idpmake: remove in-cluster/b", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(out("git -C %s ls-tree -r --name-only main | paste -sd' '", remote),
		  "in-cluster/a/x.yaml in-cluster/a/y.yaml prod/z/z.yaml");
	CHECK(count_commits(remote) == 2);
	/* an empty bundle removes too; removing the last folder of prod/ removes prod/ */
	c[0].path = "prod/z";
	c[0].bundle = mkbundle(NULL);
	CHECK(gitops_push(&o, c, 1, "idpmake: remove prod/z", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(out("git -C %s ls-tree --name-only main", remote), "in-cluster");
	/* removing what is not there makes no commit */
	CHECK(gitops_push(&o, c, 2, "idpmake: remove", &r) == 0);
	CHECK(r.made_commit == 0);
	CHECK(count_commits(remote) == 3);
	/* put prod/z back for the tests below */
	c[0].bundle = mkbundle("z.yaml", "z: 1\n", NULL);
	CHECK(gitops_push(&o, c, 1, "idpmake: prod/z", &r) == 0);
	CHECK(r.made_commit == 1);
}

static void in_race_other_folder(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c = { .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: 3\n", "y.yaml", "y: 1\n", NULL) };
	int before = count_commits(remote);

	other_remote = remote;
	gitops_test_after_fetch = hook_other_folder;
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0);
	gitops_test_after_fetch = NULL;
	CHECK(r.made_commit == 1);
	CHECK(r.retries == 1);
	CHECK(count_commits(remote) == before + 2);
	CHECK_STR(out("git -C %s rev-parse main", remote), r.commit);
	CHECK_STR(out("git -C %s rev-parse main^", remote), r.parent);
	CHECK_STR(out("git -C %s log -1 --format=%%s main^", remote), "other operator");
	CHECK_STR(out("git -C %s show main:other/c/config.yaml", remote), "c: 1");
	CHECK_STR(out("git -C %s show main:in-cluster/a/x.yaml", remote), "x: 3");
	CHECK_STR(out("git -C %s diff-tree -r --name-only --no-commit-id main", remote), "in-cluster/a/x.yaml");
}

static void in_race_our_folder(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c[2] = {
		{ .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: 4\n", "y.yaml", "y: 1\n", NULL) },
		{ .path = "prod/z", .bundle = mkbundle("z.yaml", "z: 4\n", NULL) },
	};
	const char *msg, *theirs;

	other_remote = remote;
	gitops_test_after_fetch = hook_our_folder;
	capture();
	CHECK(gitops_push(&o, c, 2, "idpmake: in-cluster/a, prod/z", &r) == -1);
	msg = captured();
	gitops_test_after_fetch = NULL;
	theirs = out("git -C %s rev-parse main", remote);
	CHECK_STR(out("git -C %s log -1 --format=%%s main", remote), "other operator");
	CHECK_STR(out("git -C %s show main:in-cluster/a/x.yaml", remote), "x: theirs");
	CHECK_STR(out("git -C %s show main:prod/z/z.yaml", remote), "z: 1");
	CHECK(strstr(msg, aprintf("the remote branch 'main' moved to %.7s and changed in-cluster/a, which this run"
				  " also changes:\n  in-cluster/a: %.7s ", theirs, theirs)) != NULL);
	CHECK(strstr(msg, " \"other operator\"\n") != NULL);	/* the commit's subject */
	/* the ways out (issue 8 §6): running up again would fail the same way */
	CHECK(strstr(msg, "revert those changes in the GitOps repository, or replace them with this run's render:"
			  " idpmake up --overwrite in-cluster/a\n") != NULL);
	CHECK(strstr(msg, "fetch and review") == NULL);
	CHECK(strstr(msg, "prod/z") == NULL);
}

/* up --overwrite: the push writes over the other hand's change and names its commit */
static void in_overwrite(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c = { .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: 5\n", NULL) };
	struct gitops_owner own[2] = { { "prod/z", "prod/z", 0 }, { "in-cluster/a", "in-cluster/a", 1 } };
	const char *theirs, *msg;

	other_push("in-cluster/a/x.yaml", "x: by hand\n");
	theirs = out("git -C %s rev-parse main", remote);
	/* not named: refused, naming the target to overwrite */
	own[1].overwrite = 0;
	gitops_set_owners(own, 2);
	capture();
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a\n\nIdpmake-Run: 7", &r) == -1);
	CHECK(strstr(captured(), "idpmake up --overwrite in-cluster/a") != NULL);
	CHECK_STR(out("git -C %s rev-parse main", remote), theirs);
	/* named: written over */
	own[1].overwrite = 1;
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a\n\nIdpmake-Run: 7", &r) == 0);
	gitops_set_owners(NULL, 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(r.parent, theirs);
	CHECK_STR(out("git -C %s show main:in-cluster/a/x.yaml", remote), "x: 5");
	msg = out("git -C %s log -1 --format=%%B main", remote);
	CHECK(strstr(msg, aprintf("idpmake: in-cluster/a\n\nOverwrites changes made outside idpmake (up --overwrite):\n"
				  "  in-cluster/a: %s ", theirs)) != NULL);
	CHECK(strstr(msg, "\"other operator\"\n\nIdpmake-Run: 7") != NULL);	/* the trailer stays last */
	/* known again: the next push of the folder goes through without --overwrite */
	c.bundle = mkbundle("x.yaml", "x: 6\n", NULL);
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0 && r.made_commit == 1);
}

static void in_retries_bounded(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c = { .path = "prod/z", .bundle = mkbundle("z.yaml", "z: 5\n", NULL) };
	const char *msg;

	other_remote = remote;
	gitops_test_after_fetch = hook_always;
	capture();
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == -1);
	msg = captured();
	gitops_test_after_fetch = NULL;
	CHECK(r.retries == 5);
	CHECK(strstr(msg, "kept moving") != NULL);
	CHECK_STR(out("git -C %s show main:prod/z/z.yaml", remote), "z: 1");
	CHECK_STR(out("git -C %s ls-tree --name-only main busy/ | paste -sd' '", remote),
		  "busy/f0.yaml busy/f1.yaml busy/f2.yaml busy/f3.yaml busy/f4.yaml busy/f5.yaml");
	CHECK_STR(out("git -C %s log -1 --format=%%s main", remote), "other operator");
}

/* someone edits one of idpmake's folders by hand: refused until reconciled, nothing lost */
static void in_hand_edit(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c[2] = {
		{ .path = "prod/z", .bundle = mkbundle("z.yaml", "z: 5\n", NULL) },
		{ .path = "in-cluster/b", .bundle = mkbundle("b.yaml", "b: 1\n", NULL) },
	};
	const char *msg, *hand;

	other_remote = remote;
	other_push("prod/z/z.yaml", "z: by hand\n");
	hand = out("git -C %s rev-parse main", remote);
	capture();
	CHECK(gitops_push(&o, c, 1, "idpmake: prod/z", &r) == -1);
	CHECK(gitops_push(&o, c, 1, "idpmake: prod/z", &r) == -1);	/* again: still refused */
	msg = captured();
	CHECK(strstr(msg, aprintf("the remote branch 'main' moved to %.7s and changed prod/z,", hand)) != NULL);
	CHECK_STR(out("git -C %s rev-parse main", remote), hand);
	/* a change to another folder goes through; prod/z stays refused */
	CHECK(gitops_push(&o, c + 1, 1, "idpmake: in-cluster/b", &r) == 0);
	CHECK(r.made_commit == 1);
	capture();
	CHECK(gitops_push(&o, c, 1, "idpmake: prod/z", &r) == -1);
	captured();
	CHECK_STR(out("git -C %s show main:prod/z/z.yaml", remote), "z: by hand");
	/* the distro takes the hand edit over: nothing to push, and prod/z is idpmake's again */
	c[0].bundle = mkbundle("z.yaml", "z: by hand\n", NULL);
	CHECK(gitops_push(&o, c, 1, "idpmake: prod/z", &r) == 0);
	CHECK(r.made_commit == 0);
	c[0].bundle = mkbundle("z.yaml", "z: 6\n", NULL);
	CHECK(gitops_push(&o, c, 1, "idpmake: prod/z", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(out("git -C %s show main:prod/z/z.yaml", remote), "z: 6");
}

/* a run died after the remote took its push, before it noted so: the next run carries on */
static void in_push_landed_then_died(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c = { .path = "prod/z", .bundle = mkbundle("z.yaml", "z: 7\n", NULL) };
	const char *clone = aprintf("%s/state/repo", dir), *known = out("git -C %s rev-parse refs/idpmake/known/main", clone);

	CHECK(gitops_push(&o, &c, 1, "idpmake: prod/z", &r) == 0);
	CHECK(r.made_commit == 1);
	/* as it would be had the run died between the push and its end */
	CHECK(run("git -C %s update-ref refs/idpmake/pending/main refs/idpmake/known/main &&"
		  " git -C %s update-ref refs/idpmake/known/main %s", clone, clone, known) == 0);
	c.bundle = mkbundle("z.yaml", "z: 8\n", NULL);
	CHECK(gitops_push(&o, &c, 1, "idpmake: prod/z", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(out("git -C %s show main:prod/z/z.yaml", remote), "z: 8");
	CHECK_STR(out("git -C %s for-each-ref refs/idpmake/pending", clone), "");
	/* a pending push that never landed is dropped: prod/z at z: 8 is still idpmake's */
	CHECK(run("cd %s && unpushed=$(git commit-tree -p origin/main -m unpushed origin/main^{tree}) &&"
		  " git update-ref refs/idpmake/pending/main $(git commit-tree -p $unpushed -m pending %s^{tree})",
		  clone, known) == 0);
	c.bundle = mkbundle("z.yaml", "z: 9\n", NULL);
	CHECK(gitops_push(&o, &c, 1, "idpmake: prod/z", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(out("git -C %s for-each-ref refs/idpmake/pending", clone), "");
}

/* a fresh state (no memory of the folders) still catches a push racing its own */
static void in_race_fresh_state(void)
{
	struct gitops_opts o = opts("state-fresh", remote, 1);
	struct gitops_result r;
	struct gitops_change c = { .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: fresh\n", NULL) };
	const char *theirs;

	other_remote = remote;
	gitops_test_after_fetch = hook_racer;
	capture();
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == -1);
	CHECK(strstr(captured(), "changed in-cluster/a, which this run also changes") != NULL);
	gitops_test_after_fetch = NULL;
	theirs = out("git -C %s rev-parse main", remote);
	CHECK_STR(out("git -C %s log -1 --format=%%s main", remote), "other operator");
	/* without a race it writes over what it finds */
	CHECK(run("rm -rf %s/state-fresh", dir) == 0);
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(r.parent, theirs);
	CHECK_STR(out("git -C %s show main:in-cluster/a/x.yaml", remote), "x: fresh");
}

static int collect(void *ctx, const char *name, const char *data, size_t len)
{
	buf_addf(ctx, "%s=%.*s|", name, (int)len, data);
	return 0;
}

static void in_read(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_opts fresh = opts("fresh", remote, 1);
	struct buf b = BUF_INIT;
	char tip[41];

	CHECK(gitops_read(&o, 1, "in-cluster/a", collect, &b, tip) == 0);
	CHECK_STR(b.s, "x.yaml=x: 1\n|y.yaml=y: 1\n|");
	CHECK_STR(tip, out("git -C %s rev-parse main", remote));
	buf_reset(&b);
	/* the files of subfolders too, named by their path in the folder (issue 12 #9) */
	CHECK(gitops_read(&o, 0, "in-cluster", collect, &b, tip) == 0);
	CHECK_STR(b.s, "a/x.yaml=x: 1\n|a/y.yaml=y: 1\n|b/deployment.app.yaml=kind: Deployment\n|");
	buf_reset(&b);
	CHECK(gitops_read(&o, 0, "no/such", collect, &b, tip) == 0);
	CHECK_STR(b.s, "");
	CHECK(strlen(tip) == 40);
	/* no clone yet and no fetch: empty, nothing created */
	CHECK(gitops_read(&fresh, 0, "in-cluster/a", collect, &b, tip) == 0);
	CHECK_STR(tip, "");
	CHECK_STR(b.s, "");
	CHECK(access(aprintf("%s/fresh/repo", dir), F_OK) != 0);
	/* the embedded default remote not created yet: empty */
	fresh.remote = aprintf("%s/fresh/gitops.git", dir);
	CHECK(gitops_read(&fresh, 1, "in-cluster/a", collect, &b, tip) == 0);
	CHECK_STR(tip, "");
	buf_release(&b);
}

static void in_file_url(void)
{
	const char *bare = aprintf("%s/srv/file.git", dir);
	const char *url = aprintf("file://%s", bare);
	struct gitops_opts o = opts("state-file", url, 0);
	struct gitops_result r;
	struct gitops_change c = { .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: 1\n", NULL) };
	struct buf b = BUF_INIT;
	char tip[41];

	/* no such remote, not the embedded one: an error */
	capture();
	CHECK(gitops_push(&o, &c, 1, "idpmake", &r) == -1);
	CHECK(strstr(captured(), "does not exist") != NULL);

	CHECK(run("git init -q --bare -b main %s", bare) == 0);
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(out("git -C %s rev-parse main", bare), r.commit);
	CHECK_STR(out("git -C %s/state-file/repo remote get-url origin", dir), url);
	CHECK(gitops_read(&o, 1, "in-cluster/a", collect, &b, tip) == 0);
	CHECK_STR(b.s, "x.yaml=x: 1\n|");
	CHECK_STR(tip, r.commit);
	buf_release(&b);

	/* create_remote with a file:// URL */
	o = opts("state-file2", aprintf("file://%s/srv/created.git", dir), 1);
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0);
	CHECK_STR(out("git -C %s/srv/created.git rev-parse main", dir), r.commit);

	/* the remote changed: origin follows, the clone is fetched, not re-cloned */
	o = opts("state-file", remote, 0);
	CHECK(gitops_push(&o, &c, 1, "idpmake: in-cluster/a", &r) == 0);
	CHECK_STR(out("git -C %s/state-file/repo remote get-url origin", dir), remote);
	CHECK_STR(out("git -C %s rev-parse main", remote), r.commit);
	CHECK_STR(out("git -C %s show main:in-cluster/a/x.yaml", remote), "x: 1");
}

static void in_other_branch(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c = { .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: staging\n", NULL) };
	const char *main_tip = out("git -C %s rev-parse main", remote);

	o.branch = "staging";
	CHECK(gitops_push(&o, &c, 1, "idpmake: staging", &r) == 0);
	CHECK(r.made_commit == 1);
	CHECK_STR(r.parent, "");
	CHECK_STR(out("git -C %s ls-tree -r --name-only staging", remote), "in-cluster/a/x.yaml");
	CHECK_STR(out("git -C %s rev-parse main", remote), main_tip);
}

static void in_errors(void)
{
	struct gitops_opts o = opts("state", remote, 1);
	struct gitops_result r;
	struct gitops_change c[2] = {
		{ .path = "in-cluster/a", .bundle = mkbundle("x.yaml", "x: 9\n", NULL) },
		{ .path = "in-cluster/a/sub", .bundle = mkbundle("x.yaml", "x: 9\n", NULL) },
	};
	const char *tip = out("git -C %s rev-parse main", remote), *msg;

	capture();
	CHECK(gitops_push(&o, c, 2, "idpmake", &r) == -1);
	c[1].path = "in-cluster/a/";
	CHECK(gitops_push(&o, c, 2, "idpmake", &r) == -1);
	c[0].path = "../escape";
	CHECK(gitops_push(&o, c, 1, "idpmake", &r) == -1);
	c[0].path = "in-cluster/.git";
	CHECK(gitops_push(&o, c, 1, "idpmake", &r) == -1);
	c[0].path = "in-cluster/bad";
	c[0].bundle = aprintf("%s/no-such-bundle", tmp);
	CHECK(gitops_push(&o, c, 1, "idpmake", &r) == -1);
	msg = captured();
	CHECK(strstr(msg, "inside the git folder 'in-cluster/a'") != NULL);
	CHECK(strstr(msg, "two packages have the git folder 'in-cluster/a'") != NULL);
	CHECK(strstr(msg, "'../escape' is not a valid folder") != NULL);
	CHECK(strstr(msg, "no-such-bundle") != NULL);
	CHECK_STR(out("git -C %s rev-parse main", remote), tip);
}

/* an unreachable https remote with a password in the URL, -v: the password never shows */
static void in_no_secret_shown(void)
{
	struct gitops_opts o = opts("state-http", "http://idp:s3cr3t-pw@127.0.0.1:1/x.git", 0);
	struct gitops_result r;
	const char *msg;

	o.verbose = 1;
	setenv("IDPMAKE_GIT_TOKEN", "t0ken-secret", 1);
	capture();
	CHECK(gitops_push(&o, NULL, 0, "idpmake", &r) == -1);
	msg = captured();
	unsetenv("IDPMAKE_GIT_TOKEN");
	CHECK(strstr(msg, "git fetch http://idp:***@127.0.0.1:1/x.git refs/heads/main") != NULL);
	CHECK(strstr(msg, "cannot fetch 'main' from http://idp:***@127.0.0.1:1/x.git") != NULL);
	CHECK(strstr(msg, "s3cr3t") == NULL);
	CHECK(strstr(msg, "t0ken") == NULL);
	CHECK(run("grep -rq s3cr3t %s/state-http", dir) != 0);
	CHECK_STR(out("git -C %s/state-http/repo remote get-url origin", dir), "http://idp@127.0.0.1:1/x.git");
}

/* each test from its own folder and remote */
static void test_one_folder_changes(void) { base("one-folder-changes"); in_one_folder_changes(); }
static void test_same_content_no_commit(void) { base("same-content-no-commit"); in_same_content_no_commit(); }
static void test_remove(void) { base("remove"); in_remove(); }
static void test_race_other_folder(void) { base("race-other-folder"); in_race_other_folder(); }
static void test_race_our_folder(void) { base("race-our-folder"); in_race_our_folder(); }
static void test_overwrite(void) { base("overwrite"); in_overwrite(); }
static void test_retries_bounded(void) { base("retries-bounded"); in_retries_bounded(); }
static void test_hand_edit(void) { base("hand-edit"); in_hand_edit(); }
static void test_push_landed_then_died(void) { base("push-landed-then-died"); in_push_landed_then_died(); }
static void test_race_fresh_state(void) { base("race-fresh-state"); in_race_fresh_state(); }
static void test_read(void) { base("read"); in_read(); }
static void test_file_url(void) { base("file-url"); in_file_url(); }
static void test_other_branch(void) { base("other-branch"); in_other_branch(); }
static void test_errors(void) { base("errors"); in_errors(); }
static void test_no_secret_shown(void) { begin("no-secret-shown"); in_no_secret_shown(); }

static void setup(void)
{
	char *templ = aprintf("%s/t-gitops.XXXXXX", test_tmpdir());

	if (!mkdtemp(templ))
		fatal("mkdtemp:");
	tmp = astrdup(templ);
	/* a hermetic git CLI */
	setenv("HOME", aprintf("%s/home", tmp), 1);
	mkdirs(aprintf("%s/home", tmp));
	setenv("GIT_CONFIG_NOSYSTEM", "1", 1);
	setenv("GIT_AUTHOR_NAME", "other", 1);
	setenv("GIT_AUTHOR_EMAIL", "other@example.com", 1);
	setenv("GIT_COMMITTER_NAME", "other", 1);
	setenv("GIT_COMMITTER_EMAIL", "other@example.com", 1);
	unsetenv("IDPMAKE_GIT_TOKEN");
	unsetenv("IDPMAKE_GIT_USERNAME");
	unsetenv("GIT_DIR");
}

static void teardown(void)
{
	if (t_failed)
		fprintf(stderr, "t-gitops: kept %s\n", tmp);
	else
		rmtree(tmp);
}

/* the peak resident size, in MiB */
static long peak_mib(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_maxrss / 1024;
}

/*
 * A hostile keys index (anyone who can push writes it) of REMOTEKEYS_CAP's
 * size costs no more than about its size again: 48 MiB of empty lines kept a
 * 16-byte arena string per line (768 MiB).  Valid lines still parse.
 */
static void test_keys_index_memory(void)
{
	const char *good = "dev/web 0123456789abcdef0123456789abcdef 00000000000000000000000000000001 "
			   "a99b31ae096b23a40160c104f9a7ef4cfadb1854\n";
	size_t len = 48u << 20, hl = strlen("idpmake-keys 1\n");
	char *text = xmalloc(len);
	struct remotekey *v;
	size_t n;
	long before;

	memcpy(text, "idpmake-keys 1\n", hl);
	memset(text + hl, '\n', len - hl);
	memcpy(text + len - strlen(good), good, strlen(good));
	before = peak_mib();
	remotekeys_parse(text, len, &v, &n);
	CHECK(n == 1 && !strcmp(v[0].folder, "dev/web"));
	CHECK(peak_mib() - before < 100);
	if (peak_mib() - before >= 100)
		fprintf(stderr, "parsing a 48 MiB index of empty lines took %ld MiB\n", peak_mib() - before);
	free(text);
}

/*
 * A folder of the GitOps repository as a bundle (lazycache.c, remotekeys.c's
 * proof of an empty state): anyone who can push writes its tree, and a tree
 * entry's name may hold a newline.  A folder named "x 0\n\n.." around a file
 * "passwd" gave the bundle text "x 0\n\n../passwd 6\nowned\n": an entry
 * "../passwd" that a hook's IDPMAKE_RENDERED unpacking wrote outside its
 * folder.  Such a folder is not one idpmake could have written.
 */
static void test_folder_bundle_hostile_names(void)
{
	static const char *const names[] = { "x 0\\n\\n..", "a\\nb", "a\\rb", "sub" };
	const char *repo = aprintf("%s/names.git", tmp);
	struct git g;
	git_oid id;
	git_tree *t = NULL;
	struct buf b = BUF_INIT;

	CHECK(run("git init -q --bare %s", repo) == 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *root = out("cd %s && b=$(printf 'owned\\n' | git hash-object -w --stdin) && "
				       "t=$(printf '100644 blob %%s\\tpasswd\\0' $b | git mktree -z) && "
				       "printf '040000 tree %%s\\t%s\\0' $t | git mktree -z", repo, names[i]);
		memset(&g, 0, sizeof(g));
		git_libgit2_init();
		CHECK(strlen(root) == 40 && git_repository_open_bare(&g.repo, repo) == 0 &&
		      git_repository_odb(&g.odb, g.repo) == 0 && git_oid_fromstr(&id, root) == 0 &&
		      git_tree_lookup(&t, g.repo, &id) == 0);
		buf_reset(&b);
		if (i < 3) {
			CHECK(folder_bundle(&g, t, &b) == -1);
		} else {
			CHECK(folder_bundle(&g, t, &b) == 0);
			CHECK_STR(b.s, BUNDLE_MAGIC "sub/passwd 6\nowned\n\n");
		}
		git_tree_free(t);
		t = NULL;
		git_odb_free(g.odb);
		git_repository_free(g.repo);
		git_libgit2_shutdown();
	}
	buf_release(&b);
}

TEST_MAIN_SHUFFLE(setup, teardown, test_first_push, test_one_folder_changes, test_same_content_no_commit,
	  test_remove, test_race_other_folder, test_race_our_folder, test_retries_bounded, test_hand_edit,
	  test_overwrite,
	  test_push_landed_then_died, test_race_fresh_state, test_read,
	  test_file_url, test_other_branch, test_errors, test_no_secret_shown,
	  test_keys_index_memory, test_folder_bundle_hostile_names)
