/*
 * create.c - what idpmake makes for the platform, as written (create.h):
 * clusters.NAME.create (the step that makes it: run/kindcluster.c) and
 * the distro's tls certificate (run/tlscert.c).
 */
#include <string.h>

#include "distro/capi.h"
#include "distro/conv.h"
#include "distro/create.h"
#include "base/util.h"

/* kind's cluster names: a DNS label, which its node containers and the context kind-NAME take */
static int kind_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (!n || n > 50 || s[0] == '-' || s[n - 1] == '-')
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '-'))
			return 0;
	return 1;
}

/* a node image as kind takes it: REPOSITORY[:TAG][@DIGEST], nothing a shell or an option could read */
static int image_ok(const char *s)
{
	if (!*s || *s == '-' || strlen(s) > 255)
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
		      strchr("._-/:@", *s)))
			return 0;
	return 1;
}

void conv_create(struct cluster *c, const struct ynode *n)
{
	const struct ynode *k, *x;

	if (!n || yisnull(n))
		return;
	if (!want(n, Y_MAP, "create"))
		return;
	if (!yget(n, "kind") && (yget(n, "management") || yget(n, "class") || yget(n, "spec"))) {
		conv_capi(c, n);	/* through Cluster API (capi.c) */
		return;
	}
	CHECK_KEYS(n, "create", "kind", "management");
	c->create.loc = n->loc;
	if (!(k = yget(n, "kind")) || yisnull(k)) {
		loc_error(n->loc, "create needs 'kind' (a local kind cluster: create: {kind: {name: NAME}}) or 'management' "
			  "(a cluster Cluster API makes: create: {management: MGMT, class: {package: P, name: C}, version: V})");
		return;
	}
	if (!want(k, Y_MAP, "create.kind"))
		return;
	CHECK_KEYS(k, "create.kind", "name", "host-port", "image");
	c->create.kind = c->name;
	if ((x = yget(k, "name")) && str(x, "name")) {
		if (!kind_name_ok(x->s))
			loc_error(x->loc, "create.kind.name '%s' is not a kind cluster name (lower-case letters, "
				  "digits and '-', at most 50)", x->s);
		c->create.kind = x->s;
	} else if (!kind_name_ok(c->name)) {
		loc_error(k->loc, "cluster '%s' is no kind cluster name: give create.kind.name", c->name);
	}
	c->create.host_port = integer(yget(k, "host-port"), "host-port", KIND_HOST_PORT);
	if ((x = yget(k, "host-port")) && (c->create.host_port < 1 || c->create.host_port > 65535))
		loc_error(x->loc, "host-port must be a port, 1 to 65535");
	if ((x = yget(k, "image")) && str(x, "image")) {
		if (!image_ok(x->s))
			loc_error(x->loc, "create.kind.image '%s' is not an image reference", x->s);
		c->create.image = x->s;
	}
	if (c->kube_context)
		loc_error(n->loc, "cluster '%s' is created (create.kind) and has kube-context '%s': a created cluster "
			  "has its own context, kind-%s; drop one (create: null uses the context)", c->name,
			  c->kube_context, c->create.kind);
	if (c->argo_name || (c->server && strcmp(c->server, "https://kubernetes.default.svc")))
		loc_error(n->loc, "cluster '%s' is created (create.kind): Argo CD runs inside it, at "
			  "https://kubernetes.default.svc; drop '%s'", c->name, c->argo_name ? "name" : "server");
}

const char *create_context(const struct cluster *c)
{
	return c->create.kind ? aprintf("kind-%s", c->create.kind) : NULL;
}

int tls_host_ok(const char *s)
{
	size_t n;

	if (!strncmp(s, "*.", 2))
		s += 2;
	n = strlen(s);
	if (!n || n > 253 || *s == '.' || *s == '-' || s[n - 1] == '.' || strstr(s, ".."))
		return 0;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '-' ||
		      *s == '.'))
			return 0;
	return 1;
}

void conv_tls(struct distro *d, const struct ynode *n)
{
	const struct ynode *h;

	if (!n || yisnull(n) || !want(n, Y_MAP, "tls"))
		return;
	CHECK_KEYS(n, "tls", "hosts");
	d->tls.loc = n->loc;
	d->tls.hosts = strs(h = yget(n, "hosts"), "hosts");
	if (!d->tls.hosts.n)
		loc_error(h ? h->loc : n->loc, "tls needs 'hosts': the names its certificate is for");
	for (size_t i = 0; i < d->tls.hosts.n; i++)
		if (!strchr(d->tls.hosts.v[i], '$') && !tls_host_ok(d->tls.hosts.v[i]))
			loc_error(d->tls.hosts.loc[i], "tls host '%s' is not a DNS name (a leading '*.' is allowed)",
				  d->tls.hosts.v[i]);
}

int tls_hook_uses(const struct hook *hk)
{
	for (size_t i = 0; hk && i < hk->env.n; i++)
		if (!strncmp(hk->env.v[i], "IDPMAKE_TLS_", 12))
			return 1;
	return 0;
}
