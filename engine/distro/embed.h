/* embed.h - files built into the binary (rules/ and distros/), see embed.c */
#ifndef IDPMAKE_EMBED_H
#define IDPMAKE_EMBED_H

#include <stddef.h>

struct embedded {
	const char *path;		/* e.g. "rules/kustomize.yaml" */
	const unsigned char *data;
	size_t len;
};

extern const struct embedded embedded_files[];
extern const size_t embedded_count;

const struct embedded *embedded_find(const char *path);

#endif
