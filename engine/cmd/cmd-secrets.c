/*
 * cmd-secrets.c - `secrets [PACKAGE...]`: the platform's users and
 * passwords, read from the cluster on request, as `idpbuilder get secrets`
 * shows them: Argo CD's initial admin Secret, Gitea's admin credential, and
 * every Secret labelled cnoe.io/cli-secret=true, grouped by its label
 * cnoe.io/package-name.  The one command that prints a secret: nothing of
 * it is kept, logged or sent anywhere; the text output escapes control
 * characters, --json gives the values as they are.
 *
 * The cluster is the one Argo CD runs in: argocd.login.ref.cluster, by default
 * in-cluster; read through its kube context, as its kubectl steps are.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "argo/kubectl.h"
#include "base/buf.h"
#include "base/pem.h"
#include "base/util.h"
#include "cmd/cmd.h"
#include "run/bootstrap.h"
#include "distro/model.h"
#include "graph/status.h"
#include "run/ctx.h"

/* the platform's own, which carry no label: idpbuilder lists them too */
static const struct {
	const char *package, *ns, *name;
} core[] = {
	{ "argocd", "argocd", "argocd-initial-admin-secret" },
	{ "gitea", "gitea", "gitea-credential" },
};

/* the packages named on the command line (idpbuilder's names, not the graph's targets) */
static char **want;
static size_t nwant;

static int wanted(const char *package)
{
	if (!nwant)
		return 1;
	for (size_t i = 0; i < nwant; i++)
		if (!strcmp(want[i], package))
			return 1;
	return 0;
}

/* o.a.b (o.a with b NULL) as text, or "" */
static const char *field(json_t *o, const char *a, const char *b)
{
	json_t *x = json_object_get(o, a);
	const char *s = json_string_value(b ? json_object_get(x, b) : x);
	return s ? s : "";
}

/* one Secret as {package, namespace, name, data: {KEY: VALUE}}, its values decoded; NULL: none to show */
static json_t *entry(const char *package, json_t *secret)
{
	json_t *data = json_object_get(secret, "data"), *out = json_object(), *v;
	const char *k;

	json_object_foreach(data, k, v) {
		size_t n;
		char *text = json_is_string(v) ? (char *)unbase64(json_string_value(v), &n) : NULL;
		/* text as it is; bytes that are not (a NUL, not UTF-8) as {"base64": ...}, so nothing is cut */
		json_t *s = text && !memchr(text, 0, n) ? json_stringn(text, n) : NULL;
		json_object_set_new(out, k, s ? s : json_pack("{s:s}", "base64", json_is_string(v) ? json_string_value(v) : ""));
		if (text)
			memwipe(text, n);
		free(text);
	}
	return json_pack("{s:s, s:s, s:s, s:o}", "package", package, "namespace", field(secret, "metadata", "namespace"),
			 "name", field(secret, "metadata", "name"), "data", out);
}

static int bypackage(const void *x, const void *y)
{
	json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	int r = strcmp(json_string_value(json_object_get(a, "package")), json_string_value(json_object_get(b, "package")));
	return r ? r : strcmp(json_string_value(json_object_get(a, "name")), json_string_value(json_object_get(b, "name")));
}

/*
 * A value as text: as it is, unless it holds a control character; then
 * escaped (term_safe) with each backslash doubled first, so that an escape
 * cannot be told for the same text written out.
 */
static const char *value_shown(const char *v)
{
	struct buf b = BUF_INIT;
	const char *r;
	int ctl = 0;

	for (const char *p = v; *p; p++)
		ctl |= (unsigned char)*p < 0x20 || *p == 0x7f;
	if (!ctl)
		return term_safe(v);
	for (const char *p = v; *p; p++)
		buf_add(&b, *p == '\\' ? "\\\\" : p, *p == '\\' ? 2 : 1);
	r = term_safe(b.s);
	memwipe(b.s, b.len);
	buf_release(&b);
	return r;
}

int cmd_secrets(struct ctx *c)
{
	const char *cname, *err, *args[] = { "get", "secrets", "--all-namespaces", "--selector=cnoe.io/cli-secret=true", NULL };
	const struct cluster *cl;
	json_t *list, *v, *item, **rows = NULL;
	size_t n = 0, i;
	int r;

	want = c->targets, nwant = c->ntargets;
	c->targets = NULL, c->ntargets = 0;	/* package names of the platform, not steps to select */
	if ((r = ctx_load(c, 1)))
		return r;
	cname = c->d->argocd.login.ref.name ? c->d->argocd.login.ref.cluster : "in-cluster";
	if (!(cl = find_cluster(c->d, cname))) {
		fprintf(stderr, "idpmake: secrets reads the cluster Argo CD runs in, '%s', which is not a cluster of this "
				"distro: name it with argocd.login.cluster\n", cname);
		return 2;
	}
	for (i = 0; i < sizeof(core) / sizeof(*core); i++) {
		const char *one[] = { "--namespace", core[i].ns, "get", "secret", core[i].name, NULL };
		if (!wanted(core[i].package))
			continue;
		if (!(v = kubectl_get_json(cl, one, &err))) {
			if (!strstr(err, "(NotFound)")) {	/* kubectl's "Error from server (NotFound)", nothing else */
				error("%s", err);
				return 1;
			}
			continue;	/* a platform without it (no Gitea) */
		}
		rows = agrow(rows, n, sizeof(*rows));
		rows[n++] = entry(core[i].package, v);
		kubectl_json_wipe(v);
		json_decref(v);
	}
	if (!(list = kubectl_get_json(cl, args, &err))) {
		error("%s", err);
		return 1;
	}
	json_array_foreach(json_object_get(list, "items"), i, item) {
		const char *pkg = json_string_value(
			json_object_get(json_object_get(json_object_get(item, "metadata"), "labels"), "cnoe.io/package-name"));
		int again = 0;
		if (!pkg)
			pkg = "(no package)";
		for (size_t k = 0; k < n && !again; k++)	/* a core one labelled too: listed once */
			again = !strcmp(field(rows[k], "namespace", NULL), field(item, "metadata", "namespace")) &&
				!strcmp(field(rows[k], "name", NULL), field(item, "metadata", "name"));
		if (!again && wanted(pkg)) {
			rows = agrow(rows, n, sizeof(*rows));
			rows[n++] = entry(pkg, item);
		}
	}
	kubectl_json_wipe(list);
	json_decref(list);
	if (n)
		qsort(rows, n, sizeof(*rows), bypackage);
	/* where each is served, as the end of a first up says it (bootstrap.h) */
	for (i = 0; i < n; i++) {
		const char *u = platform_url(c->d, json_string_value(json_object_get(rows[i], "package")));
		if (u)
			json_object_set_new(rows[i], "url", json_string(u));
	}
	if (c->json) {
		json_t *all = json_array();
		for (i = 0; i < n; i++)
			json_array_append(all, rows[i]);
		json_print(all, 1);	/* takes the reference */
	} else {
		for (i = 0; i < n; i++) {
			const char *k;
			printf("%s%s (Secret %s/%s)\n", i ? "\n" : "", term_safe(json_string_value(json_object_get(rows[i], "package"))),
			       term_safe(json_string_value(json_object_get(rows[i], "namespace"))),
			       term_safe(json_string_value(json_object_get(rows[i], "name"))));
			if (json_is_string(json_object_get(rows[i], "url")))
				printf("  %-12s %s\n", "url", term_safe(json_string_value(json_object_get(rows[i], "url"))));
			json_object_foreach(json_object_get(rows[i], "data"), k, v) {
				if (json_is_string(v))
					printf("  %-12s %s\n", term_safe(k), value_shown(json_string_value(v)));
				else
					printf("  %-12s (not text: --json gives its base64)\n", term_safe(k));
			}
		}
		if (!n)
			fprintf(stderr, "idpmake: no platform Secret on cluster '%s'%s\n", cl->name,
				nwant ? " for the packages named" : "");
	}
	for (i = 0; i < n; i++) {
		kubectl_json_wipe(rows[i]);
		json_decref(rows[i]);
	}
	return 0;
}
