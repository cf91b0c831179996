/*
 * gitops.c - the GitOps repository through libgit2 (gitops.h, engine.md "Git").
 *
 * STATE/repo is a bare clone.  Its remote "origin" records o->remote (with
 * any password in the URL left out: secrets are never written to the
 * state); the network itself goes through an in-memory remote with the URL
 * as given.  Only refs/heads/BRANCH is fetched, into
 * refs/remotes/origin/BRANCH, and only when the clone lacks its commit.
 *
 * One push, as a state diagram:
 *
 *     fetch --> build tree on tip --> same as tip's tree? --yes--> done, no commit
 *       ^                |no
 *       |             commit (parent: tip), push refs/heads/BRANCH (never forced)
 *       |                |
 *       |      accepted: done        refused: fetch again
 *       |                                |
 *       |          tip unchanged: fail with the remote's reason
 *       |          the new commits touch one of our folders: fail, naming them
 *       +--------- otherwise: rebuild on the new tip (at most MAX_RETRIES times)
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
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>

#include "buf.h"
#include "bundle.h"
#include "gitops.h"
#include "util.h"

#define MAX_RETRIES 5
#define SAID_CAP 4096			/* bytes kept of the remote's messages */
#define PUSH_REF "refs/idpmake/push"	/* what is pushed, only during a push */

/* tests only: called before each push attempt, after its fetch */
void (*gitops_test_after_fetch)(int attempt);

enum auth { AUTH_OK, AUTH_NONE, AUTH_REFUSED, AUTH_AGENT, AUTH_UNSUPPORTED };

/* one session with the clone and the remote */
struct git {
	const struct gitops_opts *o;
	const char *branch;
	const char *head;		/* refs/heads/BRANCH */
	const char *tracking;		/* refs/remotes/origin/BRANCH */
	const char *url;		/* o->remote as given: may hold a password */
	const char *shown;		/* url with the password masked */
	const char *clone;		/* STATE/repo */
	git_repository *repo;
	git_odb *odb;
	git_remote *remote;		/* in memory, never saved */

	/* per connection */
	int tried_user, tried_agent, tried_pass;
	enum auth auth;
	char *refused;			/* the remote's reason for refusing the update */
	struct buf said;		/* the remote's messages, up to SAID_CAP */
};

struct change {
	const char *path;		/* normalised: no leading, trailing or double '/' */
	git_oid tree;			/* the folder's new tree */
	int remove;
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
static void print_said(struct git *g)
{
	const char *p = g->said.s, *nl, *cr;

	while (*p) {
		size_t n = strcspn(p, "\n");
		nl = p + n;
		for (cr = nl; cr > p && cr[-1] != '\r'; cr--)
			;
		if (nl > cr)
			fprintf(stderr, "remote: %.*s\n", (int)(nl - cr), cr);
		p = *nl ? nl + 1 : nl;
	}
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
		buf_adds(&msg, "authentication failed: the server refused IDPMAKE_GIT_TOKEN; check"
			 " the token, its access to the repository, and IDPMAKE_GIT_USERNAME (the user"
			 " name sent with it; 'git' when unset)");
	else if (g && g->auth == AUTH_AGENT)
		buf_adds(&msg, "ssh authentication failed: ssh-agent offered no key the server"
			 " accepts (add the key with ssh-add; check SSH_AUTH_SOCK)");
	else if (g && g->auth == AUTH_UNSUPPORTED)
		buf_adds(&msg, "authentication failed: the server asks for credentials idpmake"
			 " does not offer (https: IDPMAKE_GIT_TOKEN; ssh: a key in ssh-agent)");
	else {
		while (len && strchr(" .\n\r", m[len - 1]))
			len--;
		buf_add(&msg, m, len);
		if (code == GIT_ECERTIFICATE && g && !strncmp(g->url, "https:", 6))
			buf_adds(&msg, g->o->ca_file ? " (is git.ca_file the CA that signed the server's certificate?)"
				 : " (for a server with a private CA, set git.ca_file)");
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
		else if (!g->tried_pass++)
			return git_credential_userpass_plaintext_new(out, user ? user : url_user ? url_user : "git",
								     token);
		else
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

static int set_tracking(struct git *g, const git_oid *tip)
{
	git_reference *ref = NULL;
	int err;

	if (tip) {
		err = git_reference_create(&ref, g->repo, g->tracking, tip, 1, "idpmake: fetch");
	} else if (!(err = git_reference_lookup(&ref, g->repo, g->tracking))) {
		err = git_reference_delete(ref);
	} else if (err == GIT_ENOTFOUND) {
		git_error_clear();
		err = 0;
	}
	git_reference_free(ref);
	return err < 0 ? gerror(g, err, "cannot update %s in %s", g->tracking, g->clone) : 0;
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
	return set_tracking(g, *have ? tip : NULL);
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
static int push(struct git *g, const git_oid *commit)
{
	git_reference *ref = NULL;
	git_push_options po;
	char hex[GIT_OID_HEXSZ + 1];
	char *spec = aprintf("%s:%s", PUSH_REF, g->head);
	git_strarray specs = { &spec, 1 };
	int err, rc;

	if ((err = git_reference_create(&ref, g->repo, PUSH_REF, commit, 1, NULL)) < 0)
		return gerror(g, err, "cannot write %s in %s", PUSH_REF, g->clone);
	git_reference_free(ref);
	ref = NULL;
	git_push_options_init(&po, GIT_PUSH_OPTIONS_VERSION);
	callbacks(g, &po.callbacks);
	po.proxy_opts.type = GIT_PROXY_AUTO;
	if (g->o->verbose)
		fprintf(stderr, "%s: git push %s %s:%s\n", argv0, g->shown,
			git_oid_tostr(hex, sizeof(hex), commit), g->head);
	err = git_remote_push(g->remote, &specs, &po);
	if (err == GIT_ENONFASTFORWARD) {
		/* libgit2 saw the remote's new tip in the advertisement */
		const git_error *e = git_error_last();
		free(g->refused);
		g->refused = xstrdup(e && e->message ? e->message : "non-fast-forward");
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
	if (!git_reference_lookup(&ref, g->repo, PUSH_REF))
		git_reference_delete(ref);
	git_reference_free(ref);
	git_error_clear();
	if (!rc)
		return set_tracking(g, commit);
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
	/* another repository: what was fetched from the old one is no tip of it */
	if (!err && set_tracking(g, NULL) < 0) {
		rc = -1;
		goto out;
	}
	if ((err = git_config_set_string(cfg, "remote.origin.url", url)) < 0 ||
	    (err = git_config_set_string(cfg, "remote.origin.fetch", "+refs/heads/*:refs/remotes/origin/*")) < 0)
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

static void git_close(struct git *g)
{
	git_remote_free(g->remote);
	git_odb_free(g->odb);
	git_repository_free(g->repo);
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
	g->clone = path_join(o->statedir, "repo");
	if (!o->remote || !*o->remote)
		return error("no git remote given");
	g->url = o->remote;
	g->shown = url_without_password(g->url, "***");
	pthread_once(&init_once, init_libgit2);
	if (git_reference_name_is_valid(&valid, g->head) < 0 || !valid)
		return error("'%s' is not a valid git branch name", g->branch);

	if (!network) {
		if (stat(g->clone, &st))
			return 1;
		err = git_repository_open_ext(&g->repo, g->clone, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL);
		if (err == GIT_ENOTFOUND) {
			git_error_clear();
			return 1;
		}
		if (err < 0)
			return gerror(g, err, "cannot open idpmake's clone %s (remove it: the next run fetches again)",
				      g->clone);
		return origin(g, 0);
	}

	if (set_ca(o->ca_file) < 0)
		return -1;
	if ((local = local_path(g->url)) && stat(local, &st)) {
		if (!o->create_remote)
			return error("the git remote %s does not exist", local);
		if (create_remote(g, local) < 0)
			return -1;
	}
	err = git_repository_open_ext(&g->repo, g->clone, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE, NULL);
	if (err == GIT_ENOTFOUND) {
		git_repository_init_options io;

		git_error_clear();
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
	if (origin(g, 1) < 0)
		return -1;
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
	if ((err = git_treebuilder_new(&tb, g->repo, NULL)) < 0)
		goto fail;
	for (size_t i = 0; i < b.n; i++) {
		if ((err = git_blob_create_from_buffer(&blob, g->repo, b.v[i].data, b.v[i].len)) < 0 ||
		    (err = git_treebuilder_insert(NULL, tb, b.v[i].name, &blob, GIT_FILEMODE_BLOB)) < 0) {
			gerror(g, err, "cannot store '%s' of %s in %s", b.v[i].name, file, g->clone);
			git_treebuilder_free(tb);
			bundle_free(&b);
			return -1;
		}
	}
	err = git_treebuilder_write(out, tb);
fail:
	if (err < 0)
		gerror(g, err, "cannot store %s in %s", file, g->clone);
	git_treebuilder_free(tb);
	bundle_free(&b);
	return err < 0 ? -1 : 0;
}

/*
 * The tree of `base` (NULL: none) with the changes applied; *same when it
 * equals base (no commit to make).  Only entries that differ are updated, so
 * git_tree_create_updated reads and writes just the trees on their paths.
 */
static int apply(struct git *g, git_tree *base, const struct change *c, size_t n, git_oid *out, int *same)
{
	git_tree_update *u = xcalloc(n ? n : 1, sizeof(*u));
	size_t nu = 0;
	int err = 0;

	for (size_t i = 0; i < n; i++) {
		git_tree_entry *e = NULL;

		if (base && (err = git_tree_entry_bypath(&e, base, c[i].path)) < 0) {
			if (err != GIT_ENOTFOUND)
				goto fail;
			git_error_clear();
			err = 0;
		}
		if (c[i].remove ? e != NULL
		    : !e || git_tree_entry_filemode(e) != GIT_FILEMODE_TREE || !git_oid_equal(git_tree_entry_id(e), &c[i].tree)) {
			u[nu].action = c[i].remove ? GIT_TREE_UPDATE_REMOVE : GIT_TREE_UPDATE_UPSERT;
			u[nu].id = c[i].tree;
			u[nu].filemode = GIT_FILEMODE_TREE;
			u[nu].path = c[i].path;
			nu++;
		}
		git_tree_entry_free(e);
	}
	*same = nu == 0;
	if (nu && (err = git_tree_create_updated(out, g->repo, base, nu, u)) < 0)
		goto fail;
	if (nu && base && git_oid_equal(out, git_tree_id(base)))
		*same = 1;
	free(u);
	return 0;
fail:
	free(u);
	return gerror(g, err, "cannot build the new tree of '%s'", g->branch);
}

/*
 * Did the remote's move from `old` to `new` (NULL: no commit) touch any of
 * the changes' folders?  -1 after naming them; 0 when the commit can be
 * rebuilt on `new`.
 */
static int check_moved(struct git *g, const git_oid *old, const git_oid *new,
		       const struct change *c, size_t n)
{
	git_commit *oc = NULL, *nc = NULL;
	git_tree *ot = NULL, *nt = NULL;
	git_diff *diff = NULL;
	git_diff_options opts;
	char *hit = xcalloc(n ? n : 1, 1), shortid[8];
	struct buf list = BUF_INIT;
	int err, rc = -1;

	if (!new) {
		error("the remote branch '%s' was deleted while this run pushed; run idpmake up again", g->branch);
		goto out;
	}
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.flags |= GIT_DIFF_SKIP_BINARY_CHECK;
	if ((old && ((err = git_commit_lookup(&oc, g->repo, old)) < 0 || (err = git_commit_tree(&ot, oc)) < 0)) ||
	    (err = git_commit_lookup(&nc, g->repo, new)) < 0 || (err = git_commit_tree(&nt, nc)) < 0 ||
	    (err = git_diff_tree_to_tree(&diff, g->repo, ot, nt, &opts)) < 0) {
		gerror(g, err, "cannot compare the remote's new commits with the old tip");
		goto out;
	}
	for (size_t d = 0, nd = git_diff_num_deltas(diff); d < nd; d++) {
		const git_diff_delta *dd = git_diff_get_delta(diff, d);
		for (size_t i = 0; i < n; i++) {
			if (!hit[i] && ((dd->old_file.path && overlaps(dd->old_file.path, c[i].path)) ||
					(dd->new_file.path && overlaps(dd->new_file.path, c[i].path))))
				hit[i] = 1;
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (hit[i])
			buf_addf(&list, "%s%s", list.len ? ", " : "", c[i].path);
	}
	git_oid_tostr(shortid, sizeof(shortid), new);
	if (list.len) {
		error("the remote branch '%s' moved to %s and changed %s, which this run also changes;"
		      " fetch and review it, then run idpmake up again", g->branch, shortid, list.s);
		goto out;
	}
	if (g->o->verbose)
		fprintf(stderr, "%s: the remote branch '%s' moved to %s (other folders): rebuilding the commit on it\n",
			argv0, g->branch, shortid);
	rc = 0;
out:
	buf_release(&list);
	free(hit);
	git_diff_free(diff);
	git_tree_free(ot);
	git_tree_free(nt);
	git_commit_free(oc);
	git_commit_free(nc);
	return rc;
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
	git_signature_free(sig);
	git_tree_free(tree);
	buf_release(&msg);
	return err < 0 ? -1 : 0;
}

/* ---- the interface ------------------------------------------------------ */

int gitops_push(const struct gitops_opts *o, const struct gitops_change *c, size_t n,
		const char *message, struct gitops_result *r)
{
	struct git g;
	struct change *ch = NULL;
	char *refused = NULL;		/* why the remote refused the last push */
	git_oid tip, prev, tree_id, commit_id;
	int have = 0, had = 0, rc = -1;

	memset(r, 0, sizeof(*r));
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
		git_commit *parent = NULL;
		git_tree *base = NULL;
		int err, same, st;

		if (fetch(&g, &tip, &have) < 0)
			goto out;
		if (attempt) {
			if (had == have && (!have || git_oid_equal(&prev, &tip))) {
				error("the remote refused to update the branch '%s': %s", g.branch, refused);
				goto out;
			}
			if (check_moved(&g, had ? &prev : NULL, have ? &tip : NULL, ch, n) < 0)
				goto out;
			r->retries = attempt;
		}
		if (have && ((err = git_commit_lookup(&parent, g.repo, &tip)) < 0 ||
			     (err = git_commit_tree(&base, parent)) < 0)) {
			gerror(&g, err, "cannot read the remote's tip of '%s'", g.branch);
			git_commit_free(parent);
			goto out;
		}
		if (apply(&g, base, ch, n, &tree_id, &same) < 0 ||
		    (!same && make_commit(&g, &tree_id, parent, message, &commit_id) < 0)) {
			git_tree_free(base);
			git_commit_free(parent);
			goto out;
		}
		git_tree_free(base);
		git_commit_free(parent);
		if (have)
			git_oid_tostr(r->parent, sizeof(r->parent), &tip);
		if (same) {
			/* the remote holds this content already (invariant 2) */
			if (have)
				git_oid_tostr(r->commit, sizeof(r->commit), &tip);
			r->made_commit = 0;
			rc = 0;
			goto out;
		}
		if (gitops_test_after_fetch)
			gitops_test_after_fetch(attempt);
		if ((st = push(&g, &commit_id)) < 0)
			goto out;
		if (st == 0) {
			git_oid_tostr(r->commit, sizeof(r->commit), &commit_id);
			r->made_commit = 1;
			rc = 0;
			goto out;
		}
		free(refused);
		refused = g.refused;
		g.refused = NULL;
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
	free(refused);
	free(ch);
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
	if ((err = git_tree_entry_bypath(&e, root, p)) == GIT_ENOTFOUND || (!err && git_tree_entry_type(e) != GIT_OBJECT_TREE)) {
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
