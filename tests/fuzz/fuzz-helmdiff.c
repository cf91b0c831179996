/*
 * fuzz-helmdiff.c - libFuzzer target: helmdiff_command (review/helmdiff.c),
 * which reads a helm package's application.yaml, one side of which comes
 * back from the GitOps repository: hostile text anyone who can push may
 * have shaped, whose fields become the words of `helm template`.
 *
 * The input is the file's bytes, not NUL-terminated.  What it gives helm
 * must hold what the diff relies on: 1, 0 or -1; -1 only with a reason free
 * of control characters; with 1, `helm template RELEASE CHART` then only
 * the options helmdiff writes (--repo=http(s)://..., --version=,
 * --namespace=, --include-crds), a release and a chart that helm cannot
 * take as an option or a path (no leading '-' or '.', no '/'), and no word
 * with a control character.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/util.h"
#include "review/helmdiff.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	amalloc(1);	/* a first arena block that stays */
	base = amark();
	return 0;
}

static void no_controls(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s < 0x20 || *s == 0x7f)
			abort();
}

static void plain_word(const char *s)
{
	if (!*s || *s == '-' || *s == '.' || strchr(s, '/'))
		abort();
	no_controls(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);
	const char **argv = NULL, *values = NULL, *why = NULL;
	int r;

	memcpy(text, data, size);
	r = helmdiff_command(text, size, &argv, &values, &why);
	if (r < -1 || r > 1)
		abort();
	if (r < 0) {
		if (!why)
			abort();
		no_controls(why);
	}
	if (r > 0) {
		if (!values || strcmp(argv[0], "helm") || strcmp(argv[1], "template"))
			abort();
		plain_word(argv[2]);
		plain_word(argv[3]);
		for (size_t i = 4; argv[i]; i++) {
			const char *w = argv[i];
			if (strncmp(w, "--repo=https://", 15) && strncmp(w, "--repo=http://", 14) &&
			    strncmp(w, "--version=", 10) && strncmp(w, "--namespace=", 12) && strcmp(w, "--include-crds"))
				abort();
			if ((!strncmp(w, "--version=", 10) && w[10] == '-') || (!strncmp(w, "--namespace=", 12) && w[12] == '-'))
				abort();
			no_controls(w);
		}
	}
	free(text);
	arelease(base);
	return 0;
}
