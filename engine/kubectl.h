/* kubectl.h - `deploy: kubectl` packages: their sync step applies the render with kubectl */
#ifndef IDPMAKE_KUBECTL_H
#define IDPMAKE_KUBECTL_H

#include "graph.h"

/* the key of a kubectl package's sync step, from its render's output */
struct hash kubectl_key(const struct step *s, struct hash output);
/* apply the unpacked render in `dir` (NULL: could not unpack) with kubectl apply --server-side: 0, or -1 with *err */
int kubectl_apply(const struct step *s, const char *dir, const char **err);

#endif
