/* unexpanded.h - validate's warning about ${name} left as it is in a manifests package's files */
#ifndef IDPMAKE_UNEXPANDED_H
#define IDPMAKE_UNEXPANDED_H

#include "graph/graph.h"

/*
 * A manifests package's files are applied as they are: ${name} is expanded
 * in distro.yaml, never in them (vars reach them through rewrite: rules).
 * For render step s of such a package from a path, its scanned tree
 * (s->tree) read: each ${name} (a letter or '_', then letters, digits,
 * '_', '.', '-') is a "FILE:LINE:COL: warning:" on stderr, naming the
 * variable when the distro has one of that name, at most a few per
 * package (then a count), once per package however many clusters it
 * goes to.  A package with rewrite rules is not looked at:
 * a rule may be what expands them.  Returns the number found.
 */
int unexpanded_warn(const struct step *s, const struct distro *d);

#endif
