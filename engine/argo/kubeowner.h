/* kubeowner.h - who applied the objects a deploy: kubectl package is about to apply */
#ifndef IDPMAKE_KUBEOWNER_H
#define IDPMAKE_KUBEOWNER_H

#include <stddef.h>

/*
 * A distro applies its deploy: kubectl objects with the field manager
 * "idpmake/DISTRO" (issue 19 "Ownership"); idpmake before that used
 * "idpmake" for every distro.  Each object it applies carries its mark,
 * the annotation idpmake.io/distro: DISTRO (kubeowner_mark, written into
 * the apply's copy of the render, never into the render itself), so that
 * whose an object is does not rest on managedFields times, which a real
 * apiserver leaves unwritten when an apply changes nothing
 * (kubernetes/kubernetes#127938; issue 33 #8).
 *
 * kubeowner_check reads the answer of `kubectl get -o json
 * --ignore-not-found` over the objects (a List, one object, or nothing:
 * hostile input, read with jansson, bounded by its caller's capture) and
 * refuses, unless adopt, an object whose owner is not this distro.  The
 * owner is the distro its mark names; an object without a mark (an
 * idpmake before the mark applied it) is owned by the idpmake manager in
 * its managedFields that applied last (in a tie, another's):
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

/* the annotation that marks an object as a distro's: "idpmake.io/distro" */
extern const char KUBEOWNER_MARK[];

/*
 * Mark the parsed documents of one file (trees in pool p) as the objects of
 * the distro whose field manager is self ("idpmake/NAME"): each document
 * that is an object (apiVersion, kind, a metadata map) gets the annotation
 * KUBEOWNER_MARK: NAME, replacing any value it had.  When any is marked,
 * every document is emitted to out (sorted keys, "---" between them) and
 * the count is returned; 0: none is an object, out untouched; -1: the
 * emitter failed.
 */
struct buf;
struct ynode;
struct ypool;
int kubeowner_mark(struct ypool *p, struct ynode **docs, size_t n, const char *self, struct buf *out);

#endif
