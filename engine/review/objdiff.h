/*
 * objdiff.h - a field-level diff of two Kubernetes objects.
 *
 * Objects are jansson trees: a rendered file is read by libyaml (yaml.c)
 * and typed as Kubernetes reads YAML (objdiff_from_yaml); a live object
 * comes from Argo CD as JSON.  Both are written back as YAML with sorted
 * keys by libyaml's emitter (objdiff_yaml), and the two texts are compared
 * line by line by libgit2's diff, so that the same object always gives the
 * same lines and a changed field shows as its own -/+ lines.
 */
#ifndef IDPMAKE_OBJDIFF_H
#define IDPMAKE_OBJDIFF_H

#include <jansson.h>
#include <stddef.h>

#include "base/buf.h"

struct ynode;

/* a YAML tree as JSON: plain scalars typed (null, bool, int, float), the rest strings; a new reference */
json_t *objdiff_from_yaml(const struct ynode *n);
/*
 * The one object of a rendered file (its first document) as JSON, or NULL
 * with a message (`name` says which file) when it is not YAML or empty.
 */
json_t *objdiff_parse(const char *name, const char *text, size_t len);
/* v as YAML, keys sorted, appended to out; 0 or -1 */
int objdiff_yaml(json_t *v, struct buf *out);
/*
 * What of `live` the target sets (Argo CD: fields only live do not count):
 * maps keep the target's keys, lists are projected item by item; a new
 * reference, NULL when live is NULL.  With `last` (the live object's
 * last-applied configuration, or NULL), a field live and in last but no
 * longer in the target is kept too (projected onto last), as gitops-engine's
 * three-way diff sees it: a sync removes it.  Fields only live and not in
 * last (the server's, a controller's) still do not count.
 */
json_t *objdiff_project(json_t *live, json_t *target, json_t *last);
/* remove the field an RFC 6901 JSON pointer ("/spec/replicas") names, if there is one */
void objdiff_drop(json_t *obj, const char *pointer);
/*
 * The unified diff (3 lines of context) of a's YAML and b's (either NULL:
 * an object created or removed), labelled la and lb: "--- la", "+++ lb",
 * "@@ ... @@" and " ", "-", "+" lines, each appended to `lines` (a JSON
 * array) as a string without its newline.  The number of - and + lines (0:
 * the same), or -1 with a message.
 */
int objdiff_lines(json_t *a, json_t *b, const char *la, const char *lb, json_t *lines);
/*
 * Cluster-scoped kinds, for an object Argo CD does not list yet (a create):
 * Kubernetes' own, and those of a CustomResourceDefinition with scope:
 * Cluster that objdiff_note_crd recorded in `crds` ("GROUP/Kind": true).
 */
void objdiff_note_crd(json_t *obj, json_t *crds);
/*
 * The YAML of `text` (every document: "---" between them) with each core
 * Secret's data and stringData value replaced by "(hidden)", or "(hidden,
 * differs)" where `other` (the other side's text, or NULL) holds the same
 * key with another value: an arena string (*outlen its length), or NULL
 * when `text` holds no Secret (objdiff_hide_secrets).  Whether it does is
 * decided on the parsed apiVersion and kind, never on the text; a text
 * that does not parse is hidden whole.
 */
const char *objdiff_mask_secret(const char *name, const char *text, size_t len, const char *other, size_t olen,
				size_t *outlen);
/* both sides of a text diff with their Secrets' values hidden, as above, in place */
void objdiff_mask_pair(const char *name, const char **old, size_t *oldlen, const char **new, size_t *newlen);
/*
 * Hide in place the values of every core Secret at or under v (a List's
 * items too): data and stringData values (the whole field where it is not a
 * map) and kubectl's last-applied-configuration annotation, as "(hidden)", or
 * "(hidden, differs)" where ov (the other side at the same place, or NULL)
 * holds another value; with annotation_only, the annotation alone.  The
 * number of Secrets found.
 */
int objdiff_hide_secrets(json_t *v, json_t *ov, int annotation_only);
int objdiff_cluster_scoped(const char *group, const char *kind, json_t *crds);

#endif
