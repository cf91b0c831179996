/*
 * kubeowner.c - whose a deploy: kubectl package's objects are (kubeowner.h):
 * the mark idpmake writes on each object it applies, or, on an object an
 * idpmake before the mark applied, the managedFields of what
 * `kubectl get -o json` answers.
 */
#include <jansson.h>
#include <string.h>

#include "argo/kubeowner.h"
#include "base/buf.h"
#include "base/util.h"
#include "base/yaml.h"

#define SHOWN 5		/* objects named in a refusal; the rest are counted */
#define LEGACY "idpmake"	/* the one manager of every distro before "idpmake/DISTRO" */
#define PREFIX "idpmake/"	/* a distro's manager: PREFIX DISTRO */

const char KUBEOWNER_MARK[] = "idpmake.io/distro";

const char *kubeowner_manager(const char *name)
{
	/* Kubernetes refuses a fieldManager over 128 bytes */
	return aprintf(PREFIX "%.119s", name ? name : "");
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/*
 * Who owns object o.  Its mark, when it has one: the distro it names (a
 * distro that took the object over with --adopt wrote its own).  Without
 * a mark (an idpmake before it applied the object): of the managedFields
 * entries of idpmake's managers, the one applied last (RFC 3339 times
 * compare as strings, in seconds: a tie with another distro's is not
 * self's, so that neither takes it silently; --adopt settles it).  A
 * time is not proof (kubernetes/kubernetes#127938: an apply that changes
 * nothing stamps none), which is why the mark decides when it is there.
 * NULL: self, or no idpmake applied it; else who ("distro 'X' ..." or an
 * older idpmake).
 */
static const char *other_owner(const json_t *o, const char *self, int applied_before)
{
	const json_t *md = json_object_get(o, "metadata"), *mf = json_object_get(md, "managedFields");
	const char *last = NULL, *when = "", *mine = NULL;
	const char *mark = json_string_value(json_object_get(json_object_get(md, "annotations"), KUBEOWNER_MARK));
	size_t i;
	json_t *m;

	if (mark && *mark) {
		if (!strncmp(self, PREFIX, strlen(PREFIX)) && !strcmp(mark, self + strlen(PREFIX)))
			return NULL;
		return aprintf("distro '%s' (its annotation %s)", term_safe(mark), KUBEOWNER_MARK);
	}
	json_array_foreach(mf, i, m) {
		const char *who = str(m, "manager"), *t = str(m, "time");
		if (strcmp(who, LEGACY) && strncmp(who, PREFIX, strlen(PREFIX)))
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
	return aprintf("distro '%s' (field manager %s)", term_safe(last + strlen(PREFIX)), term_safe(last));
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

/* does doc read as a Kubernetes object with a metadata map, whose annotations (none, null or a map) take a key? */
static struct ynode *annotations_of(struct ypool *p, struct ynode *doc)
{
	struct ynode *md, *an;

	if (!doc || doc->type != Y_MAP || !yget(doc, "apiVersion") || !yget(doc, "kind") ||
	    !(md = yget(doc, "metadata")) || md->type != Y_MAP)
		return NULL;
	if ((an = yget(md, "annotations")) && an->type == Y_MAP)
		return an;
	if (an && !yisnull(an))
		return NULL;	/* not a map: the apiserver refuses the object, unmarked */
	an = ynew(p, Y_MAP, md->loc);
	yset(p, md, yscalar(p, "annotations", YS_PLAIN, md->loc), an);
	return an;
}

int kubeowner_mark(struct ypool *p, struct ynode **docs, size_t n, const char *self, struct buf *out)
{
	const char *name = !strncmp(self, PREFIX, strlen(PREFIX)) ? self + strlen(PREFIX) : self;
	int marked = 0;

	for (size_t i = 0; i < n; i++) {
		struct ynode *an = annotations_of(p, docs[i]);
		if (an) {
			/* quoted: a distro named "true" or "1" stays a string, as an annotation must be */
			yset(p, an, yscalar(p, KUBEOWNER_MARK, YS_PLAIN, an->loc), yscalar(p, name, YS_QUOTED, an->loc));
			marked++;
		}
	}
	if (!marked)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (i)
			buf_adds(out, "---\n");
		if (yaml_emit(docs[i], out) < 0)
			return -1;
	}
	return marked;
}
