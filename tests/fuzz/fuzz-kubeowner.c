/*
 * fuzz-kubeowner.c - libFuzzer target: kubeowner_check (argo/kubeowner.c),
 * which reads what `kubectl get -o json --show-managed-fields` answered
 * about the objects a deploy: kubectl package is about to apply: the
 * cluster's objects, hostile text anyone who can write them may have
 * shaped (names, managers, times).
 *
 * The input is that answer's bytes, not NUL-terminated.  The check must
 * not read outside them, and its verdict must hold what the apply relies
 * on: 0 or -1; -1 only with a message; a message free of control
 * characters but its line breaks, of a bounded number of lines (five
 * objects named, then a count, then the way out); with adopt, only an
 * answer that is not JSON is refused; an answer that names no idpmake
 * manager (nor escapes one) is never refused.
 */
#define _GNU_SOURCE	/* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argo/kubeowner.h"
#include "base/util.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	amalloc(1);	/* a first arena block that stays */
	base = amark();
	return 0;
}

static void verdict(const char *text, size_t size, int applied_before, int adopt)
{
	const char *err = NULL;
	struct kube_adopted adopted = { 0 };
	int rc = kubeowner_check(text, size, "idpmake/self", applied_before, adopt, &adopted, &err), lines = 1;

	if (rc != 0 && rc != -1)
		abort();
	if (adopted.said || adopted.n) {
		/* what --adopt took over: only with adopt, one line, safe for a terminal; each object too */
		if (!adopt || rc || !adopted.said || !adopted.n)
			abort();
		for (const char *p = adopted.said; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				abort();
		for (size_t i = 0; i < adopted.n; i++)
			for (const char *p = adopted.object[i]; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					abort();
	}
	if (rc == 0)
		return;
	if (!err)
		abort();
	for (const char *p = err; *p; p++) {
		if (*p == '\n')
			lines++;
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	}
	if (lines > 7)
		abort();
	if (strncmp(err, "kubectl get -o json: not JSON", 29)) {
		/* a refusal of an object: not with adopt, and only when an idpmake manager is named */
		if (adopt || (!memmem(text, size, "idpmake", 7) && !memchr(text, '\\', size)))
			abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);

	memcpy(text, data, size);
	for (int i = 0; i < 4; i++)
		verdict(text, size, i & 1, i >> 1);
	free(text);
	arelease(base);
	return 0;
}
