/*
 * url.h - URLs, parsed one way: libcurl's URL API (curl_url).  The GitOps
 * remote, git sources and the Argo CD client all split, mask and escape
 * URLs here, so they agree on where a password ends.
 *
 * Strings returned are in the run's arena.  A password is returned
 * percent-decoded (what is sent) and its text as written in the URL
 * (what must be masked in messages) is kept too.
 */
#ifndef IDPMAKE_URL_H
#define IDPMAKE_URL_H

struct url {
	const char *scheme;		/* lower case: https, http, ssh, file... */
	const char *user;		/* decoded; NULL when absent */
	const char *password;		/* decoded; NULL when absent */
	const char *password_raw;	/* as written in the URL (percent-encoded); NULL when absent */
	const char *host;		/* NULL for file: URLs */
	const char *port;		/* the scheme's default when not written; NULL if none is known */
};

/*
 * Parse `s` as a URL with a scheme ("scheme://...").  0, or -1 when it is
 * not one (a path, scp-like user@host:path, or a malformed URL such as a
 * password holding a raw '#').
 */
int url_parse(const char *s, struct url *u);

/* does `s` look like it means to be a URL ("scheme://")?  Parsed or not */
int url_has_scheme(const char *s);

/*
 * `s` with the password replaced by `with` ("" drops it and its ':'), the
 * rest as written.  A string that is not a parseable URL but has an '@'
 * after the scheme is shown as the scheme, "***@" and what follows the
 * last '@': whatever it held before cannot be told apart from a password.
 */
const char *url_masked(const char *s, const char *with);

/* `s` without the password (the user name kept) or, when !keep_user, without user info at all */
const char *url_strip(const char *s, int keep_user);

/* same scheme, host (case-insensitive) and port (defaults filled in); 0 for anything unparseable */
int url_same_origin(const char *a, const char *b);

/*
 * May credentials be sent to u?  Yes, but over plain http only when
 * IDPMAKE_GIT_ALLOW_HTTP=1, and then with a warning (once a run, naming
 * the host).  `what` names the credentials in that warning.
 */
int url_may_send_credentials(const struct url *u, const char *what);
/* would url_may_send_credentials refuse u (plain http, IDPMAKE_GIT_ALLOW_HTTP not 1)?  Says nothing */
int url_http_refused(const struct url *u);
/*
 * Where IDPMAKE_GIT_TOKEN came from, for messages: "IDPMAKE_GIT_TOKEN", or,
 * when a context filled it in (run/targets.c), "$VAR (context NAME)".
 */
void url_git_token_from(const char *origin);
const char *url_git_token_name(void);

/*
 * Does `server` (a URL, or "host[:port][/path]" as url_base takes it) hold
 * user info, a user name or a password?  NULL when not; else `server` as it
 * may be shown, its user info shown as "***@": a user name
 * alone may be a token.
 */
const char *url_userinfo(const char *server);

/* percent-encode every byte but A-Z a-z 0-9 - . _ ~ (curl_easy_escape) */
const char *url_escape(const char *s);

/*
 * A server as the argocd CLI takes it ("host", "host:port", "host/root",
 * or a URL): "scheme://host:port[/path]" without a trailing '/'.  `scheme`
 * is used when `server` has none; `port` ("443", or NULL) is added when
 * `server` names none.  NULL when it is no valid host.
 */
const char *url_base(const char *server, const char *scheme, const char *port);

/* url as owners compare remotes (arena): no user info, scheme and host in lower case, no default port, no
 * trailing '/' or ".git" (argohome.h owner_remote; capi.h capi_home) */
const char *url_owner_form(const char *url);

#endif
