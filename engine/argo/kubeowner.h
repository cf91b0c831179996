/* kubeowner.h - who applied the objects a deploy: kubectl package is about to apply */
#ifndef IDPMAKE_KUBEOWNER_H
#define IDPMAKE_KUBEOWNER_H

#include <stddef.h>

/*
 * A distro applies its deploy: kubectl objects with the field manager
 * "idpmake/DISTRO" (issue 19 "Ownership"); idpmake before that used
 * "idpmake" for every distro.  kubeowner_check reads the answer of
 * `kubectl get -o json --ignore-not-found` over the objects (a List, one
 * object, or nothing: hostile input, read with jansson, bounded by its
 * caller's capture) and refuses, unless adopt, an object whose owner is
 * not this distro.  The owner is the idpmake manager in its managedFields
 * that applied last (in a tie, another's):
 *   - another distro's, "idpmake/OTHER": refused;
 *   - the unnamed "idpmake", when this step has never applied
 *     (applied_before 0): an older idpmake of some distro made it, refused.
 * Managers that are not idpmake's (kubectl by hand, helm, controllers) are
 * not owners here: a re-apply takes their fields, as kubectl does with
 * --force-conflicts.
 * 0: none refused; -1 with *err (arena, one line per object, at most a
 * few, names made safe for a terminal, with the ways out); an answer that
 * is not JSON is -1 too.  With adopt, what would have been refused is
 * added to *adopted (unless NULL), for the run to say and to sum up.
 */
struct kube_adopted {
	const char *said;		/* "KIND NS/NAME from OWNER; ...", one line, at most a few named, or NULL */
	const char **object, **from;	/* each object ("KIND NS/NAME") and its owner, made safe for a terminal */
	size_t n;
};
int kubeowner_check(const char *json, size_t len, const char *self, int applied_before, int adopt,
		    struct kube_adopted *adopted, const char **err);

/* the field manager of distro `name`: "idpmake/NAME" (arena; at most 128 bytes, as Kubernetes allows) */
const char *kubeowner_manager(const char *name);

#endif
