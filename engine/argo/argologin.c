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
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "argo/kubectl.h"
#include "base/util.h"
#include "distro/model.h"

static int login(struct argocd *a, const char **err)
{
	const struct distro *d = a->d;
	const struct cluster *cl = find_cluster(d, d->argocd.login.cluster);
	const char *where = aprintf("%s/%s", d->argocd.login.ns, d->argocd.login.secret), *tok;
	struct resp r = { .code = -1 };
	struct call c;
	json_t *body;
	char *pw;
	int ret = -1;

	if (!cl)	/* refs.c checked it; a distro built in code may not be */
		return *err = aprintf("argocd.login: no cluster '%s'", d->argocd.login.cluster), -1;
	if (!(pw = kubectl_secret_value(cl, d->argocd.login.ns, d->argocd.login.secret, d->argocd.login.key, err))) {
		*err = aprintf("argocd.login: %s; set ARGOCD_AUTH_TOKEN (or argocd.token-file) instead, e.g. from `argocd "
			       "account generate-token`, if the Secret was deleted after the first login", *err);
		return -1;
	}
	if (call_open(&c, a, "login", NULL, 60) < 0) {
		memset(pw, 0, strlen(pw));
		free(pw);
		return *err = "cannot start a libcurl handle", -1;
	}
	body = json_pack("{s:s, s:s}", "username", d->argocd.login.user, "password", pw);
	memset(pw, 0, strlen(pw));
	free(pw);
	if (!body) {
		call_close(&c);
		return *err = aprintf("argocd.login: the password in Secret %s is not UTF-8 text", where), -1;
	}
	if (request(&c, "POST", "/api/v1/session", body, &r, err) == 0) {
		tok = r.status == 200 ? jstr(r.json, "token") : "";
		if (r.status == 200 && *tok && !strpbrk(tok, " \t\r\n")) {
			argocd_set_token(a, tok);
			memset((char *)tok, 0, strlen(tok));
			ret = 0;
		} else if (r.status == 401) {
			*err = aprintf("argocd.login: Argo CD refused user '%s' with the password in Secret %s (%s): the "
				       "password was changed since; set ARGOCD_AUTH_TOKEN (or argocd.token-file) instead",
				       d->argocd.login.user, where, r.message ? r.message : "401");
		} else {
			*err = api_error(&c, aprintf("logging in as '%s' (argocd.login)", d->argocd.login.user), &r);
		}
	}
	{
		/* jansson's copy of the password, and the answer's of the token */
		json_t *p = json_object_get(body, "password");
		const char *s = json_string_value(p);
		if (s)
			memset((char *)s, 0, strlen(s));
	}
	json_decref(body);
	if (r.body.s)
		memset(r.body.s, 0, r.body.len);
	resp_reset(&r);
	call_close(&c);
	return ret;
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
