/*
 * certtime.h - when a PEM certificate stops being valid (certtime.c): the
 * notAfter of its X.509 validity, read by libcrypto, for re-registering a
 * created cluster's client certificate before it expires (spec/capi.md,
 * credential: kubeconfig).
 */
#ifndef IDPMAKE_CERTTIME_H
#define IDPMAKE_CERTTIME_H

#include <stddef.h>

/*
 * the notAfter of the first CERTIFICATE block of the PEM text (n bytes, at
 * most 1 MiB), in Unix seconds; -1 when unreadable or before 1970
 */
long long cert_not_after(const char *pem, size_t n);

#endif
