/*
 * pem.h - the checks of CLUSTER:register's certificate and key settings
 * (argoreg.c): a CA or client certificate is PEM CERTIFICATE blocks only,
 * a client key one PEM private key.
 */
#ifndef IDPMAKE_PEM_H
#define IDPMAKE_PEM_H

#include <stddef.h>

enum pem_want { PEM_CERT, PEM_KEY };

#define PEM_CAP (1 << 20)	/* a CA bundle is some hundred KiB */

/*
 * NULL when the n bytes at s (NUL-terminated after them) are PEM holding
 * what `want` asks for; else why not (a static or arena string), never
 * quoting s.
 */
const char *pem_check(const char *s, size_t n, enum pem_want want);

/* base64 text decoded (malloc'd, NUL-terminated; *n its length), or NULL when it is not base64 */
unsigned char *unbase64(const char *s, size_t *n);

#endif
