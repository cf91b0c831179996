/*
 * certmake.h - a CA constrained to some DNS names, and server certificates
 * it signs for them (certmake.c, libcrypto): what the step tls makes
 * (run/tlscert.c).
 *
 * Keys are RSA 2048, written as unencrypted PKCS#8 PEM, 0600 from their
 * creation, fsynced and renamed into place; certificates are X.509 v3,
 * SHA-256, a random 127-bit serial.  Names are DNS names as tls_host_ok
 * checks them: letters, digits, '-' and '.', a leading "*." allowed.
 */
#ifndef IDPMAKE_CERTMAKE_H
#define IDPMAKE_CERTMAKE_H

#include <stddef.h>

/*
 * A self-signed CA named CN, valid `days` from now, to key_path and
 * crt_path: basicConstraints critical CA:TRUE pathlen:0, keyUsage critical
 * keyCertSign cRLSign, subject key identifier, and critical
 * nameConstraints:
 *   permitted  DNS: each name, a "*.x" name as x (which permits x and
 *              every name below it, at any depth: nameConstraints cannot
 *              say "one label"; certmake_leaf refuses deeper ones);
 *              URI and email: .invalid alone, which no real name is under;
 *   excluded   every IPv4 and IPv6 address; URI and email: the empty name,
 *              which RFC 5280 verifiers that read it as every name (Go's)
 *              also refuse.
 * 0, or -1 with *err.
 */
int certmake_ca(const char *crt_path, const char *key_path, const char *cn, const char *const *names, size_t n,
		int days, const char **err);

/* is `name` one of ca_names, or one label below a "*.x" of them (a.x, not a.b.x nor x)? */
int certmake_covers(const char *const *ca_names, size_t nca, const char *name);

/*
 * A server certificate for names (subjectAltName DNS, the first also the
 * CN when it fits) signed by the CA in ca_crt/ca_key, valid `days`, to
 * key_path and crt_path: basicConstraints critical CA:FALSE, keyUsage
 * critical digitalSignature keyEncipherment, extendedKeyUsage serverAuth,
 * subject and authority key identifiers.  Refused, nothing written, when
 * a name is not covered by ca_names (certmake_covers: the names the CA was
 * made for), or the key is not the certificate's.  0, or -1 with *err.
 */
int certmake_leaf(const char *crt_path, const char *key_path, const char *ca_crt, const char *ca_key,
		  const char *const *ca_names, size_t nca, const char *const *names, size_t n, int days,
		  const char **err);

#endif
