/* hookkube.c - the kube context a hook's kubectl gets: its cluster's own (hookkube.h; issue 33 #2) */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argo/argoapi.h"
#include "argo/hookkube.h"
#include "argo/kubectl.h"
#include "base/buf.h"
#include "base/util.h"
#include "distro/capi.h"

/* s as a single-quoted YAML scalar into b (room made first); -1 when s has a line break */
static int squote(struct buf *b, const char *s)
{
	if (strpbrk(s, "\n\r"))
		return -1;
	buf_addc(b, '\'');
	for (; *s; s++) {
		if (*s == '\'')
			buf_addc(b, '\'');
		buf_addc(b, *s);
	}
	buf_addc(b, '\'');
	return 0;
}

/* the text of a kubeconfig holding kc's credential only, under the context `name`, into b: 0, or -1 with *err */
static int kubeconfig_text(struct buf *b, const char *name, const struct kubecred *kc, const char **err)
{
	const char *v[] = { kc->server, kc->ca, kc->cert, kc->key, kc->token };
	size_t room = 512 + 6 * (2 * strlen(name) + 2);	/* the text around them, and the name six times */
	int bad = 0;

	for (size_t i = 0; i < sizeof(v) / sizeof(*v); i++)
		room += v[i] ? 2 * strlen(v[i]) + 2 : 0;	/* each quoted: at most twice as long, and its quotes */
	buf_grow(b, room);	/* once: a credential is never left behind in a block a realloc freed */
	buf_adds(b, "# written by idpmake for one hook run, removed after it (hookkube.h)\napiVersion: v1\nkind: Config\n"
		    "clusters:\n- name: ");
	bad |= squote(b, name);
	buf_adds(b, "\n  cluster:\n    server: ");
	bad |= squote(b, kc->server);
	buf_adds(b, "\n    certificate-authority-data: ");
	bad |= squote(b, kc->ca);
	buf_adds(b, "\ncontexts:\n- name: ");
	bad |= squote(b, name);
	buf_adds(b, "\n  context:\n    cluster: ");
	bad |= squote(b, name);
	buf_adds(b, "\n    user: ");
	bad |= squote(b, name);
	buf_adds(b, "\ncurrent-context: ");
	bad |= squote(b, name);
	buf_adds(b, "\nusers:\n- name: ");
	bad |= squote(b, name);
	buf_adds(b, "\n  user:");
	if (kc->cert && kc->key) {
		buf_adds(b, "\n    client-certificate-data: ");
		bad |= squote(b, kc->cert);
		buf_adds(b, "\n    client-key-data: ");
		bad |= squote(b, kc->key);
	}
	if (kc->token) {
		buf_adds(b, "\n    token: ");
		bad |= squote(b, kc->token);
	}
	buf_addc(b, '\n');
	if (bad)
		*err = "a value of it has a line break";
	return bad ? -1 : 0;
}

/* a cluster Cluster API made: its Secret's credential in a private folder (hookkube.h) */
static int created(const struct cluster *cl, struct hook_kube *hk, const char **err)
{
	const struct capi *k = cl->create.capi;
	const char *name = aprintf("%s-kubeconfig", cl->name), *tmp = getenv("TMPDIR"), *why = NULL;
	const char *secret = aprintf("Secret %s/%s", k->namespace, name), *adopting;
	struct kubecred kc;
	struct buf b = BUF_INIT;
	char *text, *dir;
	int ret = -1;

	if (!k->mgmt)
		return *err = "no management cluster", -1;
	if (!(text = kubectl_secret_value(k->mgmt, k->namespace, name, "value", err))) {
		*err = aprintf("cluster '%s': its kube context: cannot read %s from the management cluster '%s': %s",
			       cl->name, secret, k->management, *err);
		return -1;
	}
	ret = kubecred_parse(secret, NULL, text, strlen(text), NULL, &kc, &why);
	memwipe(text, strlen(text));
	free(text);
	if (ret < 0) {
		*err = aprintf("cluster '%s': its kube context: %s", cl->name, why);
		return -1;
	}
	ret = -1;
	if (!kube_server_ok(kc.server))
		why = "the server is not an https URL of a host (no user, no control bytes)";
	else if (kc.insecure || !kc.ca)
		why = kc.insecure ? "it skips TLS verification" : "it has no certificate-authority-data";
	else if (capi_secret_server_check(cl, kc.server, "the hook does not run", &adopting, &why) < 0)
		;	/* the Secret of another cluster, or a Cluster another distro owns: no credential goes there */
	else if (kubeconfig_text(&b, cl->name, &kc, &why) == 0) {
		dir = aprintf("%s/idpmake-hook-XXXXXX", tmp && *tmp ? tmp : "/tmp");
		if (!mkdtemp(dir)) {
			why = aprintf("cannot make a private folder under %s: %s", tmp && *tmp ? tmp : "/tmp",
				      strerror(errno));
		} else {
			hk->private_dir = dir;
			hk->kubeconfig = path_join(dir, "kubeconfig");
			if (write_file_private(hk->kubeconfig, b.s, b.len) < 0)
				why = aprintf("cannot write %s: %s", hk->kubeconfig, strerror(errno));
			else
				ret = 0;
		}
	}
	if (ret < 0) {
		*err = aprintf("cluster '%s': its kube context, from %s on '%s': %s", cl->name, secret, k->management, why);
		hook_kube_done(hk);
	} else {
		hk->context = cl->name;
		hk->from = aprintf("%s on %s", secret, k->management);
	}
	memwipe(b.s, b.len);
	buf_release(&b);
	kubecred_free(&kc);
	return ret;
}

int hook_kube_prepare(const struct cluster *cl, const char *statedir, struct hook_kube *hk, const char **err)
{
	const struct kube_target *t;

	memset(hk, 0, sizeof(*hk));
	*err = NULL;
	if (cl->create.capi)
		return created(cl, hk, err);
	/* kubectl's current context, as the cluster's packages use, when none is named (the 'acting on' line) */
	if (!(hk->kubeconfig = kubectl_hook_kubeconfig(cl, statedir, err)))
		return *err ? -1 : 0;
	if ((t = kubectl_target(cl, err))) {
		hk->context = t->context;
		hk->from = t->from;
	}
	return 0;
}

void hook_kube_done(struct hook_kube *hk)
{
	if (!hk->private_dir)
		return;
	if (hk->kubeconfig)
		unlink(hk->kubeconfig);
	rmdir(hk->private_dir);
	hk->private_dir = NULL;
	hk->kubeconfig = NULL;
}
