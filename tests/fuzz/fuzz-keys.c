/*
 * fuzz-keys.c - libFuzzer target: the keys index parser (remotekeys.c),
 * which reads .idpmake/keys from the GitOps repository's tip: hostile text
 * anyone who can push may have written.
 *
 * The input is the index's bytes.  remotekeys_parse must keep only lines of
 * the documented shape without reading outside the text, and what it keeps
 * must hold the invariants an empty-state run relies on: folders clean
 * relative paths (no empty, ".", ".." or ".git" component, no control
 * character, not the index's own folder), strictly sorted and unique (a
 * folder named twice is dropped), a key that is not zero, a tree of 40
 * lower-case hex digits; remotekeys_find finds each.
 */
#define _GNU_SOURCE	/* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/hash.h"
#include "git/remotekeys.h"
#include "base/util.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	amalloc(1);	/* a first arena block that stays */
	base = amark();
	return 0;
}

static int clean(const char *p)
{
	if (!*p || *p == '/' || p[strlen(p) - 1] == '/')
		return 0;
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return 0;
	while (*p) {
		size_t n = strcspn(p, "/");
		if (!n || (n == 1 && *p == '.') || (n == 2 && !memcmp(p, "..", 2)) || (n == 4 && !strncasecmp(p, ".git", 4)) ||
		    (n == 8 && !memcmp(p, ".idpmake", 8)))
			return 0;
		p += n + (p[n] == '/');
	}
	return 1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the parser gets a blob's bytes, not NUL-terminated: a copy of exactly that size */
	char *text = malloc(size ? size : 1);
	struct remotekey *v;
	size_t n;

	memcpy(text, data, size);
	remotekeys_parse(text, size, &v, &n);
	for (size_t i = 0; i < n; i++) {
		if (!clean(v[i].folder) || hash_zero(v[i].key) || strlen(v[i].tree) != 40 ||
		    strspn(v[i].tree, "0123456789abcdef") != 40)
			abort();
		if (i && strcmp(v[i - 1].folder, v[i].folder) >= 0)
			abort();	/* sorted, each folder once */
		if (remotekeys_find(v, n, v[i].folder) != &v[i])
			abort();
		/* the folder's text lies in the input, as written there */
		if (!memmem(data, size, v[i].folder, strlen(v[i].folder)))
			abort();
	}
	free(text);
	arelease(base);
	return 0;
}
