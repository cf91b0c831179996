/*
 * argolist.c - the run's lists of what Argo CD holds (argolist.h):
 * Applications, ApplicationSets, clusters, repositories, each asked for
 * once before anything runs and shared by the checks that read them
 * (run/owner.c, run/register.c), then dropped.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argolist.h"
#include "base/gitcred.h"
#include "base/url.h"
#include "base/util.h"
#include "graph/status.h"

static const char *const kind_list[] = { "Applications", "ApplicationSets", "clusters", "repositories" };

/* s with each credential idpmake holds (the clusters' register.token-env, IDPMAKE_GIT_TOKEN) as "***":
 * a server's message may quote one; the Argo CD token is masked by clean() already */
static const char *masked(const struct distro *d, const char *s)
{
	for (size_t i = 0; s && i <= d->nclusters; i++) {
		const char *env = i < d->nclusters ? d->clusters[i].reg.token_env : NULL;
		const char *secret = i < d->nclusters ? (env ? getenv(env) : NULL) : gitcred_held(), *hit;
		size_t n = secret ? strlen(secret) : 0, from = 0;
		/* on from after each "***": a secret that is, or holds, "***" cannot loop */
		while (n >= 3 && (hit = strstr(s + from, secret))) {
			from = (size_t)(hit - s) + 3;
			s = aprintf("%.*s***%s", (int)(hit - s), s, hit + n);
		}
	}
	return s;
}

/* the list Argo CD answers at `path`: its items (a new reference), or NULL with *err */
json_t *argo_list(struct argocd *a, const char *path, const char *what, const char **err)
{
	struct call c;
	struct resp r = { .code = -1 };
	json_t *items = NULL;

	if (call_open(&c, a, "", NULL, 120) < 0)
		return *err = "cannot start a libcurl handle", NULL;
	if (status_verbose())
		fprintf(stderr, "idpmake: who owns them: GET %s\n", path);
	if (request(&c, "GET", path, NULL, &r, err) == 0) {
		if (r.status == 200 && json_is_object(r.json)) {
			items = json_object_get(r.json, "items");
			items = json_is_array(items) ? json_incref(items) : json_array();
		} else if (r.status == 200) {
			*err = aprintf("listing %s: Argo CD's answer is not a JSON object", what);
		} else {
			*err = api_error(&c, aprintf("listing %s", what), &r);
		}
	}
	if (!items)
		*err = masked(a->d, *err);
	resp_reset(&r);
	call_close(&c);
	return items;
}

/*
 * The run's list of each kind, asked once before anything runs: up
 * --refresh's check (register.c) and the ownership check share it;
 * owner_check drops it (argo_list_forget), so nothing reads it once steps
 * change Argo CD.
 */
static struct {
	struct argocd *a;
	json_t *items[AK_N];
} seen;

void argo_list_forget(void)
{
	for (int k = 0; k < AK_N; k++) {
		json_decref(seen.items[k]);
		seen.items[k] = NULL;
	}
	seen.a = NULL;
}

json_t *argo_list_once(struct argocd *a, enum argo_kind k, const char **err)
{
	if (seen.a != a)
		argo_list_forget();
	seen.a = a;
	if (!seen.items[k])
		seen.items[k] = argo_list(a, k == AK_APP ? aprintf("/api/v1/applications?appNamespace=%s", url_escape(a->d->argocd.namespace))
				     : aprintf("/api/v1/%s", k == AK_APPSET ? "applicationsets" : k == AK_CLUSTER ? "clusters" : "repositories"),
				     kind_list[k], err);
	return seen.items[k];
}

int argo_listed(struct argocd *a, int repos, const char ***out, const char **err)
{
	json_t *items = argo_list_once(a, repos ? AK_REPO : AK_CLUSTER, err), *it;
	const char *field = repos ? "repo" : "server";
	size_t i;
	int n = 0;

	*out = NULL;
	if (!items)
		return -1;
	*out = amalloc((json_array_size(items) + 1) * sizeof(**out));
	json_array_foreach(items, i, it)
		if (json_is_string(json_object_get(it, field)))
			(*out)[n++] = astrdup(json_string_value(json_object_get(it, field)));
	return n;
}
