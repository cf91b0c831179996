/* create.h - clusters.NAME.create: a cluster idpmake makes itself (create.c) */
#ifndef IDPMAKE_CREATE_H
#define IDPMAKE_CREATE_H

#include "distro/model.h"
#include "base/yaml.h"

#define KIND_HOST_PORT 8443	/* idpbuilder's: https://cnoe.localtest.me:8443 */

/*
 * Read `create` (n may be NULL) into c->create, with located errors:
 *
 *   create:
 *     kind: {name: localdev, host-port: 8443, image: kindest/node:v1.33.1}
 *
 * The only kind of creation so far is a local kind cluster (the CNOE
 * bootstrap, issue 24): a step CLUSTER:kind makes it when it is absent,
 * and every kubectl of the cluster goes to its context kind-NAME.  A
 * created cluster takes no kube-context (it has its own), no register
 * (Argo CD runs inside it: its server is https://kubernetes.default.svc)
 * and no server or name other than that one.
 */
void conv_create(struct cluster *c, const struct ynode *n);

/*
 * Read `tls` (n may be NULL) into d->tls:
 *
 *   tls:
 *     hosts: ["${host}", "*.${host}"]
 *
 * A CA and a certificate for those names that idpmake makes (the step
 * `tls`, run/tlscert.c), keeps 0600 in STATE/tls, gives the hooks
 * (IDPMAKE_TLS_CERT, IDPMAKE_TLS_KEY, IDPMAKE_TLS_CA) and trusts in its
 * own git and Argo CD clients where the distro gives no ca-file.
 */
void conv_tls(struct distro *d, const struct ynode *n);
/* does hook hk ask for the certificate (IDPMAKE_TLS_CERT, _KEY or _CA in its env)?  Then it gets it,
 * runs after the step tls, and again when the certificate changes */
int tls_hook_uses(const struct hook *hk);
/* is s a DNS name a certificate may name (a leading "*." allowed), once expanded? */
int tls_host_ok(const char *s);

/* the kube context kind gives cluster c (kind-NAME), or NULL when idpmake does not create it */
const char *create_context(const struct cluster *c);

#endif
