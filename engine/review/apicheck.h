/*
 * apicheck.h - validate --live (issue 8 §7): every rendered object's
 * apiVersion and kind against what its destination cluster serves, before
 * anything is pushed.
 *
 * A kind is known when
 *   1. Argo CD's cluster info lists it: GET /api/v1/clusters/SERVER (or
 *      NAME?id.type=name), info.apiVersions.  Argo CD fills that list with
 *      APIResourcesToStrings(resources, true): every "GROUP/VERSION" ("v1"
 *      for the core group) and every "GROUP/VERSION/Kind".  An older Argo CD
 *      lists group/versions only; then a served group/version is all that
 *      can be checked;
 *   2. or a CustomResourceDefinition (spec.group, spec.versions[].name,
 *      spec.names.kind) is rendered for the same cluster by the package
 *      itself (Argo CD applies CRDs first) or by a package that comes before
 *      it in needs order: its sync step is an ancestor of this package's.
 *
 * Anything else is an error naming the object, the package and the cluster,
 * with "did you mean" for a near miss (edit distance on the kind; an equal
 * kind in another group/version), and naming the package that renders the
 * CRD when that package does not come before.
 */
#ifndef IDPMAKE_APICHECK_H
#define IDPMAKE_APICHECK_H

#include <stddef.h>

struct ctx;

/* 0 every kind is known, 1 one is not (each printed), 2 Argo CD could not be asked */
int apicheck_live(struct ctx *c);

#endif
