/*
 * gitops.c - the GitOps repository through libgit2 (gitops.h, engine.md "Git").
 *
 * STATE/repo is a bare clone.  Its remote "origin" records o->remote (with
 * any password in the URL left out: secrets are never written to the
 * state); the network itself goes through an in-memory remote with the URL
 * as given.  Only refs/heads/BRANCH is fetched, into
 * refs/remotes/origin/BRANCH, and only when the clone lacks its commit.  A
 * local remote (path or file://, as the embedded default) lends its objects
 * to the clone (objects/info/alternates), so nothing is copied from it.
 *
 * One push, as a state diagram:
 *
 *     fetch --> did another hand change a folder of this run? --yes--> fail, naming them
 *       ^                |no
 *       |         build the tree on the tip --> same as the tip's? --yes--> done, no commit
 *       |                |no
 *       |         commit (parent: the tip), push refs/heads/BRANCH (never forced)
 *       |                |
 *       |        accepted: done          refused: is the tip unchanged? --yes--> fail with
 *       |                                            |no                      the remote's reason
 *       +--------------------------------------------+  (at most MAX_RETRIES times)
 *
 * "Another hand": the clone keeps what idpmake last left in each folder
 * (refs/idpmake/known/BRANCH, see remember()).  A folder that differs from
 * it, and does not already hold what this run writes, was changed by someone
 * else, before this run or racing its push.
 *
 * Invariants:
 *   1. Nothing is forced: a refused push leaves the remote as it was, and a
 *      remote that moved is never overwritten.
 *   2. A commit's tree never equals its parent's: a change the remote already
 *      holds (a previous run's push landed but its record did not) makes no
 *      commit, and the result names the remote tip.
 *   3. Only the changed folders' trees are built (git_tree_create_updated
 *      reads and writes the trees on their paths, nothing else), so a
 *      one-package change in a huge repository hashes one package.
 *   4. Credentials come from the URL, IDPMAKE_GIT_TOKEN / IDPMAKE_GIT_USERNAME
 *      or ssh-agent, each offered once per connection, so a wrong one fails
 *      instead of looping; no message ever shows a password or a token.
 *   5. The known folders change only with what the remote holds: after the
 *      push landed (refs/idpmake/pending/BRANCH until then, so a run that
 *      died after the remote took its push is recovered by the next), or when
 *      the remote already held the content.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "buf.h"
#include "bundle.h"
#include "gitops.h"
#include "util.h"

#define MAX_RETRIES 5
#define SAID_CAP 4096			/* bytes kept of the remote's messages */
#define PUSH_REF "refs/idpmake/push"	/* what is pushed, only during a push */
#define KNOWN_MSG "idpmake: the package folders as idpmake left them\n"

/* tests only: called before each push, after its fetch (attempt 0, 1, ...) */
void (*gitops_test_after_fetch)(int attempt);

enum auth { AUTH_OK, AUTH_NONE, AUTH_REFUSED, AUTH_AGENT, AUTH_UNSUPPORTED };

/* one session with the clone and the remote */
struct git {
	const struct gitops_opts *o;
	const char *branch;
	const char *head;		/* refs/heads/BRANCH */
	const char *tracking;		/* refs/remotes/origin/BRANCH: the remote's tip, last fetched */
	const char *known;		/* refs/idpmake/known/BRANCH: the folders as idpmake left them */
	const char *pending;		/* refs/idpmake/pending/BRANCH: known, once the push lands */
	const char *url;		/* o->remote as given: may hold a password */
	const char *shown;		/* url with the password masked */
	const char *clone;		/* STATE/repo */
	git_repository *repo;
	git_odb *odb;
	git_odb_backend *mempack;	/* new objects, kept in memory until flush_objects */
	int unflushed;			/* mempack holds objects not yet in a pack */
	git_oid *roots;			/* the trees and commits written to mempack since the last flush */
	size_t nroots;
	git_repository *local;		/* the remote, when it is a local path: written directly */
	git_remote *remote;		/* in memory, never saved */

	/* per connection */
	int tried_user, tried_agent, tried_pass;
	char user[128];			/* the user name sent with IDPMAKE_GIT_TOKEN */
	enum auth auth;
	char *refused;			/* the remote's reason for refusing the update */
	struct buf said;		/* the remote's messages, up to SAID_CAP */
};

struct change {
	const char *path;		/* normalised: no leading, trailing or double '/' */
	git_oid tree;			/* the folder's new tree (zero: remove) */
	int remove;
	int seen;			/* base is known */
	git_oid base;			/* the folder as idpmake last left or first saw it (zero: none) */
};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libgit2(void)
{
	git_libgit2_init();
}

/* the password in a URL's userinfo ("scheme://user:PASS@host/"), or NULL */
static const char *url_password(const char *url, size_t *len)
{
	const char *auth = strstr(url, "://"), *end, *at = NULL, *colon;

	if (!auth)
		return NULL;
	auth += 3;
	end = auth + strcspn(auth, "/?#");
	for (const char *p = auth; p < end; p++)
		if (*p == '@')
			at = p;
	if (!at || !(colon = memchr(auth, ':', (size_t)(at - auth))))
		return NULL;
	*len = (size_t)(at - colon - 1);
	return colon + 1;
}

/* url with its password replaced by `with` ("" drops the ':' too) */
static const char *url_without_password(const char *url, const char *with)
{
	size_t len;
	const char *pw = url_password(url, &len);

	if (!pw)
		return url;
	if (!*with)
		return aprintf("%.*s%s", (int)(pw - 1 - url), url, pw + len);
	return aprintf("%.*s%s%s", (int)(pw - url), url, with, pw + len);
}

/* replace every occurrence of secret[0..n) in b with "***" */
static void mask(struct buf *b, const char *secret, size_t n)
{
	struct buf out = BUF_INIT;
	const char *p = b->s, *hit;

	if (!secret || n < 3)
		return;
	while ((hit = strstr(p, secret)) && (size_t)(hit - b->s) < b->len) {
		buf_add(&out, p, (size_t)(hit - p));
		buf_adds(&out, "***");
		p = hit + n;
	}
	if (p == b->s)
		return;
	buf_adds(&out, p);
	buf_release(b);
	*b = out;
}

/* the remote's messages, one "remote: ..." line each (progress overwrites dropped) */
static void print_remote(const char *p)
{
	const char *nl, *cr;

	while (p && *p) {
		size_t n = strcspn(p, "\n");
		nl = p + n;
		for (cr = nl; cr > p && cr[-1] != '\r'; cr--)
			;
		if (nl > cr)
			fprintf(stderr, "remote: %.*s\n", (int)(nl - cr), cr);
		p = *nl ? nl + 1 : nl;
	}
}

static void print_said(struct git *g)
{
	print_remote(g->said.s);
	buf_reset(&g->said);
}

/*
 * The one place libgit2 errors are shown: "WHAT: libgit2's message", or the
 * fix where it is known (credentials, certificates).  Passwords and tokens
 * are masked.  Returns -1.
 */
static int gerror(struct git *g, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int gerror(struct git *g, int code, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message && *e->message ? e->message : "unknown libgit2 error";
	const char *token = getenv("IDPMAKE_GIT_TOKEN"), *pw = NULL;
	struct buf msg = BUF_INIT;
	size_t len = strlen(m), n = 0;
	va_list ap;

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	buf_adds(&msg, ": ");
	if (g)
		pw = url_password(g->url, &n);
	if (g && g->auth == AUTH_NONE)
		buf_addf(&msg, "authentication failed%s; set IDPMAKE_GIT_TOKEN to a token (or password)"
			 " with write access, and IDPMAKE_GIT_USERNAME if the server wants a user"
			 " name other than 'git'", pw ? " with the user name and password in the URL" : "");
	else if (g && g->auth == AUTH_REFUSED)
		buf_addf(&msg, "authentication failed: the server refused IDPMAKE_GIT_TOKEN for the user"
			 " '%s'; check the token, its access to the repository, and IDPMAKE_GIT_USERNAME"
			 " (the user name sent with the token; 'git' when unset)", g->user);
	else if (g && g->auth == AUTH_AGENT)
		buf_adds(&msg, "ssh authentication failed: ssh-agent offered no key the server"
			 " accepts (add the key with ssh-add; check SSH_AUTH_SOCK)");
	else if (g && g->auth == AUTH_UNSUPPORTED)
		buf_adds(&msg, "authentication failed: the server asks for credentials idpmake"
			 " does not offer (https: IDPMAKE_GIT_TOKEN; ssh: a key in ssh-agent)");
	else {
		while (len && strchr(" .\n\r", m[len - 1]))
			len--;
		for (size_t i = 0; i < len; i++) {	/* one line */
			if (m[i] != '\n' && m[i] != '\r')
				buf_addc(&msg, m[i]);
			else if (m[i + 1] != '\n' && m[i + 1] != '\r')
				buf_adds(&msg, "; ");
		}
		if (code == GIT_ECERTIFICATE && g && !strncmp(g->url, "https:", 6))
			buf_adds(&msg, strstr(m, "does not match") || strstr(m, "mismatch") ?
				 " (the server's certificate does not name the host in the URL)" :
				 g->o->ca_file ? " (is git.ca-file the CA that signed the server's certificate?)"
				 : " (for a server with a private CA, set git.ca-file)");
		else if (code == GIT_ECERTIFICATE && g)
			buf_adds(&msg, " (add the server's host key to ~/.ssh/known_hosts)");
		else if (g && g->tried_agent && !getenv("SSH_AUTH_SOCK"))
			buf_adds(&msg, " (is ssh-agent running? SSH_AUTH_SOCK is not set)");
	}
	if (token)
		mask(&msg, token, strlen(token));
	if (pw) {
		char *s = xmalloc(n + 1);
		memcpy(s, pw, n);
		s[n] = 0;
		mask(&msg, s, n);
		free(s);
	}
	if (g && g->said.len)
		print_said(g);
	error("%s", msg.s);
	buf_release(&msg);
	git_error_clear();
	return -1;
}

/* ---- the network ------------------------------------------------------- */

/*
 * Each kind of credentials is offered once per connection: when the server
 * asks again, it refused them, and GIT_EAUTH ends the attempt.
 */
static int credentials(git_credential **out, const char *url, const char *url_user,
		       unsigned int allowed, void *payload)
{
	struct git *g = payload;
	const char *token = getenv("IDPMAKE_GIT_TOKEN"), *user = getenv("IDPMAKE_GIT_USERNAME");

	(void)url;
	if (user && !*user)
		user = NULL;
	if (url_user && !*url_user)
		url_user = NULL;
	if (allowed & GIT_CREDENTIAL_SSH_KEY) {
		if (!g->tried_agent++)
			return git_credential_ssh_key_from_agent(out, url_user ? url_user : user ? user : "git");
		g->auth = AUTH_AGENT;
	} else if (allowed & GIT_CREDENTIAL_USERNAME) {
		if (!g->tried_user++)
			return git_credential_username_new(out, user ? user : "git");
		g->auth = AUTH_UNSUPPORTED;
	} else if (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) {
		if (!token || !*token)
			g->auth = AUTH_NONE;
		else if (!g->tried_pass++) {
			snprintf(g->user, sizeof(g->user), "%s", user ? user : url_user ? url_user : "git");
			return git_credential_userpass_plaintext_new(out, g->user, token);
		} else
			g->auth = AUTH_REFUSED;
	} else {
		g->auth = AUTH_UNSUPPORTED;
	}
	git_error_set_str(GIT_ERROR_NET, "authentication failed");
	return GIT_EAUTH;
}

static int sideband(const char *s, int len, void *payload)
{
	struct git *g = payload;

	if (len > 0 && g->said.len < SAID_CAP)
		buf_add(&g->said, s, (size_t)len < SAID_CAP - g->said.len ? (size_t)len : SAID_CAP - g->said.len);
	return 0;
}

static int push_status(const char *ref, const char *status, void *payload)
{
	struct git *g = payload;

	if (status && !strcmp(ref, g->head)) {
		free(g->refused);
		g->refused = xstrdup(status);
	}
	return 0;
}

/* callbacks for one connection; resets its credential attempts */
static void callbacks(struct git *g, git_remote_callbacks *cb)
{
	git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb->credentials = credentials;
	cb->sideband_progress = sideband;
	cb->push_update_reference = push_status;
	cb->payload = g;
	g->tried_user = g->tried_agent = g->tried_pass = 0;
	g->auth = AUTH_OK;
	free(g->refused);
	g->refused = NULL;
	buf_reset(&g->said);
}

/* point the ref `name` at id, or delete it (id NULL) */
/*
 * New blobs, trees and commits go to an in-memory object store (mempack)
 * and reach the clone as one packfile, written here, before any ref may
 * point at them: writing 200,000 loose objects (and reading them back to
 * push) costs minutes; one pack costs seconds.
 */
/* note a tree or commit just written (to the mempack) */
static void track(struct git *g, const git_oid *id)
{
	g->roots = xrealloc(g->roots, (g->nroots + 1) * sizeof(*g->roots));
	g->roots[g->nroots++] = *id;
	g->unflushed = 1;
}

/*
 * Is this object new?  For a local remote: the remote lacks it (the clone
 * may hold objects the remote lost or never had, if its URL changed).
 * Otherwise: it is in the mempack.  What an object that is not new reaches
 * is not new either (git's connectivity invariant).
 */
static int is_new(struct git *g, git_odb *remote, const git_oid *id)
{
	if (remote)
		return !git_odb_exists_ext(remote, id, GIT_ODB_LOOKUP_NO_REFRESH);
	return g->mempack->exists(g->mempack, id);
}

/* insert id and what it reaches into pb, as far as the objects are new */
static int pack_new(struct git *g, git_odb *remote, git_packbuilder *pb, const git_oid *id)
{
	git_object *obj = NULL;
	int err;

	if (!is_new(g, remote, id))
		return 0;
	if ((err = git_packbuilder_insert(pb, id, NULL)) < 0 || (err = git_object_lookup(&obj, g->repo, id, GIT_OBJECT_ANY)) < 0)
		return err;
	if (git_object_type(obj) == GIT_OBJECT_COMMIT) {
		err = pack_new(g, remote, pb, git_commit_tree_id((git_commit *)obj));
	} else if (git_object_type(obj) == GIT_OBJECT_TREE) {
		const git_tree *t = (const git_tree *)obj;
		for (size_t i = 0, n = git_tree_entrycount(t); i < n && err >= 0; i++) {
			const git_tree_entry *e = git_tree_entry_byindex(t, i);
			if (git_tree_entry_type(e) == GIT_OBJECT_TREE)
				err = pack_new(g, remote, pb, git_tree_entry_id(e));
			else if (git_tree_entry_type(e) == GIT_OBJECT_BLOB && is_new(g, remote, git_tree_entry_id(e)))
				err = git_packbuilder_insert(pb, git_tree_entry_id(e), NULL);
		}
	}
	git_object_free(obj);
	return err;
}

static int flush_objects(struct git *g)
{
	git_buf pack = { 0 };
	git_indexer_progress stats = { 0 };
	git_odb *odbs[2] = { g->odb, NULL };
	git_packbuilder *pb = NULL;
	int err;

	if (!g->mempack || !g->unflushed)
		return 0;
	/*
	 * A local remote takes the same pack (its push is then a ref update,
	 * push_local).  The clone keeps its own copy: its refs must not depend
	 * on objects the remote may garbage-collect.
	 */
	if (g->local && (err = git_repository_odb(&odbs[1], g->local)) < 0)
		return gerror(g, err, "cannot open the git remote %s", g->shown);
	/*
	 * Not git_mempack_dump: it packs only what its commits reach, and a
	 * flush may come before any commit (a ref update after the folder
	 * trees were built).  The roots written since the last flush, and what
	 * they reach inside the mempack, are exactly the new objects.
	 */
	if ((err = git_packbuilder_new(&pb, g->repo)) >= 0) {
		if (odbs[1])
			git_odb_refresh(odbs[1]);	/* once, so that NO_REFRESH lookups see every pack */
		for (size_t i = 0; i < g->nroots && err >= 0; i++)
			err = pack_new(g, odbs[1], pb, &g->roots[i]);
		if (err >= 0)
			err = git_packbuilder_write_buf(&pack, pb);
		git_packbuilder_free(pb);
	}
	if (err < 0)
		gerror(g, err, "cannot pack the new objects");
	for (int i = 0; i < 2 && odbs[i] && err >= 0; i++) {
		git_odb_writepack *wp = NULL;
		if ((err = git_odb_write_pack(&wp, odbs[i], NULL, NULL)) < 0 ||
		    (err = wp->append(wp, pack.ptr, pack.size, &stats)) < 0 ||
		    (err = wp->commit(wp, &stats)) < 0)
			gerror(g, err, "cannot write the new objects to %s", i ? g->shown : g->clone);
		if (wp)
			wp->free(wp);
	}
	git_odb_free(odbs[1]);
	git_buf_dispose(&pack);
	if (err >= 0) {
		git_mempack_reset(g->mempack);
		g->unflushed = 0;
		g->nroots = 0;
		/* the clone's odb looks for the new pack now, not on its next miss */
		if ((err = git_odb_refresh(g->odb)) < 0)
			gerror(g, err, "cannot read the new objects in %s", g->clone);
	}
	return err < 0 ? -1 : 0;
}

static int set_ref(struct git *g, const char *name, const git_oid *id)
{
	git_reference *ref = NULL;
	int err;

	if (id && flush_objects(g) < 0)
		return -1;
	if (id) {
		err = git_reference_create(&ref, g->repo, name, id, 1, NULL);
	} else if (!(err = git_reference_lookup(&ref, g->repo, name))) {
		err = git_reference_delete(ref);
	} else if (err == GIT_ENOTFOUND) {
		git_error_clear();
		err = 0;
	}
	git_reference_free(ref);
	return err < 0 ? gerror(g, err, "cannot update %s in %s", name, g->clone) : 0;
}

/* the commit the ref `name` points at; 0 with *out NULL when there is none */
static int ref_commit(struct git *g, const char *name, git_commit **out)
{
	git_oid id;
	int err = git_reference_name_to_id(&id, g->repo, name);

	*out = NULL;
	if (err == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	if (err < 0 || (err = git_commit_lookup(out, g->repo, &id)) < 0)
		return gerror(g, err, "cannot read %s in %s", name, g->clone);
	return 0;
}

/* the tip of refs/remotes/origin/BRANCH as last fetched; *have = 0 when none */
static int tracking_tip(struct git *g, git_oid *tip, int *have)
{
	int err = git_reference_name_to_id(tip, g->repo, g->tracking);

	*have = !err;
	if (err == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	return err < 0 ? gerror(g, err, "cannot read %s in %s", g->tracking, g->clone) : 0;
}

/*
 * Fetch refs/heads/BRANCH into refs/remotes/origin/BRANCH: *tip is the
 * remote's tip, *have = 0 when the branch does not exist there.  Objects are
 * downloaded only when the clone lacks the tip.
 */
static int fetch(struct git *g, git_oid *tip, int *have)
{
	git_remote_callbacks cb;
	git_proxy_options proxy;
	const git_remote_head **heads;
	size_t nheads;
	int err;

	*have = 0;
	callbacks(g, &cb);
	git_proxy_options_init(&proxy, GIT_PROXY_OPTIONS_VERSION);
	proxy.type = GIT_PROXY_AUTO;
	if (g->o->verbose)
		fprintf(stderr, "%s: git fetch %s %s\n", argv0, g->shown, g->head);
	if ((err = git_remote_connect(g->remote, GIT_DIRECTION_FETCH, &cb, &proxy, NULL)) < 0 ||
	    (err = git_remote_ls(&heads, &nheads, g->remote)) < 0)
		goto fail;
	for (size_t i = 0; i < nheads; i++) {
		if (!strcmp(heads[i]->name, g->head)) {
			git_oid_cpy(tip, &heads[i]->oid);
			*have = 1;
		}
	}
	if (*have && !git_odb_exists(g->odb, tip)) {
		git_fetch_options fo;
		char *spec = aprintf("+%s:%s", g->head, g->tracking);
		git_strarray specs = { &spec, 1 };

		git_fetch_options_init(&fo, GIT_FETCH_OPTIONS_VERSION);
		fo.callbacks = cb;
		fo.proxy_opts = proxy;
		fo.download_tags = GIT_REMOTE_DOWNLOAD_TAGS_NONE;
		fo.update_fetchhead = 0;
		if ((err = git_remote_download(g->remote, &specs, &fo)) < 0)
			goto fail;
		if (!git_odb_exists(g->odb, tip)) {
			git_error_set_str(GIT_ERROR_NET, "the remote did not send the branch's commit");
			err = -1;
			goto fail;
		}
	}
	git_remote_disconnect(g->remote);
	if (g->o->verbose) {
		char hex[GIT_OID_HEXSZ + 1];
		print_said(g);
		fprintf(stderr, "%s: %s is %s\n", argv0, g->head,
			*have ? git_oid_tostr(hex, sizeof(hex), tip) : "absent");
	}
	return set_ref(g, g->tracking, *have ? tip : NULL);
fail:
	gerror(g, err, "cannot fetch '%s' from %s", g->branch, g->shown);
	git_remote_disconnect(g->remote);
	return -1;
}

/*
 * Push `commit` to refs/heads/BRANCH, not forced: 0 accepted, 1 refused
 * (g->refused says why: the remote moved, or a hook or a protection rule
 * refused it), -1 another error (printed).
 */
/*
 * A local remote: the objects are in it already (flush_objects); the push is
 * the branch moving from the tip this commit was built on to the commit,
 * compare-and-swap under the ref's lock, as receive-pack does.  A branch
 * that moved meanwhile refuses (1), so another operator's commit is never
 * overwritten.
 */
static int push_local(struct git *g, const git_oid *commit)
{
	git_reference *ref = NULL;
	git_oid tip;
	int have, err, rc;

	have = git_reference_name_to_id(&tip, g->repo, g->tracking) == 0;
	git_error_clear();
	if (g->o->verbose)
		fprintf(stderr, "%s: git push %s %s:%s\n", argv0, g->shown, git_oid_tostr_s(commit), g->head);
	if (have)
		err = git_reference_create_matching(&ref, g->local, g->head, commit, 1, &tip, "idpmake: push");
	else
		err = git_reference_create(&ref, g->local, g->head, commit, 0, "idpmake: push");
	git_reference_free(ref);
	if (err == GIT_EMODIFIED || err == GIT_EEXISTS || err == GIT_ELOCKED) {
		git_error_clear();
		free(g->refused);
		g->refused = xstrdup("the remote branch moved");
		rc = 1;
	} else if (err < 0) {
		rc = gerror(g, err, "cannot push '%s' to %s", g->branch, g->shown);
	} else {
		rc = 0;
	}
	if (set_ref(g, PUSH_REF, NULL) < 0 || (!rc && set_ref(g, g->tracking, commit) < 0))
		return -1;
	return rc;
}

static int push(struct git *g, const git_oid *commit)
{
	git_push_options po;
	char hex[GIT_OID_HEXSZ + 1];
	char *spec = aprintf("%s:%s", PUSH_REF, g->head);
	git_strarray specs = { &spec, 1 };
	int err, rc;

	if (set_ref(g, PUSH_REF, commit) < 0)
		return -1;
	if (g->local)
		return push_local(g, commit);
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	callbacks(g, &po.callbacks);
	po.proxy_opts.type = GIT_PROXY_AUTO;
	if (g->o->verbose)
		fprintf(stderr, "%s: git push %s %s:%s\n", argv0, g->shown,
			git_oid_tostr(hex, sizeof(hex), commit), g->head);
	err = git_remote_push(g->remote, &specs, &po);
	if (err == GIT_ENONFASTFORWARD) {
		/* libgit2 saw a tip it lacks, or one that is no ancestor, in the advertisement */
		free(g->refused);
		g->refused = xstrdup("non-fast-forward: the remote branch moved");
		git_error_clear();
		rc = 1;
	} else if (err < 0) {
		rc = gerror(g, err, "cannot push '%s' to %s", g->branch, g->shown);
	} else {
		rc = g->refused ? 1 : 0;
	}
	git_remote_disconnect(g->remote);
	if (g->o->verbose)
		print_said(g);
	if (set_ref(g, PUSH_REF, NULL) < 0 || (!rc && set_ref(g, g->tracking, commit) < 0))
		return -1;
	return rc;
}

/* ---- the clone ---------------------------------------------------------- */

/* the folder of a local remote (a path or file:// URL), or NULL */
static const char *local_path(const char *url)
{
	const char *colon = strchr(url, ':'), *slash = strchr(url, '/');

	if (!strncmp(url, "file://", 7))
		return url + 7;
	if (strstr(url, "://"))
		return NULL;
	if (colon && (!slash || colon < slash))
		return NULL;	/* scp-like user@host:path */
	return url;
}

static int set_ca(const char *ca)
{
	static char *current;

	if (!ca || (current && !strcmp(current, ca)))
		return 0;
	if (access(ca, R_OK))
		return error("cannot read the CA file %s:", ca);
	if (git_libgit2_opts(GIT_OPT_SET_SSL_CERT_LOCATIONS, ca, NULL) < 0)
		return gerror(NULL, -1, "cannot use the CA file %s", ca);
	free(current);
	current = xstrdup(ca);
	return 0;
}

/* create the embedded default remote: a bare repository on BRANCH */
static int create_remote(struct git *g, const char *path)
{
	git_repository_init_options io;
	git_repository *r = NULL;
	int err;

	git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
	io.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
	io.initial_head = g->branch;
	if (g->o->verbose)
		fprintf(stderr, "%s: git init --bare -b %s %s\n", argv0, g->branch, path);
	err = git_repository_init_ext(&r, path, &io);
	git_repository_free(r);
	return err < 0 ? gerror(g, err, "cannot create the git remote %s", path) : 0;
}

/* delete the refs that describe the remote: refs/remotes/origin/ and refs/idpmake/ */
static int forget(struct git *g)
{
	static const char *const globs[] = { "refs/remotes/origin/*", "refs/idpmake/*" };
	git_reference_iterator *it;
	git_reference *ref;
	int err;

	for (size_t i = 0; i < sizeof(globs) / sizeof(globs[0]); i++) {
		if ((err = git_reference_iterator_glob_new(&it, g->repo, globs[i])) < 0)
			return gerror(g, err, "cannot list the refs of %s", g->clone);
		while (!(err = git_reference_next(&ref, it))) {
			err = git_reference_delete(ref);
			git_reference_free(ref);
			if (err < 0)
				break;
		}
		git_reference_iterator_free(it);
		if (err != GIT_ITEROVER)
			return gerror(g, err, "cannot delete the refs of the old remote in %s", g->clone);
		git_error_clear();
	}
	return 0;
}

/*
 * remote.origin.url records the remote (without a password) for people
 * reading the clone.  It is read and written as plain configuration:
 * libgit2 1.5's remote lookup leaks memory in its insteadOf matching.
 * Returns 0 when it names g->url, 1 when it does not (and !write), -1.
 */
static int origin(struct git *g, int write)
{
	const char *url = url_without_password(g->url, "");
	git_config *cfg = NULL;
	git_buf cur = GIT_BUF_INIT;
	int err, rc = 0;

	if ((err = git_repository_config(&cfg, g->repo)) < 0)
		goto fail;
	if ((err = git_config_get_string_buf(&cur, cfg, "remote.origin.url")) == GIT_ENOTFOUND)
		git_error_clear();
	else if (err < 0)
		goto fail;
	if (!err && !strcmp(cur.ptr, url))
		goto out;
	rc = 1;
	if (!write)
		goto out;
	if (!err) {
		/* another repository: what was fetched from and known of the old one does not hold */
		if (forget(g) < 0) {
			rc = -1;
			goto out;
		}
		err = git_config_set_string(cfg, "remote.origin.url", url);
	} else if (!(err = git_config_set_string(cfg, "remote.origin.url", url))) {
		err = git_config_set_string(cfg, "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*");
	}
	if (err < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	rc = gerror(g, err, "cannot record the remote in %s", g->clone);
out:
	git_buf_dispose(&cur);
	git_config_free(cfg);
	return rc;
}

/* open STATE/repo, or create it when `create`: 0, 1 when absent (and !create), -1 */
static int open_clone(struct git *g, int create)
{
	git_repository_init_options io;
	int err = git_repository_open_ext(&g->repo, g->clone,
					  GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL);

	if (err == GIT_ENOTFOUND) {
		git_error_clear();
		if (!create)
			return 1;
		git_repository_init_options_init(&io, GIT_REPOSITORY_INIT_OPTIONS_VERSION);
		io.flags = GIT_REPOSITORY_INIT_BARE | GIT_REPOSITORY_INIT_MKPATH;
		if ((err = git_repository_init_ext(&g->repo, g->clone, &io)) < 0)
			return gerror(g, err, "cannot create idpmake's clone %s", g->clone);
	} else if (err < 0) {
		return gerror(g, err, "cannot open idpmake's clone %s (remove it: the next run fetches again)",
			      g->clone);
	}
	if ((err = git_repository_odb(&g->odb, g->repo)) < 0)
		return gerror(g, err, "cannot open idpmake's clone %s", g->clone);
	if ((err = git_mempack_new(&g->mempack)) < 0 || (err = git_odb_add_backend(g->odb, g->mempack, 999)) < 0) {
		g->mempack = NULL;	/* the odb frees an added backend; a failed add is ours */
		return gerror(g, err, "cannot open idpmake's clone %s", g->clone);
	}
	return 0;
}

/*
 * A local remote's objects are the clone's alternate, as `git clone
 * --shared` makes it: a fetch copies nothing and the embedded default remote
 * is not stored twice.  Any other remote: no alternate.
 */
static int set_alternate(struct git *g, const char *local)
{
	const char *file = aprintf("%s/objects/info/alternates", g->clone), *dir = NULL;
	char *real = NULL, *cur;
	struct buf want = BUF_INIT;
	struct stat st;
	size_t len;
	int err = 0;

	if (local) {
		if (!(real = realpath(local, NULL)))
			return error("cannot resolve the git remote %s:", local);
		dir = aprintf("%s/objects", real);
		if (stat(dir, &st) || !S_ISDIR(st.st_mode))
			dir = aprintf("%s/.git/objects", real);	/* not bare */
		free(real);
		buf_addf(&want, "%s\n", dir);
	}
	cur = read_file(file, &len);
	if (strcmp(cur ? cur : "", want.s)) {
		if (!dir)
			err = unlink(file) ? error("cannot remove %s:", file) : 0;
		else if (write_file_atomic(file, want.s, want.len))
			err = error("cannot write %s:", file);
		else if ((err = git_odb_add_disk_alternate(g->odb, dir)) < 0)
			err = gerror(g, err, "cannot use the objects of %s", local);
	}
	free(cur);
	buf_release(&want);
	return err < 0 ? -1 : 0;
}

static void git_close(struct git *g)
{
	git_remote_free(g->remote);
	git_odb_free(g->odb);
	git_repository_free(g->repo);
	git_repository_free(g->local);
	free(g->roots);
	free(g->refused);
	buf_release(&g->said);
	memset(g, 0, sizeof(*g));
}

/*
 * Open the session.  `network`: the remote will be used (create the
 * embedded default if absent).  Returns 0, 1 when !network and there is
 * nothing to read (no clone yet), or -1.
 */
static int git_open(struct git *g, const struct gitops_opts *o, int network)
{
	git_remote_create_options co;
	const char *local;
	struct stat st;
	int err, valid = 0;

	memset(g, 0, sizeof(*g));
	buf_init(&g->said);
	g->o = o;
	g->branch = o->branch && *o->branch ? o->branch : "main";
	g->head = aprintf("refs/heads/%s", g->branch);
	g->tracking = aprintf("refs/remotes/origin/%s", g->branch);
	g->known = aprintf("refs/idpmake/known/%s", g->branch);
	g->pending = aprintf("refs/idpmake/pending/%s", g->branch);
	g->clone = path_join(o->statedir, "repo");
	if (!o->remote || !*o->remote)
		return error("no git remote given");
	g->url = o->remote;
	g->shown = url_without_password(g->url, "***");
	pthread_once(&init_once, init_libgit2);
	if (git_reference_name_is_valid(&valid, g->head) < 0 || !valid)
		return error("'%s' is not a valid git branch name", g->branch);

	if (!network)
		return stat(g->clone, &st) ? 1 : (err = open_clone(g, 0)) ? err : origin(g, 0);

	if (set_ca(o->ca_file) < 0)
		return -1;
	if ((local = local_path(g->url)) && stat(local, &st)) {
		if (!o->create_remote)
			return error("the git remote %s does not exist", local);
		if (create_remote(g, local) < 0)
			return -1;
	}
	if (open_clone(g, 1) < 0 || origin(g, 1) < 0 || set_alternate(g, local) < 0)
		return -1;
	if (local && (err = git_repository_open_bare(&g->local, local)) < 0 &&
	    (err = git_repository_open(&g->local, local)) < 0)
		return gerror(g, err, "cannot open the git remote %s", g->shown);
	/* in memory only; no url.*.insteadOf (see origin()) */
	git_remote_create_options_init(&co, GIT_REMOTE_CREATE_OPTIONS_VERSION);
	co.repository = g->repo;
	co.flags = GIT_REMOTE_CREATE_SKIP_INSTEADOF | GIT_REMOTE_CREATE_SKIP_DEFAULT_FETCHSPEC;
	if ((err = git_remote_create_with_opts(&g->remote, g->url, &co)) < 0)
		return gerror(g, err, "cannot use the git remote %s", g->shown);
	return 0;
}

/* ---- trees and commits -------------------------------------------------- */

/* a repository path without empty, "." or trailing components; NULL if invalid */
static const char *norm_path(const char *p)
{
	struct buf b = BUF_INIT;
	const char *in = p;
	char *out;

	while (*p) {
		size_t n;
		while (*p == '/')
			p++;
		if (!(n = strcspn(p, "/")))
			break;
		if (n == 1 && *p == '.') {
			p++;
			continue;
		}
		if ((n == 2 && !memcmp(p, "..", 2)) ||
		    (n == 4 && p[0] == '.' && strchr("gG", p[1]) && strchr("iI", p[2]) && strchr("tT", p[3]))) {
			buf_release(&b);
			error("'%s' is not a valid folder in a git repository", in);
			return NULL;
		}
		if (b.len)
			buf_addc(&b, '/');
		buf_add(&b, p, n);
		p += n;
	}
	if (!b.len) {
		error("'%s' is not a valid folder in a git repository (the root cannot be a package's folder)", in);
		return NULL;
	}
	out = astrdup(b.s);
	buf_release(&b);
	return out;
}

/* does repository path f equal, lie inside or lie above folder p? */
static int overlaps(const char *f, const char *p)
{
	size_t lf = strlen(f), lp = strlen(p);

	if (lf == lp)
		return !strcmp(f, p);
	if (lf > lp)
		return !strncmp(f, p, lp) && f[lp] == '/';
	return !strncmp(p, f, lf) && p[lf] == '/';
}

/* byte order with '/' first, so a folder's contents follow it directly */
static int path_cmp(const void *a, const void *b)
{
	const unsigned char *p = (const unsigned char *)((const struct change *)a)->path;
	const unsigned char *q = (const unsigned char *)((const struct change *)b)->path;

	while (*p && *p == *q)
		p++, q++;
	return (*p == '/' ? 1 : *p ? *p + 1 : 0) - (*q == '/' ? 1 : *q ? *q + 1 : 0);
}

/*
 * A blob straight into the mempack: git_odb_write would first look for it
 * in every pack (and rescan the pack folders on each miss), which for
 * 200,000 new blobs costs more than writing them.  A blob the repository
 * already has is stored again in this run's pack, harmlessly.
 */
static int put_blob(struct git *g, const char *data, size_t len, git_oid *id)
{
	int err = git_odb_hash(id, data, len, GIT_OBJECT_BLOB);
	return err < 0 ? err : g->mempack->write(g->mempack, id, data, len, GIT_OBJECT_BLOB);
}

static int nested(const struct bundle *b)
{
	for (size_t i = 0; i < b->n; i++)
		if (strchr(b->v[i].name, '/'))
			return 1;
	return 0;
}

/* the tree of one package folder, from its bundle; *empty when it has no file */
static int folder_tree(struct git *g, const char *file, git_oid *out, int *empty)
{
	git_treebuilder *tb = NULL;
	struct bundle b;
	git_oid blob;
	int err = 0;

	if (bundle_read(file, &b) < 0)
		return -1;
	*empty = b.n == 0;
	if (*empty) {
		bundle_free(&b);
		return 0;
	}
	g->unflushed = 1;
	if (nested(&b)) {
		/* names with folders (argocd-app packages): build the subtrees too */
		git_tree_update *u = xcalloc(b.n, sizeof(*u));
		git_oid *ids = xcalloc(b.n, sizeof(*ids));
		for (size_t i = 0; i < b.n && err >= 0; i++) {
			err = put_blob(g, b.v[i].data, b.v[i].len, &ids[i]);
			u[i] = (git_tree_update){ GIT_TREE_UPDATE_UPSERT, ids[i], GIT_FILEMODE_BLOB, b.v[i].name };
		}
		if (err >= 0 && (err = git_tree_create_updated(out, g->repo, NULL, b.n, u)) >= 0)
			track(g, out);
		free(u);
		free(ids);
		goto fail;
	}
	if ((err = git_treebuilder_new(&tb, g->repo, NULL)) < 0)
		goto fail;
	for (size_t i = 0; i < b.n; i++) {
		if ((err = put_blob(g, b.v[i].data, b.v[i].len, &blob)) < 0 ||
		    (err = git_treebuilder_insert(NULL, tb, b.v[i].name, &blob, GIT_FILEMODE_BLOB)) < 0)
			goto fail;
	}
	err = git_treebuilder_write(out, tb);
	if (err >= 0)
		track(g, out);
fail:
	if (err < 0)
		gerror(g, err, "cannot store %s in %s", file, g->clone);
	git_treebuilder_free(tb);
	bundle_free(&b);
	return err < 0 ? -1 : 0;
}

/* the id of the entry at `path` in `tree` (NULL: empty): 1, or 0 with *id zero when none */
static int entry_at(struct git *g, git_tree *tree, const char *path, git_oid *id)
{
	git_tree_entry *e = NULL;
	int err;

	memset(id, 0, sizeof(*id));
	if (!tree || (err = git_tree_entry_bypath(&e, tree, path)) == GIT_ENOTFOUND) {
		git_error_clear();
		return 0;
	}
	if (err < 0)
		return gerror(g, err, "cannot read '%s' in %s", path, g->clone);
	git_oid_cpy(id, git_tree_entry_id(e));
	git_tree_entry_free(e);
	return 1;
}

/*
 * The tree of `base` (NULL: none) with the changes applied; *same when it
 * equals base.  Only entries that differ are updated, so
 * git_tree_create_updated reads and writes just the trees on their paths.
 */
static int apply(struct git *g, git_tree *base, const struct change *c, size_t n, git_oid *out, int *same)
{
	git_tree_update *u = xcalloc(n ? n : 1, sizeof(*u));
	size_t nu = 0;
	git_oid cur;
	int found, err = 0;

	for (size_t i = 0; i < n; i++) {
		if ((found = entry_at(g, base, c[i].path, &cur)) < 0) {
			free(u);
			return -1;
		}
		if (c[i].remove ? !found : found && git_oid_equal(&cur, &c[i].tree))
			continue;
		u[nu].action = c[i].remove ? GIT_TREE_UPDATE_REMOVE : GIT_TREE_UPDATE_UPSERT;
		u[nu].id = c[i].tree;
		u[nu].filemode = GIT_FILEMODE_TREE;
		u[nu].path = c[i].path;
		nu++;
	}
	*same = nu == 0;
	if (nu && (err = git_tree_create_updated(out, g->repo, base, nu, u)) >= 0) {
		track(g, out);
		if (base)
			*same = git_oid_equal(out, git_tree_id(base));
	}
	free(u);
	return err < 0 ? gerror(g, err, "cannot build the new tree of '%s'", g->branch) : 0;
}

/*
 * Did someone else change one of the changes' folders?  A folder may differ
 * from what idpmake last left there only when it already holds what this run
 * writes (a previous run's push, say).  A folder idpmake never wrote is taken
 * as this run's first fetch found it, so a push racing ours is caught too.
 * -1 after naming the folders.
 */
static int conflicts(struct git *g, git_tree *base, const git_oid *tip, struct change *c, size_t n, int retry)
{
	struct buf list = BUF_INIT;
	char shortid[8] = "";
	git_oid cur;

	for (size_t i = 0; i < n; i++) {
		if (entry_at(g, base, c[i].path, &cur) < 0) {
			buf_release(&list);
			return -1;
		}
		if (!c[i].seen) {
			c[i].seen = 1;
			c[i].base = cur;
		} else if (!git_oid_equal(&cur, &c[i].base) && !git_oid_equal(&cur, &c[i].tree)) {
			buf_addf(&list, "%s%s", list.len ? ", " : "", c[i].path);
		}
	}
	if (tip)
		git_oid_tostr(shortid, sizeof(shortid), tip);
	if (!list.len) {
		if (retry && g->o->verbose)
			fprintf(stderr, "%s: the remote branch '%s' moved to %s, not in this run's folders:"
				" rebuilding the commit on it\n", argv0, g->branch, shortid);
		return 0;
	}
	if (tip)
		error("the remote branch '%s' moved to %s and changed %s, which this run also changes;"
		      " fetch and review it, then run idpmake up again", g->branch, shortid, list.s);
	else
		error("the remote branch '%s' was deleted, and with it %s, which this run also changes;"
		      " fetch and review it, then run idpmake up again", g->branch, list.s);
	buf_release(&list);
	return -1;
}

static int make_commit(struct git *g, const git_oid *tree_id, git_commit *parent,
		       const char *message, git_oid *out)
{
	const char *name = g->o->author_name && *g->o->author_name ? g->o->author_name : "idpmake";
	const char *email = g->o->author_email && *g->o->author_email ? g->o->author_email : "idpmake@localhost";
	const git_commit *parents[1] = { parent };
	git_signature *sig = NULL;
	git_tree *tree = NULL;
	struct buf msg = BUF_INIT;
	int err;

	buf_adds(&msg, message && *message ? message : "idpmake");
	if (msg.s[msg.len - 1] != '\n')
		buf_addc(&msg, '\n');
	if ((err = git_signature_now(&sig, name, email)) < 0 ||
	    (err = git_tree_lookup(&tree, g->repo, tree_id)) < 0 ||
	    (err = git_commit_create(out, g->repo, NULL, sig, sig, NULL, msg.s, tree, parent ? 1 : 0, parents)) < 0)
		gerror(g, err, "cannot make the commit");
	else
		track(g, out);
	git_signature_free(sig);
	git_tree_free(tree);
	buf_release(&msg);
	return err < 0 ? -1 : 0;
}

/*
 * What idpmake left in the folders is a tree of its own, kept in the clone
 * as refs/idpmake/known/BRANCH: a commit holding the known tree, whose
 * parent is the remote commit that holds the same folders.  Before a push,
 * the known tree this push makes goes to refs/idpmake/pending/BRANCH; it
 * becomes known once the push landed, in this run or, if this one died
 * after the remote took the push, in the next (recover).
 */
static int remember(struct git *g, git_tree *known, const struct change *ch, size_t n,
		    git_commit *remote, const char *name)
{
	git_oid tree_id, id;
	int same;

	if (apply(g, known, ch, n, &tree_id, &same) < 0)
		return -1;
	if (same)
		return 0;
	return make_commit(g, &tree_id, remote, KNOWN_MSG, &id) < 0 ? -1 : set_ref(g, name, &id);
}

/* pending becomes known when the remote holds its push (tip NULL: the branch is gone) */
static int recover(struct git *g, const git_oid *tip, int landed)
{
	git_commit *k;
	const git_oid *pushed;
	int rc = 0;

	if (ref_commit(g, g->pending, &k) < 0)
		return -1;
	if (!k)
		return 0;
	if (!landed && tip && git_commit_parentcount(k) == 1) {
		pushed = git_commit_parent_id(k, 0);
		landed = git_oid_equal(tip, pushed) || git_graph_descendant_of(g->repo, tip, pushed) == 1;
		git_error_clear();
		if (landed && g->o->verbose)
			fprintf(stderr, "%s: the remote holds the push of a run that died: %s\n",
				argv0, git_oid_tostr_s(pushed));
	}
	if (landed)
		rc = set_ref(g, g->known, git_commit_id(k));
	git_commit_free(k);
	return rc < 0 ? -1 : set_ref(g, g->pending, NULL);
}

/* the known tree, and each change's folder in it */
static int load_known(struct git *g, git_tree **known, struct change *ch, size_t n)
{
	git_commit *k;
	int err = 0, found;

	*known = NULL;
	if (ref_commit(g, g->known, &k) < 0)
		return -1;
	if (k && (err = git_commit_tree(known, k)) < 0)
		gerror(g, err, "cannot read %s in %s", g->known, g->clone);
	git_commit_free(k);
	for (size_t i = 0; i < n && *known && err >= 0; i++) {
		if ((found = entry_at(g, *known, ch[i].path, &ch[i].base)) < 0)
			return -1;
		ch[i].seen = found;
	}
	return err < 0 ? -1 : 0;
}

/*
 * One attempt on the fetched tip: check the folders, build the commit, push.
 * 0 done (r filled in), 1 refused, -1 failed (printed).
 */
static int attempt_push(struct git *g, const git_oid *tip, git_tree *known, struct change *ch, size_t n,
			const char *message, int attempt, struct gitops_result *r)
{
	git_commit *parent = NULL, *commit = NULL;
	git_tree *base = NULL;
	git_oid tree_id, commit_id;
	int err = 0, same = 1, rc = -1;

	if (tip && ((err = git_commit_lookup(&parent, g->repo, tip)) < 0 ||
		    (err = git_commit_tree(&base, parent)) < 0)) {
		gerror(g, err, "cannot read the remote's tip of '%s'", g->branch);
		goto out;
	}
	if (conflicts(g, base, tip, ch, n, attempt) < 0 || apply(g, base, ch, n, &tree_id, &same) < 0)
		goto out;
	if (tip)
		git_oid_tostr(r->parent, sizeof(r->parent), tip);
	if (same) {
		/* the remote holds this content already (invariant 2) */
		if (tip)
			git_oid_tostr(r->commit, sizeof(r->commit), tip);
		rc = remember(g, known, ch, n, parent, g->known);
		goto out;
	}
	if (make_commit(g, &tree_id, parent, message, &commit_id) < 0)
		goto out;
	if ((err = git_commit_lookup(&commit, g->repo, &commit_id)) < 0) {
		gerror(g, err, "cannot read the new commit");
		goto out;
	}
	if (remember(g, known, ch, n, commit, g->pending) < 0)
		goto out;
	if (gitops_test_after_fetch)
		gitops_test_after_fetch(attempt);
	if ((rc = push(g, &commit_id)) == 0) {
		git_oid_tostr(r->commit, sizeof(r->commit), &commit_id);
		r->made_commit = 1;
		rc = recover(g, NULL, 1);
	}
out:
	git_commit_free(commit);
	git_commit_free(parent);
	git_tree_free(base);
	return rc;
}

/* ---- the interface ------------------------------------------------------ */

/*
 * Lock files a killed run left in a repository (refs/.../X.lock,
 * packed-refs.lock, config.lock, HEAD.lock) make every later ref update
 * fail.  The caller holds idpmake's state lock, so in the clone and in the
 * embedded default remote (both in the state folder) no other writer can
 * exist: every lock is stale.  `age`: only locks at least that old.
 */
static void clear_locks(const char *dir, int age)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	time_t now = time(NULL);

	while (d && (e = readdir(d))) {
		const char *p;
		struct stat st;
		size_t l = strlen(e->d_name);
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "objects"))
			continue;
		p = aprintf("%s/%s", dir, e->d_name);
		if (lstat(p, &st) < 0)
			continue;
		if (S_ISDIR(st.st_mode) && (!strcmp(e->d_name, "refs") || strstr(dir, "/refs")))
			clear_locks(p, age);
		else if (S_ISREG(st.st_mode) && l > 5 && !strcmp(e->d_name + l - 5, ".lock") &&
			 now - st.st_mtime >= age) {
			warn("removing %s, left by an interrupted run", p);
			unlink(p);
		}
	}
	if (d)
		closedir(d);
}

/*
 * Every run adds a pack or two (flush_objects); git would gc.  When a
 * repository holds more than REPACK_AT packs (IDPMAKE_REPACK_AT for
 * tests), what its refs reach is written as one pack and the others are
 * removed.  Only for repositories idpmake owns (its clone, the embedded
 * default remote), under the state lock.
 */
#define REPACK_AT 48

static int pack_names(const char *dir, struct strvec *names)
{
	DIR *d = opendir(dir);
	struct dirent *e;

	while (d && (e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".pack"))
			strvec_push(names, e->d_name);
	}
	if (d)
		closedir(d);
	return d ? 0 : -1;
}

static int maybe_repack(struct git *g, git_repository *repo, const char *what)
{
	const char *env = getenv("IDPMAKE_REPACK_AT");
	int at = env && atoi(env) > 0 ? atoi(env) : REPACK_AT, err;
	const char *dir = aprintf("%s/objects/pack", git_repository_path(repo));
	struct strvec old = STRVEC_INIT;
	git_packbuilder *pb = NULL;
	git_revwalk *walk = NULL;
	const char *keep;

	if (pack_names(dir, &old) < 0 || (int)old.n <= at) {
		strvec_clear(&old);
		return 0;
	}
	if (g->o->verbose)
		fprintf(stderr, "%s: %s holds %zu packs: repacking\n", argv0, what, old.n);
	if ((err = git_revwalk_new(&walk, repo)) < 0 || (err = git_revwalk_push_glob(walk, "refs/*")) < 0 ||
	    (err = git_packbuilder_new(&pb, repo)) < 0 || (err = git_packbuilder_insert_walk(pb, walk)) < 0 ||
	    (err = git_packbuilder_write(pb, dir, 0444, NULL, NULL)) < 0) {
		gerror(g, err, "cannot repack %s (it still works, with more packs)", what);
	} else {
		keep = aprintf("pack-%s.pack", git_packbuilder_name(pb));
		for (size_t i = 0; i < old.n; i++) {
			size_t l = strlen(old.v[i]) - 5;
			if (!strcmp(old.v[i], keep))
				continue;
			unlink(aprintf("%s/%.*s.idx", dir, (int)l, old.v[i]));
			unlink(aprintf("%s/%s", dir, old.v[i]));
		}
	}
	git_packbuilder_free(pb);
	git_revwalk_free(walk);
	strvec_clear(&old);
	return err < 0 ? -1 : 0;
}

int gitops_push(const struct gitops_opts *o, const struct gitops_change *c, size_t n,
		const char *message, struct gitops_result *r)
{
	struct git g;
	struct change *ch = NULL;
	git_tree *known = NULL;		/* the folders as idpmake left them */
	char *refused = NULL;		/* why the remote refused the last push */
	char *said = NULL;		/* and what it said then */
	git_oid tip, prev;
	int have = 0, had = 0, rc = -1, st;

	memset(r, 0, sizeof(*r));
	clear_locks(aprintf("%s/repo", o->statedir), 0);
	if (o->create_remote && o->remote && local_path(o->remote))
		clear_locks(local_path(o->remote), 0);	/* in the state folder: idpmake's own */
	if (git_open(&g, o, 1) < 0)
		goto out;

	/* the folders' trees, once: they do not depend on the tip */
	ch = xcalloc(n ? n : 1, sizeof(*ch));
	for (size_t i = 0; i < n; i++) {
		int empty = 1;
		if (!(ch[i].path = norm_path(c[i].path)))
			goto out;
		if (c[i].bundle && folder_tree(&g, c[i].bundle, &ch[i].tree, &empty) < 0)
			goto out;
		ch[i].remove = empty;	/* git holds no empty folder */
		if (empty)
			memset(&ch[i].tree, 0, sizeof(ch[i].tree));
	}
	qsort(ch, n, sizeof(*ch), path_cmp);
	for (size_t i = 1; i < n; i++) {
		if (!strcmp(ch[i].path, ch[i - 1].path)) {
			error("two packages have the git folder '%s'", ch[i].path);
			goto out;
		}
		if (overlaps(ch[i].path, ch[i - 1].path)) {
			error("the git folder '%s' is inside the git folder '%s' of another package",
			      ch[i].path, ch[i - 1].path);
			goto out;
		}
	}

	for (int attempt = 0;; attempt++) {
		if (fetch(&g, &tip, &have) < 0)
			goto out;
		if (!attempt && (recover(&g, have ? &tip : NULL, 0) < 0 || load_known(&g, &known, ch, n) < 0))
			goto out;
		if (attempt && had == have && (!have || git_oid_equal(&prev, &tip))) {
			print_remote(said);
			error("the remote refused to update the branch '%s': %s", g.branch, refused);
			goto out;
		}
		r->retries = attempt;
		if ((st = attempt_push(&g, have ? &tip : NULL, known, ch, n, message, attempt, r)) <= 0) {
			rc = st;
			goto out;
		}
		free(refused);
		free(said);
		refused = g.refused;
		g.refused = NULL;
		said = buf_detach(&g.said);
		if (o->verbose)
			fprintf(stderr, "%s: the remote refused the push: %s\n", argv0, refused);
		if (attempt == MAX_RETRIES) {
			error("the remote branch '%s' kept moving: %d pushes refused (last: %s); run idpmake up again",
			      g.branch, attempt + 1, refused);
			goto out;
		}
		prev = tip;
		had = have;
	}
out:
	if (rc == 0) {
		/* a failed repack loses nothing: the next run tries again */
		maybe_repack(&g, g.repo, "idpmake's clone");
		if (g.local && o->create_remote)
			maybe_repack(&g, g.local, "the GitOps repository");
	}
	free(refused);
	free(said);
	free(ch);
	git_tree_free(known);
	git_close(&g);
	return rc;
}

int gitops_read(const struct gitops_opts *o, int fetch_first, const char *path,
		int (*fn)(void *ctx, const char *name, const char *data, size_t len),
		void *ctx, char tip[41])
{
	struct git g;
	git_oid id;
	git_commit *commit = NULL;
	git_tree *root = NULL, *folder = NULL;
	git_tree_entry *e = NULL;
	const char *p, *local;
	struct stat st;
	int have = 0, err = 0, rc = -1;

	tip[0] = 0;
	if (!(p = norm_path(path)))
		return -1;
	/* the embedded default remote, not created yet: empty */
	if (fetch_first && o->create_remote && o->remote && (local = local_path(o->remote)) && stat(local, &st))
		fetch_first = 0;
	switch (git_open(&g, o, fetch_first)) {
	case 1:
		rc = 0;
		/* fallthrough */
	case -1:
		goto out;
	}
	if ((fetch_first ? fetch(&g, &id, &have) : tracking_tip(&g, &id, &have)) < 0)
		goto out;
	if (!have) {
		rc = 0;
		goto out;
	}
	git_oid_tostr(tip, 41, &id);
	if ((err = git_commit_lookup(&commit, g.repo, &id)) < 0 ||
	    (err = git_commit_tree(&root, commit)) < 0) {
		gerror(&g, err, "cannot read the remote's tip of '%s'", g.branch);
		goto out;
	}
	err = git_tree_entry_bypath(&e, root, p);
	if (err == GIT_ENOTFOUND || (!err && git_tree_entry_type(e) != GIT_OBJECT_TREE)) {
		git_error_clear();
		rc = 0;
		goto out;
	}
	if (err < 0 || (err = git_tree_lookup(&folder, g.repo, git_tree_entry_id(e))) < 0) {
		gerror(&g, err, "cannot read '%s' of '%s'", p, g.branch);
		goto out;
	}
	rc = 0;
	for (size_t i = 0, ne = git_tree_entrycount(folder); i < ne && !rc; i++) {
		const git_tree_entry *fe = git_tree_entry_byindex(folder, i);
		git_blob *blob = NULL;

		if (git_tree_entry_type(fe) != GIT_OBJECT_BLOB)
			continue;
		if ((err = git_blob_lookup(&blob, g.repo, git_tree_entry_id(fe))) < 0) {
			rc = gerror(&g, err, "cannot read '%s/%s' of '%s'", p, git_tree_entry_name(fe), g.branch);
			break;
		}
		rc = fn(ctx, git_tree_entry_name(fe), git_blob_rawcontent(blob), (size_t)git_blob_rawsize(blob));
		git_blob_free(blob);
	}
out:
	git_tree_entry_free(e);
	git_tree_free(folder);
	git_tree_free(root);
	git_commit_free(commit);
	git_close(&g);
	return rc;
}

const char *gitops_version(void)
{
	static char v[40];
	int major, minor, rev;

	git_libgit2_version(&major, &minor, &rev);
	snprintf(v, sizeof(v), "libgit2 %d.%d.%d", major, minor, rev);
	return v;
}
