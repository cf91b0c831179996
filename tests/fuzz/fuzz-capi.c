/*
 * fuzz-capi.c - libFuzzer target: the two parsers of what a cluster made
 * through Cluster API hands idpmake (capi.h), both hostile input:
 *   byte 0 even: capi_status_parse (argo/argocapi.c), a Cluster's manifest
 *                as Argo CD's resource API returns it;
 *   byte 0 odd:  kubecred_parse (argo/argoreg.c) on the kubeconfig of a
 *                Secret NAME-kubeconfig, with no folder (it may name no file).
 * The rest of the input is the text, not NUL-terminated.
 *
 * What must hold: no read outside the text; the status's uid is NULL or a
 * short token of [-0-9A-Za-z]; its phase and why are set and hold no
 * control character; a kubeconfig is either refused with a message and
 * nothing kept, or gives a server and a token or a client certificate and
 * key, and never reads a file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/util.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	amalloc(1);	/* a first arena block that stays */
	base = amark();
	return 0;
}

static void printable(const char *s)
{
	if (!s)
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (!size)
		return 0;
	text = malloc(size > 1 ? size - 1 : 1);	/* exactly the bytes: a read past them is ASan's */
	memcpy(text, data + 1, size - 1);
	if (!(data[0] & 1)) {
		struct capi_status st;
		if (capi_status_parse(text, size - 1, &st) == 0) {
			if (st.uid) {
				size_t n = strlen(st.uid);
				if (!n || n > 64 || strspn(st.uid, "-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != n)
					abort();
			}
			printable(st.phase);
			printable(st.why);
			if (st.fatal)
				printable(st.fatal);
		}
	} else {
		struct kubecred k;
		const char *err = NULL;
		if (kubecred_parse("Secret fuzz/x-kubeconfig", NULL, text, size - 1, NULL, &k, &err) == 0) {
			if (!k.server || (!k.token && !(k.cert && k.key)))
				abort();
			kubecred_free(&k);
		} else if (!err || k.ca || k.cert || k.key || k.token) {
			abort();
		}
	}
	free(text);
	arelease(base);
	return 0;
}
