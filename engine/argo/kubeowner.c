/*
 * kubeowner.c - who applied a deploy: kubectl package's objects before it
 * (kubeowner.h): the managedFields of what `kubectl get -o json` answers.
 */
#include <jansson.h>
#include <string.h>

#include "argo/kubeowner.h"
#include "base/buf.h"
#include "base/util.h"

#define SHOWN 5		/* objects named in a refusal; the rest are counted */
#define LEGACY "idpmake"	/* the one manager of every distro before "idpmake/DISTRO" */

const char *kubeowner_manager(const char *name)
{
	/* Kubernetes refuses a fieldManager over 128 bytes */
	return aprintf("idpmake/%.119s", name ? name : "");
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/*
 * Who owns object o: of the managedFields entries of idpmake's managers,
 * the one applied last (RFC 3339 times compare as strings, in seconds: a
 * tie with another distro's is not self's, so that neither takes it
 * silently; --adopt settles it).  A distro that took an object over with --adopt is its owner
 * from then on, though the first distro's entry stays beside its own for
 * the fields they set alike.  NULL: self, or no idpmake applied it;
 * else who ("distro 'X' ..." or an older idpmake).
 */
static const char *other_owner(const json_t *o, const char *self, int applied_before)
{
	const json_t *mf = json_object_get(json_object_get(o, "metadata"), "managedFields");
	const char *last = NULL, *when = "", *mine = NULL;
	size_t i;
	json_t *m;

	json_array_foreach(mf, i, m) {
		const char *who = str(m, "manager"), *t = str(m, "time");
		if (strcmp(who, LEGACY) && strncmp(who, "idpmake/", 8))
			continue;
		if (!strcmp(who, self)) {
			if (!mine || strcmp(t, mine) > 0)
				mine = t;
			continue;
		}
		if (!last || strcmp(t, when) > 0)
			last = who, when = t;
	}
	if (!last || (mine && strcmp(mine, when) > 0))
		return NULL;
	if (!strcmp(last, LEGACY))
		return applied_before ? NULL
				      : "an idpmake before distros had their own field manager (field manager idpmake), "
					"and this distro never applied it";
	return aprintf("distro '%s' (field manager %s)", term_safe(last + 8), term_safe(last));
}

int kubeowner_check(const char *json, size_t len, const char *self, int applied_before, int adopt,
		    struct kube_adopted *adopted, const char **err)
{
	json_error_t jerr;
	json_t *root, *items, *one[1];
	struct buf msg = BUF_INIT;
	size_t n = 0, count, i, refused = 0;
	const char *p = json;

	while (len && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++, len--;
	if (!len)
		return 0;	/* --ignore-not-found, and none is there */
	if (!(root = json_loadb(p, len, JSON_REJECT_DUPLICATES, &jerr))) {
		*err = aprintf("kubectl get -o json: not JSON (%s, at %d:%d)", term_safe(jerr.text), jerr.line,
			       jerr.column);
		return -1;
	}
	items = json_object_get(root, "items");
	one[0] = root;
	if (json_is_array(items)) {
		count = json_array_size(items);
	} else {
		count = json_is_object(root) && json_object_get(root, "metadata") ? 1 : 0;
	}
	for (i = 0; i < count; i++) {
		const json_t *o = json_is_array(items) ? json_array_get(items, i) : one[0];
		const json_t *md = json_object_get(o, "metadata");
		const char *who = json_is_object(o) ? other_owner(o, self, applied_before) : NULL, *ns;
		if (!who)
			continue;
		ns = str(md, "namespace");
		if (adopt && adopted) {
			adopted->object = agrow(adopted->object, adopted->n, sizeof(*adopted->object));
			adopted->from = agrow(adopted->from, adopted->n, sizeof(*adopted->from));
			adopted->object[adopted->n] = aprintf("%s %s%s%s", term_safe(str(o, "kind")), *ns ? term_safe(ns) : "",
							      *ns ? "/" : "", term_safe(str(md, "name")));
			adopted->from[adopted->n++] = who;
		}
		if (refused++ >= SHOWN)
			continue;
		buf_addf(&msg, "%s%s %s%s%s %s %s", n++ ? (adopt ? "; " : "\n") : "", term_safe(str(o, "kind")),
			 *ns ? term_safe(ns) : "", *ns ? "/" : "", term_safe(str(md, "name")),
			 adopt ? "from" : "was applied by", who);
	}
	json_decref(root);
	if (!refused) {
		buf_release(&msg);
		return 0;
	}
	if (adopt) {
		/* taken over on purpose: said, one line */
		if (refused > SHOWN)
			buf_addf(&msg, "; and %zu more", refused - SHOWN);
		if (adopted)
			adopted->said = aprintf("%s%s%s", adopted->said ? adopted->said : "", adopted->said ? "; " : "",
						msg.s);
		buf_release(&msg);
		return 0;
	}
	if (refused > SHOWN)
		buf_addf(&msg, "\n(and %zu more)", refused - SHOWN);
	buf_addf(&msg, "\nrefusing to apply over %s: rename %s, or `idpmake up --adopt` to take %s over on purpose",
		 refused > 1 ? "them" : "it", refused > 1 ? "them" : "it", refused > 1 ? "them" : "it");
	*err = astrdup(msg.s);
	buf_release(&msg);
	return -1;
}
