/*
 * gitremote.c - idpmake's clone of the GitOps remote, and the connection to
 * the remote: credentials (URL, IDPMAKE_GIT_TOKEN / IDPMAKE_GIT_USERNAME,
 * ssh-agent; offered to the remote's own scheme, host and port only, and
 * over plain http only with IDPMAKE_GIT_ALLOW_HTTP=1), fetch, push (never forced; a local remote is a
 * compare-and-swap of its branch), and the one function that turns
 * libgit2's errors into messages (gerror), secrets masked.  The design and
 * its invariants are at the top of gitops.c.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <dirent.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/mempack.h>
#include <git2/sys/odb_backend.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "git/gitops.h"
#include "git/gitremote.h"
#include "base/gitcred.h"
#include "base/url.h"
#include "base/pem.h"
#include "base/util.h"

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void init_libgit2(void)
{
	git_libgit2_init();
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
	const char *token = NULL, *user = getenv("IDPMAKE_GIT_USERNAME");
	int given = gitcred_given();

	if (user && !*user)
		user = NULL;
	if (url_user && !*url_user)
		url_user = NULL;
	if (g->parsed.password) {	/* the URL's own user and password come first */
		token = g->parsed.password;
		user = g->parsed.user;
		given = 1;
	}
	if (allowed & GIT_CREDENTIAL_SSH_KEY) {
		if (!g->tried_agent++)
			return git_credential_ssh_key_from_agent(out, url_user ? url_user : user ? user : "git");
		g->auth = AUTH_AGENT;
	} else if (allowed & GIT_CREDENTIAL_USERNAME) {
		if (!g->tried_user++)
			return git_credential_username_new(out, user ? user : "git");
		g->auth = AUTH_UNSUPPORTED;
	} else if (allowed & GIT_CREDENTIAL_USERPASS_PLAINTEXT) {
		if (!given)
			g->auth = AUTH_NONE;
		else if (!url || !url_same_origin(url, g->bare))
			g->auth = AUTH_HOST;
		else if (!url_may_send_credentials(&g->parsed, "the GitOps remote's credentials"))
			g->auth = AUTH_HTTP;
		else if (!token && gitcred_get(&user, &token, 0) <= 0)	/* read now, when it is needed (gitcred.h) */
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
		g->refused = xstrdup(term_safe(status));	/* the server's words, printed */
	}
	return 0;
}

/*
 * The remote's certificate when no trusted CA signed it: accepted when it
 * is, byte for byte, idpmake's own (o->pin_cert, the certificate the step
 * tls made and the platform's ingress serves) and the connection is to
 * the remote's host; else libgit2's verdict stands.  A pin, not a CA: no
 * other connection, of this or any other host, trusts anything new.
 */
static int certificate(git_cert *cert, int valid, const char *host, void *payload)
{
	struct git *g = payload;
	const git_cert_x509 *x = (const git_cert_x509 *)cert;
	unsigned char *der;
	char *text, *b, *e;
	size_t len, n;
	int ok;

	if (valid || !g->o->pin_cert || cert->cert_type != GIT_CERT_X509 || !host || !g->parsed.host ||
	    strcasecmp(host, g->parsed.host) || !(text = read_file(g->o->pin_cert, &len)))
		return GIT_PASSTHROUGH;
	b = strstr(text, "-----BEGIN CERTIFICATE-----");
	e = b ? strstr(b, "-----END CERTIFICATE-----") : NULL;
	if (!b || !e) {
		free(text);
		return GIT_PASSTHROUGH;
	}
	*e = 0;
	der = unbase64(b + strlen("-----BEGIN CERTIFICATE-----"), &n);
	ok = der && n == x->len && !memcmp(der, x->data, n);
	free(der);
	free(text);
	return ok ? 0 : GIT_PASSTHROUGH;
}

/* callbacks for one connection; resets its credential attempts */
static void callbacks(struct git *g, git_remote_callbacks *cb)
{
	git_remote_init_callbacks(cb, GIT_REMOTE_CALLBACKS_VERSION);
	cb->credentials = credentials;
	cb->certificate_check = certificate;
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
int clone_set_ref(struct git *g, const char *name, const git_oid *id)
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
int clone_ref_commit(struct git *g, const char *name, git_commit **out)
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
int clone_tracking_tip(struct git *g, git_oid *tip, int *have)
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
int remote_fetch(struct git *g, git_oid *tip, int *have)
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
		remote_print_said(g);
		fprintf(stderr, "%s: %s is %s\n", argv0, g->head,
			*have ? git_oid_tostr(hex, sizeof(hex), tip) : "absent");
	}
	return clone_set_ref(g, g->tracking, *have ? tip : NULL);
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
	if (clone_set_ref(g, PUSH_REF, NULL) < 0 || (!rc && clone_set_ref(g, g->tracking, commit) < 0))
		return -1;
	return rc;
}

int remote_push(struct git *g, const git_oid *commit)
{
	git_push_options po;
	char hex[GIT_OID_HEXSZ + 1];
	char *spec = aprintf("%s:%s", PUSH_REF, g->head);
	git_strarray specs = { &spec, 1 };
	int err, rc;

	if (clone_set_ref(g, PUSH_REF, commit) < 0)
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
		remote_print_said(g);
	if (clone_set_ref(g, PUSH_REF, NULL) < 0 || (!rc && clone_set_ref(g, g->tracking, commit) < 0))
		return -1;
	return rc;
}

/* ---- the clone ---------------------------------------------------------- */

/* the folder of a local remote (a path or file:// URL), or NULL */
const char *remote_local_path(const char *url)
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
 * remote.origin.url records the remote (without its password: g->bare) for people
 * reading the clone.  It is read and written as plain configuration:
 * libgit2 1.5's remote lookup leaks memory in its insteadOf matching.
 * Returns 0 when it names g->url, 1 when it does not (and !write), -1.
 */
static int origin(struct git *g, int write)
{
	const char *url = g->bare;
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

void clone_close(struct git *g)
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
int clone_open(struct git *g, const struct gitops_opts *o, int network)
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
	g->shown = url_masked(g->url, "***");
	if (url_has_scheme(g->url) && url_parse(g->url, &g->parsed) < 0)
		return error("the git remote %s is not a valid URL (in a user name or password, write"
			     " '#' as %%23, '/' as %%2F, '?' as %%3F, '@' as %%40 and ':' as %%3A)", g->shown);
	g->bare = url_strip(g->url, 1);
	pthread_once(&init_once, init_libgit2);
	if (git_reference_name_is_valid(&valid, g->head) < 0 || !valid)
		return error("'%s' is not a valid git branch name", g->branch);

	if (!network)
		return stat(g->clone, &st) ? 1 : (err = open_clone(g, 0)) ? err : origin(g, 0);

	if (set_ca(o->ca_file) < 0)
		return -1;
	if ((local = remote_local_path(g->url)) && stat(local, &st)) {
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
	if ((err = git_remote_create_with_opts(&g->remote, g->bare, &co)) < 0)
		return gerror(g, err, "cannot use the git remote %s", g->shown);
	return 0;
}

