/*
 * source.c - git sources of packages (distro.md "Sources").
 *
 *   STATE/cache/git/HASH.git      a bare repository per URL, fetched, never re-cloned
 *   STATE/cache/git/src/ID/       the source's `path` at commit ID, as files
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

#include "hash.h"
#include "source.h"
#include "util.h"

static int tries;

static int credentials(git_credential **out, const char *url, const char *user_from_url,
		       unsigned int allowed, void *payload)
{
	const char *token = getenv("IDPMAKE_GIT_TOKEN"), *user = getenv("IDPMAKE_GIT_USERNAME");

	(void)url;
	(void)payload;
	if (tries++ > 2)
		return GIT_EAUTH;
	if ((allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) && token)
		return git_credential_userpass_plaintext_new(out, user ? user : user_from_url ? user_from_url : "git", token);
	if (allowed & GIT_CREDENTIAL_SSH_KEY)
		return git_credential_ssh_key_from_agent(out, user_from_url ? user_from_url : "git");
	return GIT_PASSTHROUGH;
}

static const char *gitmsg(const char *what)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message ? e->message : "unknown error";
	const char *r = aprintf("%s: %s%s", what, m,
				tries > 2 ? " (set IDPMAKE_GIT_TOKEN and IDPMAKE_GIT_USERNAME for this source)" : "");
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
		*err = gitmsg(aprintf("cannot create %s", path));
		return -1;
	}
	return 0;
}

static int fetch(git_repository *repo, const char *url, const char **err)
{
	git_remote *remote = NULL;
	git_fetch_options fo;
	char *specs[] = { "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/tags/*" };
	git_strarray refspecs = { specs, 2 };
	int r;

	git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
	fo.callbacks.credentials = credentials;
	fo.proxy_opts.type = GIT_PROXY_AUTO;
	fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
	tries = 0;
	if ((r = git_remote_create_anonymous(&remote, repo, url)) < 0 ||
	    (r = git_remote_fetch(remote, &refspecs, &fo, NULL)) < 0)
		*err = gitmsg(aprintf("cannot fetch %s", url));
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

/* write tree `t` under dir */
static int extract(git_repository *repo, git_tree *t, const char *dir, const char **err)
{
	if (mkdirs(dir) < 0) {
		*err = aprintf("cannot create %s: %s", dir, strerror(errno));
		return -1;
	}
	for (size_t i = 0, n = git_tree_entrycount(t); i < n; i++) {
		const git_tree_entry *e = git_tree_entry_byindex(t, i);
		const char *p = aprintf("%s/%s", dir, git_tree_entry_name(e));
		git_object *o = NULL;
		int r = 0;
		if (git_tree_entry_to_object(&o, repo, e) < 0) {
			*err = gitmsg(aprintf("cannot read %s", p));
			return -1;
		}
		if (git_object_type(o) == GIT_OBJECT_TREE) {
			r = extract(repo, (git_tree *)o, p, err);
		} else if (git_object_type(o) == GIT_OBJECT_BLOB) {
			const git_blob *b = (const git_blob *)o;
			if (write_file_atomic(p, git_blob_rawcontent(b), (size_t)git_blob_rawsize(b)) < 0) {
				*err = aprintf("cannot write %s: %s", p, strerror(errno));
				r = -1;
			} else if (git_tree_entry_filemode(e) == GIT_FILEMODE_BLOB_EXECUTABLE) {
				chmod(p, 0755);
			}
		}
		git_object_free(o);
		if (r < 0)
			return -1;
	}
	return 0;
}

int source_git(struct state *st, const char *statedir, struct package *p, int refresh,
	       char commit[41], const char **dir, const char **err)
{
	static const struct hash recorded = { 0x676974, 0x726566 };	/* marks the tool rows this file writes */
	const char *url = p->git.url, *ref = p->git.ref ? p->git.ref : "HEAD", *sub = p->git.path ? p->git.path : ".";
	const char *key = aprintf("git %s %s", url, ref), *cached, *out, *done;
	git_repository *repo = NULL;
	git_oid id;
	git_commit *c = NULL;
	git_tree *root = NULL, *tree = NULL;
	git_tree_entry *e = NULL;
	char hex[33];
	int ret = -1;

	git_libgit2_init();
	if (is_commit_id(ref))
		snprintf(commit, 41, "%s", ref);
	else if (!refresh && (cached = state_tool(st, key, recorded)) && is_commit_id(cached))
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
		if (fetch(repo, url, err) < 0)
			goto out;
		if (commit[0] ? git_oid_fromstr(&id, commit) : resolve(repo, ref, &id)) {
			*err = aprintf("git source %s: no branch, tag or commit '%s'", url, ref);
			goto out;
		}
		if (git_commit_lookup(&c, repo, &id) < 0) {
			*err = gitmsg(aprintf("git source %s: commit %s", url, commit));
			goto out;
		}
		git_oid_tostr(commit, 41, &id);
		state_tool_put(st, key, recorded, commit);
	}
	out = aprintf("%s/cache/git/src/%s-%.12s", statedir, commit, hex);
	done = aprintf("%s/.idpmake-complete", out);
	if (git_commit_tree(&root, c) < 0) {
		*err = gitmsg("cannot read the source's tree");
		goto out;
	}
	if (strcmp(sub, ".") && strcmp(sub, "")) {
		if (git_tree_entry_bypath(&e, root, sub) < 0 || git_tree_entry_type(e) != GIT_OBJECT_TREE ||
		    git_tree_lookup(&tree, repo, git_tree_entry_id(e)) < 0) {
			git_error_clear();
			*err = aprintf("git source %s at %.12s has no folder '%s'", url, commit, sub);
			goto out;
		}
	}
	rmtree(out);
	if (extract(repo, tree ? tree : root, out, err) < 0 || write_file_atomic(done, "", 0) < 0)
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
