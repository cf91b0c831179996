/*
 * source.c - git sources of packages (distro.md "Sources").
 *
 *   STATE/cache/git/HASH.git      a bare repository per URL, fetched, never re-cloned
 *   STATE/cache/git/src/ID/       the source's `path` at commit ID, checked out by
 *                                 libgit2 (no `..`, `.git` or absolute names) and
 *                                 refused when a symlink in it leads outside it
 *
 * The resolved commit is part of the render's key.  A ref resolves once
 * and the result is recorded (state tool table, "git URL REF"); later runs
 * reuse it, so a no-op run makes no network call; --refresh resolves again.
 */
#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/hash.h"
#include "pack/pack.h"
#include "git/source.h"
#include "base/url.h"
#include "base/util.h"

/*
 * Credentials: a password in the source's URL, else IDPMAKE_SOURCE_TOKEN
 * (with IDPMAKE_SOURCE_USERNAME, default "git"), offered to the source's
 * own scheme, host and port, and over plain http only with
 * IDPMAKE_GIT_ALLOW_HTTP=1.  The GitOps remote's IDPMAKE_GIT_TOKEN is never
 * offered here: a source may be anyone's server.
 */
struct conn {
	const char *url;		/* the source's URL without its password */
	struct url parsed;		/* the URL as given, split */
	int tries;
	enum { SENT, HELD_HTTP, HELD_HOST } refused;	/* credentials held back, and why */
	int missing;			/* the server asked for a password, and there is none */
};

static int credentials(git_credential **out, const char *url, const char *user_from_url,
		       unsigned int allowed, void *payload)
{
	struct conn *c = payload;
	const char *token = getenv("IDPMAKE_SOURCE_TOKEN"), *user = getenv("IDPMAKE_SOURCE_USERNAME");

	if (c->parsed.password) {
		token = c->parsed.password;
		user = c->parsed.user;
	}
	if (user && !*user)
		user = NULL;
	if (user_from_url && !*user_from_url)
		user_from_url = NULL;
	if (c->tries++ > 2)
		return GIT_EAUTH;
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && token && *token) {
		if (!url || !url_same_origin(url, c->url) ||
		    !url_may_send_credentials(&c->parsed, "a git source's credentials")) {
			c->refused = !url || !url_same_origin(url, c->url) ? HELD_HOST : HELD_HTTP;
			git_error_set_str(GIT_ERROR_NET, "authentication failed");
			return GIT_EAUTH;
		}
		return git_credential_userpass_plaintext_new(out, user ? user : user_from_url ? user_from_url : "git", token);
	}
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && !(allowed & GIT_CREDENTIAL_SSH_KEY)) {
		c->missing = 1;
		git_error_set_str(GIT_ERROR_NET, "the server asks for a user name and password");
		return GIT_EAUTH;
	}
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user_from_url ? user_from_url : "git");
	return GIT_PASSTHROUGH;
}

/* libgit2's last error after `what`, with the fix where known, secrets masked */
static const char *gitmsg(const char *what, const struct conn *c)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message ? e->message : "unknown error", *hint = "";
	const char *pw = c ? c->parsed.password : NULL, *raw = c ? c->parsed.password_raw : NULL;
	const char *r;

	/* a redirect to another server is said as such, even from a plain http source */
	if (c && c->refused == HELD_HOST)
		hint = " (a server other than the source's asked for credentials: a redirect?  idpmake offers"
		       " a source's credentials to its own scheme, host and port only)";
	else if (c && c->refused == HELD_HTTP)
		hint = " (credentials are not sent over plain http: use https, or set IDPMAKE_GIT_ALLOW_HTTP=1)";
	else if (c && (c->tries > 2 || c->missing))
		hint = " (set IDPMAKE_SOURCE_TOKEN and IDPMAKE_SOURCE_USERNAME for git sources)";
	r = aprintf("%s: %s%s", what, m, hint);
	if ((pw && *pw && strstr(r, pw)) || (raw && *raw && strstr(r, raw)))
		r = aprintf("%s: %s", what, "(libgit2's message held the password; not shown)");
	git_error_clear();
	return r;
}
static int is_commit_id(const char *s)
{
	size_t n = strlen(s);
	if (n != 40)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!strchr("0123456789abcdef", s[i]))
			return 0;
	return 1;
}

static int open_repo(const char *statedir, const char *url, git_repository **repo, const char **err)
{
	char hex[33];
	const char *path;

	hash_hex(hash_bytes(url, strlen(url)), hex);
	path = aprintf("%s/cache/git/%.16s.git", statedir, hex);
	if (git_repository_open_bare(repo, path) == 0)
		return 0;
	git_error_clear();
	if (mkdirs(path_dir(path)) < 0 || git_repository_init(repo, path, 1) < 0) {
		*err = gitmsg(aprintf("cannot create %s", path), NULL);
		return -1;
	}
	return 0;
}

static int fetch(git_repository *repo, const char *url, const char **err)
{
	git_remote *remote = NULL;
	git_fetch_options fo;
	git_remote_create_options co;
	char *specs[] = { "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*" };
	git_strarray refspecs = { specs, 2 };
	struct conn c = { .url = url_strip(url, 1) };
	int r;

	if (url_has_scheme(url) && url_parse(url, &c.parsed) < 0) {
		*err = aprintf("git source %s is not a valid URL (in a user name or password, write"
			       " '#' as %%23, '/' as %%2F, '?' as %%3F and '@' as %%40)", url_masked(url, "***"));
		return -1;
	}
	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.callbacks.credentials = credentials;
	fo.callbacks.payload = &c;
	fo.proxy_opts.type = GIT_PROXY_AUTO;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	/* anonymous, and no url.*.insteadOf: libgit2 1.5 leaks in its matching (as gitremote.c notes) */
	git_remote_create_options_init(&co, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	co.repository = repo;
	co.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if ((r = git_remote_create_with_opts(&remote, c.url, &co)) < 0 ||
	    (r = git_remote_fetch(remote, &refspecs, &fo, NULL)) < 0)
		*err = gitmsg(aprintf("cannot fetch %s", url_masked(url, "***")), &c);
	git_remote_free(remote);
	return r < 0 ? -1 : 0;
}

static int resolve(git_repository *repo, const char *ref, git_oid *id)
{
	const char *names[] = { aprintf("refs/remotes/origin/%s", ref), aprintf("refs/tags/%s", ref), ref };
	git_object *obj = NULL, *peeled = NULL;

	if (!strcmp(ref, "HEAD"))
		names[0] = "refs/remotes/origin/HEAD";
	for (size_t i = 0; i < 3; i++) {
		if (git_revparse_single(&obj, repo, names[i]) < 0) {
			git_error_clear();
			continue;
		}
		if (git_object_peel(&peeled, obj, GIT_OBJECT_COMMIT) == 0) {
			git_oid_cpy(id, git_object_id(peeled));
			git_object_free(peeled);
			git_object_free(obj);
			return 0;
		}
		git_object_free(obj);
		git_error_clear();
	}
	if (!strcmp(ref, "HEAD")) {
		/* no origin/HEAD from a refspec fetch: main, then master */
		if (!resolve(repo, "main", id) || !resolve(repo, "master", id))
			return 0;
	}
	return -1;
}

/* a symlink and the folder it must stay inside, for check_link */
struct links {
	const char *dir;		/* where the tree was checked out */
	char *real;			/* realpath(dir) */
	const char *bad;		/* the first symlink that leaves dir */
};

/* a dangling symlink's target may go down only: not absolute, no ".." (links it goes through are checked themselves) */
static int goes_down(const char *to)
{
	if (*to == '/')
		return 0;
	for (const char *p = to; *p; p += strcspn(p, "/"), p += *p == '/')
		if (!strncmp(p, "..", 2) && (p[2] == '/' || !p[2]))
			return 0;
	return 1;
}

static int check_link(const char *root, const git_tree_entry *e, void *payload)
{
	struct links *l = payload;
	const char *rel, *path;
	char *real, target[4096];
	ssize_t n;
	int ok;

	if (git_tree_entry_filemode(e) != GIT_FILEMODE_LINK)
		return 0;
	rel = aprintf("%s%s", root, git_tree_entry_name(e));
	path = aprintf("%s/%s", l->dir, rel);
	if ((real = realpath(path, NULL))) {
		size_t len = strlen(l->real);
		ok = !strncmp(real, l->real, len) && (real[len] == '/' || !real[len]);
		free(real);
	} else {	/* dangling */
		n = readlink(path, target, sizeof(target) - 1);
		ok = n >= 0 && (target[n] = 0, goes_down(target));
	}
	if (ok)
		return 0;
	l->bad = rel;
	return -1;
}

/*
 * t without its submodules (gitlinks), as *out: a source's submodule is
 * not fetched, and libgit2 cannot check one out without a work tree (the
 * whole checkout failed).  The trees written go to the cache repository.
 */
static int drop_gitlinks(git_repository *repo, const git_tree *t, git_oid *out)
{
	git_treebuilder *tb = NULL;
	int r = 0, changed = 0;

	if (git_treebuilder_new(&tb, repo, t) < 0)
		return -1;
	for (size_t i = 0, n = git_tree_entrycount(t); i < n && !r; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(t, i);
		git_tree *sub = NULL;
		git_oid id;
		if (git_tree_entry_filemode(e) == GIT_FILEMODE_COMMIT) {
			r = git_treebuilder_remove(tb, git_tree_entry_name(e));
			changed = 1;
		} else if (git_tree_entry_type(e) == GIT_OBJECT_TREE) {
			if ((r = git_tree_lookup(&sub, repo, git_tree_entry_id(e))) == 0 &&
			    (r = drop_gitlinks(repo, sub, &id)) == 0 && !git_oid_equal(&id, git_tree_entry_id(e))) {
				r = git_treebuilder_insert(NULL, tb, git_tree_entry_name(e), &id, GIT_FILEMODE_TREE);
				changed = 1;
			}
			git_tree_free(sub);
		}
	}
	if (!r)
		r = changed ? git_treebuilder_write(out, tb) : (git_oid_cpy(out, git_tree_id(t)), 0);
	git_treebuilder_free(tb);
	return r < 0 ? -1 : 0;
}

/*
 * Check tree `t` out into dir with libgit2, which refuses the names no
 * checkout may write (`..`, `.git`, absolute paths, names with '/'), and
 * refuse a symlink that resolves outside dir (it would hand a renderer
 * files from elsewhere on the machine).  On failure dir is removed.
 */
static int extract(git_repository *repo, git_tree *t, const char *dir, const char *shown, const char **err)
{
	git_checkout_options co;
	struct links l = { dir, NULL, NULL };
	git_tree *plain = NULL;
	git_oid id;
	int r;

	if (mkdirs(dir) < 0) {
		*err = aprintf("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	git_checkout_options_init(&co, GIT_CHECKOUT_OPTIONS_VERSION);
	co.checkout_strategy = GIT_CHECKOUT_FORCE | GIT_CHECKOUT_DONT_UPDATE_INDEX |
			       GIT_CHECKOUT_DISABLE_PATHSPEC_MATCH;
	/* absolute: libgit2 makes a relative target's subfolders elsewhere, and a nested file then fails */
	if (!(l.real = realpath(dir, NULL))) {
		*err = aprintf("cannot resolve %s: %s", dir, strerror(errno));
		rmtree(dir);
		return -1;
	}
	co.target_directory = astrdup(l.real);
	free(l.real);
	l.real = NULL;
	if (drop_gitlinks(repo, t, &id) < 0 || git_tree_lookup(&plain, repo, &id) < 0) {
		*err = gitmsg(aprintf("git source %s: cannot read its tree", shown), NULL);
		rmtree(dir);
		return -1;
	}
	r = git_checkout_tree(repo, (const git_object *)plain, &co);
	git_tree_free(plain);
	if (r < 0) {
		*err = gitmsg(aprintf("git source %s: cannot check it out", shown), NULL);
		rmtree(dir);
		return -1;
	}
	if (!(l.real = realpath(dir, NULL))) {
		*err = aprintf("cannot resolve %s: %s", dir, strerror(errno));
		rmtree(dir);
		return -1;
	}
	r = git_tree_walk(t, GIT_TREEWALK_PRE, check_link, &l);
	free(l.real);
	if (r < 0) {
		*err = l.bad ? aprintf("git source %s: the symlink '%s' points outside the source", shown, l.bad)
			     : gitmsg(aprintf("git source %s: cannot read its tree", shown), NULL);
		git_error_clear();
		rmtree(dir);
		return -1;
	}
	return 0;
}

int source_git(struct state *st, const char *statedir, struct package *p, int refresh, int fallback,
	       char commit[41], const char **dir, const char **err)
{
	static const struct hash recorded = { 0x676974, 0x726566 };	/* marks the tool rows this file writes */
	const char *ref = p->git.ref ? p->git.ref : "HEAD", *sub = p->git.path ? p->git.path : ".";
	const char *url = url_strip(p->git.url, 1), *shown = url_masked(p->git.url, "***");
	const char *key = aprintf("git %s %s", url, ref), *cached, *out, *done;
	git_repository *repo = NULL;
	git_oid id;
	git_commit *c = NULL;
	git_tree *root = NULL, *tree = NULL;
	git_tree_entry *e = NULL;
	char hex[33];
	int ret = -1;

	/* from a bundle (pack.h): its copy at the commit it was packed at, never the network */
	switch (pack_git(p->git.url, ref, sub, commit, dir, err)) {
	case 1:
		return 0;
	case -1:
		return -1;
	}
	git_libgit2_init();
	cached = is_commit_id(ref) ? NULL : state_tool(st, key, recorded);
	if (cached && !is_commit_id(cached))
		cached = NULL;
	if (is_commit_id(ref))
		snprintf(commit, 41, "%s", ref);
	else if (!refresh && cached)
		snprintf(commit, 41, "%s", cached);
	else
		commit[0] = 0;
	hash_hex(hash_bytes(sub, strlen(sub)), hex);
	if (commit[0]) {
		out = aprintf("%s/cache/git/src/%s-%.12s", statedir, commit, hex);
		done = aprintf("%s/.idpmake-complete", out);
		if (!access(done, F_OK)) {
			*dir = out;
			return 0;	/* extracted before: no repository, no network */
		}
	}
	if (open_repo(statedir, url, &repo, err) < 0)
		return -1;
	if (!commit[0] || git_oid_fromstr(&id, commit) < 0 || git_commit_lookup(&c, repo, &id) < 0) {
		git_error_clear();
		if (fetch(repo, p->git.url, err) < 0) {
			/* plan: the commit it resolved to before, said so, when that is still here */
			if (!fallback || !cached || git_oid_fromstr(&id, cached) < 0 ||
			    git_commit_lookup(&c, repo, &id) < 0) {
				git_error_clear();
				goto out;
			}
			snprintf(commit, 41, "%s", cached);
			warn("%s; going on with %.12s, the commit '%s' resolved to before (up needs the source)",
			     *err, commit, term_safe(ref));
			*err = NULL;
		} else {
			if (commit[0] ? git_oid_fromstr(&id, commit) : resolve(repo, ref, &id)) {
				*err = aprintf("git source %s: no branch, tag or commit '%s'", shown, ref);
				goto out;
			}
			if (git_commit_lookup(&c, repo, &id) < 0) {
				*err = gitmsg(aprintf("git source %s: commit %s", shown, commit), NULL);
				goto out;
			}
			git_oid_tostr(commit, 41, &id);
			state_tool_put(st, key, recorded, commit);
		}
	}
	out = aprintf("%s/cache/git/src/%s-%.12s", statedir, commit, hex);
	done = aprintf("%s/.idpmake-complete", out);
	if (git_commit_tree(&root, c) < 0) {
		*err = gitmsg("cannot read the source's tree", NULL);
		goto out;
	}
	if (strcmp(sub, ".") && strcmp(sub, "")) {
		if (git_tree_entry_bypath(&e, root, sub) < 0 || git_tree_entry_type(e) != GIT_OBJECT_TREE ||
		    git_tree_lookup(&tree, repo, git_tree_entry_id(e)) < 0) {
			git_error_clear();
			*err = aprintf("git source %s at %.12s has no folder '%s'", shown, commit, sub);
			goto out;
		}
	}
	rmtree(out);
	if (extract(repo, tree ? tree : root, out, shown, err) < 0 || write_file_atomic(done, "", 0) < 0)
		goto out;
	*dir = out;
	ret = 0;
out:
	git_tree_entry_free(e);
	git_tree_free(tree);
	git_tree_free(root);
	git_commit_free(c);
	git_repository_free(repo);
	return ret;
}
