/*
 * fuzz-argocd.c - libFuzzer target: the Argo CD answers the client reads.
 *
 * The input is an HTTP status line and a body:
 *
 *     STATUS\n  BODY (JSON, or whatever a server or a proxy sends)
 *
 * argocd_answer (argocd.c) decodes it as request() does and reads it as
 * get_app, wait_done (op_done, the state line, the sync and health
 * failures, the timeout message) and the error paths (api_error) do.  The
 * token must never come out unmasked.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/util.h"

static struct distro d;
static struct argocd a;
static struct amark base;
static const char token[] = "eyJhbGciOi.fuzz-secret-token.c2lnbmF0dXJl";

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	d.argocd.namespace = "argocd";
	d.argocd.project = "default";
	a.d = &d;
	a.base = "https://argocd.example.com";
	a.auth = xstrdup("Authorization: Bearer eyJhbGciOi.fuzz-secret-token.c2lnbmF0dXJl");
	a.token = a.auth + strlen("Authorization: Bearer ");
	a.token_jwt = 1;
	amalloc(1);	/* a first arena block that stays: no 1 MiB malloc and free per input */
	base = amark();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	long status = 200;
	const char *body = (const char *)data, *out;
	size_t len = size;

	if (nl && nl - data <= 4) {
		status = 0;
		for (const uint8_t *p = data; p < nl; p++)
			status = status * 10 + (*p >= '0' && *p <= '9' ? *p - '0' : 0);
		body = (const char *)nl + 1;
		len = size - (size_t)(nl + 1 - data);
	}
	out = argocd_answer(&a, "app", status, body, len);
	if (!out || strstr(out, token))
		abort();	/* the token unmasked */
	arelease(base);
	return 0;
}
