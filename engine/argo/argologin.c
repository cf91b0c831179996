/*
 * argologin.c - argocd.login (idpmake-distro(5)): the Argo CD token from a
 * login, as `argocd login` makes one, with no token for the user to export.
 *
 * The password is read from a Secret of the cluster Argo CD runs in (by
 * default Argo CD's own argocd/argocd-initial-admin-secret, key password,
 * user admin) with kubectl, then sent in POST /api/v1/session, whose answer
 * {"token": ...} is the run's token.  Password and token live in memory
 * only, for this run: zeroed after use, never logged, never in the state
 * (the request's body is never noted; its errors are Argo CD's message).
 */
#include <ctype.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/kubectl.h"
#include "base/url.h"
#include "base/util.h"
#include "distro/model.h"

/* a port-forward's address: loopback */
static int loopback(const char *base)
{
	struct url u;

	if (url_parse(base, &u) < 0 || !u.host)
		return 0;
	return !strncmp(u.host, "127.", 4) || !strcasecmp(u.host, "localhost") || !strcmp(u.host, "::1") ||
	       !strcmp(u.host, "[::1]");
}

/* https verified with the distro's own CA (argocd.ca-file, or the step tls's), alone (argocd_curl_setup) */
static int distro_verified(const struct argocd *a)
{
	return !strncmp(a->base, "https:", 6) && !a->insecure && a->cainfo && a->d->argocd.ca_file &&
	       !strcmp(a->cainfo, a->d->argocd.ca_file);
}

static int login(struct argocd *a, const char **err)
{
	const struct distro *d = a->d;
	const struct cluster *cl = find_cluster(d, d->argocd.login.ref.cluster);
	const char *where = aprintf("%s/%s", d->argocd.login.ref.ns, d->argocd.login.ref.name), *tok, *server = argocd_server(d);
	struct resp r = { .code = -1 };
	struct call c;
	json_t *body;
	char *pw;
	size_t len;
	int ret = -1, spaced;

	if (!cl)	/* refs.c checked it; a distro built in code may not be */
		return *err = aprintf("argocd.login: no cluster '%s'", d->argocd.login.ref.cluster), -1;
	/*
	 * The password is the admin's of the cluster: it goes to the distro's
	 * own server, never to another one ARGOCD_SERVER or ARGOCD_OPTS name
	 * (whose token-file may follow it: the user wrote that file; this
	 * password they never saw).  A port-forward on loopback gets it only
	 * when the distro names no server, or over TLS that the distro's CA
	 * verifies: any local user can listen on a loopback port.
	 */
	if (!(d->argocd.server && same_server(server, d->argocd.server)) &&
	    !(loopback(a->base) && (!d->argocd.server || distro_verified(a))))
		return *err = aprintf("argocd.login sends the admin password in Secret %s only to argocd.server (%s), or to a "
				      "port-forward on loopback when the distro names no server or over TLS its "
				      "argocd.ca-file verifies, not to %s from %s: set ARGOCD_AUTH_TOKEN for that server",
				      where, d->argocd.server ? url_masked(d->argocd.server, "***") : "not set",
				      url_masked(server, "***"), argocd_server_from(d)), -1;
	if (!(pw = kubectl_secret_value(cl, d->argocd.login.ref.ns, d->argocd.login.ref.name, d->argocd.login.key, err))) {
		*err = aprintf("argocd.login: %s; set ARGOCD_AUTH_TOKEN (or argocd.token-file) instead, e.g. from `argocd "
			       "account generate-token`, if the Secret was deleted after the first login", *err);
		return -1;
	}
	len = strlen(pw);
	spaced = len && isspace((unsigned char)pw[len - 1]);
	if (call_open(&c, a, "login", NULL, 60) < 0) {
		memwipe(pw, len);
		free(pw);
		return *err = "cannot start a libcurl handle", -1;
	}
	c.once = 1;	/* a password is sent once: each try is a failed login where Argo CD counts them */
	body = json_pack("{s:s, s:s}", "username", d->argocd.login.user, "password", pw);
	a->password = pw;	/* masked in what Argo CD answers (clean) */
	if (!body) {
		*err = aprintf("argocd.login: the password in Secret %s is not UTF-8 text", where);
	} else if (request(&c, "POST", "/api/v1/session", body, &r, err) == 0) {
		tok = r.status == 200 ? jstr(r.json, "token") : "";
		if (r.status == 200 && *tok && argocd_token_ok(tok)) {
			argocd_set_token(a, tok);
			ret = 0;
		} else if (r.status == 200) {
			*err = "argocd.login: Argo CD's answer to the login has no usable token (none, or with spaces or "
			       "control characters)";
		} else if (r.status == 401) {
			*err = aprintf("argocd.login: Argo CD refused user '%s' with the password in Secret %s (%s): the "
				       "password was changed since%s; set ARGOCD_AUTH_TOKEN (or argocd.token-file) instead",
				       d->argocd.login.user, where, r.message ? r.message : "401",
				       spaced ? ", or the Secret's value ends in a space or a line break" : "");
		} else {
			*err = aprintf("argocd.login: logging in as '%s' at %s: Argo CD answered HTTP %ld%s%s", d->argocd.login.user,
				       url_masked(a->base, "***"), r.status, r.message && *r.message ? ": " : "",
				       r.message ? r.message : "");
		}
	}
	a->password = NULL;
	kubectl_json_wipe(body);	/* jansson's copy of the password */
	kubectl_json_wipe(r.json);	/* and of the token */
	json_decref(body);
	if (r.body.s)
		memwipe(r.body.s, r.body.len);
	resp_reset(&r);
	call_close(&c);
	memwipe(pw, len);
	free(pw);
	return ret;
}

int argocd_login_now(struct argocd *a, const char **err)
{
	if (!a || !a->need_login)
		return 0;
	if (a->login_err) {
		*err = a->login_err;	/* once: a second try sends the password again (Argo CD locks an account) */
		return -1;
	}
	if (login(a, err) < 0) {
		a->login_err = *err;
		return -1;
	}
	a->need_login = 0;
	return 0;
}

struct argocd *argocd_connect(const struct distro *d, const char *statedir, int verbose, const char **err)
{
	struct argocd *a = argocd_open(d, statedir, verbose, err);

	if (a && a->need_login && login(a, err) < 0) {
		argocd_close(a);
		return NULL;
	}
	return a;
}
