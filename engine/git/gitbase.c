/*
 * gitbase.c - what every git file uses: the one place libgit2 errors are
 * shown (gerror), repository paths made canonical, and the entry at a path
 * in a tree.  It calls none of the other git files.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <git2.h>

#include "base/buf.h"
#include "git/gitremote.h"
#include "base/gitcred.h"
#include "base/url.h"
#include "base/util.h"

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
void remote_print(const char *p)
{
	const char *nl, *cr;

	while (p && *p) {
		size_t n = strcspn(p, "\n");
		nl = p + n;
		for (cr = nl; cr > p && cr[-1] != '\r'; cr--)
			;
		if (nl > cr)	/* the server's words: an escape sequence is shown, not obeyed */
			fprintf(stderr, "remote: %s\n", term_safe(astrndup(cr, (size_t)(nl - cr))));
		p = *nl ? nl + 1 : nl;
	}
}

void remote_print_said(struct git *g)
{
	remote_print(g->said.s);
	buf_reset(&g->said);
}

/*
 * The one place libgit2 errors are shown: "WHAT: libgit2's message", or the
 * fix where it is known (credentials, certificates).  Passwords and tokens
 * are masked.  Returns -1.
 */
int gerror(struct git *g, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int gerror(struct git *g, int code, const char *fmt, ...)
{
	const git_error *e = git_error_last();
	const char *m = e && e->message && *e->message ? e->message : "unknown libgit2 error";
	const char *token = gitcred_held(), *pw = g ? g->parsed.password : NULL;
	struct buf msg = BUF_INIT;
	size_t len = strlen(m);
	va_list ap;

	if (g && g->quiet_auth && (g->auth == AUTH_HTTP || (g->auth == AUTH_NONE && !pw && !gitcred_given()))) {
		git_error_clear();
		return -1;
	}

	va_start(ap, fmt);
	buf_vaddf(&msg, fmt, ap);
	va_end(ap);
	buf_adds(&msg, ": ");
	if (g && g->auth == AUTH_HTTP)
		buf_addf(&msg, "refusing to send credentials to %s over plain http; use https, or set"
			 " IDPMAKE_GIT_ALLOW_HTTP=1 to send them readable on the way", g->parsed.host);
	else if (g && g->auth == AUTH_HOST)
		buf_addf(&msg, "authentication failed: credentials were asked for by a server other"
			 " than %s (a redirect?); idpmake offers the remote's credentials to its own"
			 " scheme, host and port only", g->parsed.host);
	else if (g && g->auth == AUTH_NONE && !pw && gitcred_has_source())
		buf_addf(&msg, "authentication failed: %s could not be read (said above); set IDPMAKE_GIT_TOKEN"
			 " to give a token instead", url_git_token_name());
	else if (g && g->auth == AUTH_NONE)
		buf_addf(&msg, "authentication failed%s; set IDPMAKE_GIT_TOKEN to a token (or password)"
			 " with write access, and IDPMAKE_GIT_USERNAME if the server wants a user"
			 " name other than 'git'", pw ? " with the user name and password in the URL" : "");
	else if (g && g->auth == AUTH_REFUSED)
		buf_addf(&msg, "authentication failed: the server refused %s for the user"
			 " '%s'; check the token, its access to the repository, and IDPMAKE_GIT_USERNAME"
			 " (the user name sent with the token; 'git' when unset)", url_git_token_name(), g->user);
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
	if (pw)
		mask(&msg, pw, strlen(pw));
	if (g && g->parsed.password_raw)
		mask(&msg, g->parsed.password_raw, strlen(g->parsed.password_raw));
	if (g && g->said.len)
		remote_print_said(g);
	error("%s", msg.s);
	buf_release(&msg);
	git_error_clear();
	return -1;
}

/* a repository path without empty, "." or trailing components; NULL if invalid */
const char *norm_path(const char *p)
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

/* the id of the entry at `path` in `tree` (NULL: empty): 1, or 0 with *id zero when none */
int entry_at(struct git *g, git_tree *tree, const char *path, git_oid *id)
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
