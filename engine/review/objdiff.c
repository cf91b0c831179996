/*
 * objdiff.c - a field-level diff of two objects (objdiff.h): jansson trees
 * written as YAML by libyaml's emitter, compared by libgit2's line diff.
 */
#include <errno.h>
#include <git2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "review/objdiff.h"
#include "base/util.h"
#include "base/yaml.h"

/* a plain scalar as Kubernetes reads it; quoted and block scalars are strings */
static json_t *scalar(const struct ynode *n)
{
	int truth = 0;
	enum ykind k = yresolve(n, &truth);
	json_t *v = NULL;

	if (k == YK_NULL)
		return json_null();
	if (k == YK_BOOL)
		return json_boolean(truth);
	if (k == YK_INT || k == YK_FLOAT) {
		char *digits = xmalloc(n->slen + 1), *d = digits, *end;
		const char *s = digits;
		int base = 0;
		for (size_t i = 0; i < n->slen; i++)	/* YAML allows '_' between digits */
			if (n->s[i] != '_')
				*d++ = n->s[i];
		*d = 0;
		errno = 0;
		if (k == YK_INT) {
			long long i;
			if (!strncmp(s, "0o", 2) || !strncmp(s, "0b", 2)) {
				base = s[1] == 'o' ? 8 : 2;
				s += 2;
			}
			i = strtoll(s, &end, base);
			if (!*end && !errno)
				v = json_integer(i);
		} else {
			double f = strtod(s, &end);
			if (!*end && !errno)
				v = json_real(f);
		}
		free(digits);
	}
	return v ? v : json_stringn(n->s, n->slen);
}

json_t *objdiff_from_yaml(const struct ynode *n)
{
	json_t *o;

	if (!n)
		return json_null();
	switch (n->type) {
	case Y_SCALAR:
		return scalar(n);
	case Y_SEQ:
		o = json_array();
		for (size_t i = 0; i < n->n; i++)
			json_array_append_new(o, objdiff_from_yaml(n->v[i]));
		return o;
	default:
		o = json_object();
		for (size_t i = 0; i < n->n; i++)
			json_object_set_new(o, n->k[i]->s, objdiff_from_yaml(n->v[i]));
		return o;
	}
}

json_t *objdiff_parse(const char *name, const char *text, size_t len)
{
	struct ypool *p = ypool_new();
	struct ynode **docs = NULL;
	size_t ndocs = 0;
	json_t *o = NULL;

	if (yaml_parse(p, name, text, len, &docs, &ndocs) == 0) {
		if (ndocs && docs[0]->type == Y_MAP)
			o = objdiff_from_yaml(docs[0]);
		else
			error("%s: not a Kubernetes object", name);
	}
	ypool_free(p);	/* docs too */
	return o;
}

static struct ynode *toyaml(struct ypool *p, json_t *v)
{
	static const struct loc none = { 0 };
	struct ynode *n;
	const char *key;
	json_t *item;
	size_t i;

	switch (json_typeof(v)) {
	case JSON_OBJECT:
		n = ynew(p, Y_MAP, none);
		json_object_foreach(v, key, item)
			yset(p, n, yscalar(p, key, YS_QUOTED, none), toyaml(p, item));
		return n;
	case JSON_ARRAY:
		n = ynew(p, Y_SEQ, none);
		json_array_foreach(v, i, item)
			ypush(p, n, toyaml(p, item));
		return n;
	case JSON_STRING:
		/* quoted only where plain text would read as another type (yaml.c's emitter decides) */
		return yscalar(p, json_string_value(v), strchr(json_string_value(v), '\n') ? YS_BLOCK : YS_QUOTED, none);
	case JSON_INTEGER:
		return yscalar(p, aprintf("%" JSON_INTEGER_FORMAT, json_integer_value(v)), YS_PLAIN, none);
	case JSON_REAL: {
		char *s = json_dumps(v, JSON_ENCODE_ANY);
		n = yscalar(p, s ? s : "0", YS_PLAIN, none);
		free(s);
		return n;
	}
	case JSON_TRUE:
		return yscalar(p, "true", YS_PLAIN, none);
	case JSON_FALSE:
		return yscalar(p, "false", YS_PLAIN, none);
	default:
		return yscalar(p, "null", YS_PLAIN, none);
	}
}

int objdiff_yaml(json_t *v, struct buf *out)
{
	struct ypool *p = ypool_new();
	int r = yaml_emit(toyaml(p, v), out);

	ypool_free(p);
	return r;
}

json_t *objdiff_project(json_t *live, json_t *target, json_t *last)
{
	const char *key;
	json_t *v, *out;
	size_t i;

	if (!live)
		return NULL;
	if (json_is_object(live) && json_is_object(target)) {
		out = json_object();
		json_object_foreach(target, key, v) {
			json_t *lv = json_object_get(live, key);
			if (lv)
				json_object_set_new(out, key, objdiff_project(lv, v, json_object_get(last, key)));
		}
		/* in last-applied, live, and dropped by the target: a sync deletes it */
		json_object_foreach(json_is_object(last) ? last : NULL, key, v) {
			json_t *lv = json_object_get(live, key), *p;
			if (!lv || json_object_get(target, key))
				continue;
			p = objdiff_project(lv, v, NULL);
			if (json_is_object(p) && !json_object_size(p) && json_object_size(lv))
				json_decref(p);	/* what last-applied held of it is gone live already */
			else
				json_object_set_new(out, key, p);
		}
		return out;
	}
	if (json_is_array(live) && json_is_array(target)) {
		out = json_array();
		json_array_foreach(live, i, v)
			json_array_append_new(out, i < json_array_size(target)
							   ? objdiff_project(v, json_array_get(target, i),
									     json_array_get(last, i))
							   : json_incref(v));
		return out;
	}
	return json_incref(live);
}

void objdiff_drop(json_t *obj, const char *pointer)
{
	char *path, *part, *save = NULL, *last = NULL;
	json_t *cur = obj;

	if (!obj || !pointer || *pointer != '/')
		return;
	path = xstrdup(pointer + 1);
	/* RFC 6901: ~1 is '/', ~0 is '~', decoded in that order */
	for (part = strtok_r(path, "/", &save); part; part = strtok_r(NULL, "/", &save)) {
		char *r = part, *w = part;
		for (; *r; r++) {
			if (*r == '~' && (r[1] == '0' || r[1] == '1')) {
				*w++ = r[1] == '1' ? '/' : '~';
				r++;
			} else {
				*w++ = *r;
			}
		}
		*w = 0;
		if (last) {
			if (json_is_object(cur)) {
				cur = json_object_get(cur, last);
			} else if (json_is_array(cur)) {
				char *end;
				long idx = strtol(last, &end, 10);
				cur = *last && !*end && idx >= 0 ? json_array_get(cur, (size_t)idx) : NULL;
			} else {
				cur = NULL;
			}
			if (!cur)
				break;
		}
		last = part;
	}
	if (cur && last) {
		if (json_is_object(cur))
			json_object_del(cur, last);
		else if (json_is_array(cur)) {
			char *end;
			long idx = strtol(last, &end, 10);
			if (*last && !*end && idx >= 0)
				json_array_remove(cur, (size_t)idx);
		}
	}
	free(path);
}

static void add_line(json_t *lines, char origin, const char *s, size_t n)
{
	char *t;

	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r'))
		n--;
	t = xmalloc(n + 2);
	t[0] = origin;
	memcpy(t + 1, s, n);
	t[n + 1] = 0;
	json_array_append_new(lines, json_string(t));
	free(t);
}

int objdiff_lines(json_t *a, json_t *b, const char *la, const char *lb, json_t *lines)
{
	struct buf ta = BUF_INIT, tb = BUF_INIT;
	git_patch *patch = NULL;
	git_diff_options opts;
	int changed = -1;

	if ((a && objdiff_yaml(a, &ta) < 0) || (b && objdiff_yaml(b, &tb) < 0)) {
		error("cannot write %s as YAML", a ? la : lb);
		goto out;
	}
	git_libgit2_init();
	git_diff_options_init(&opts, GIT_DIFF_OPTIONS_VERSION);
	opts.context_lines = 3;
	if (git_patch_from_buffers(&patch, a ? ta.s : NULL, ta.len, la, b ? tb.s : NULL, tb.len, lb, &opts) < 0) {
		error("diff of %s: %s", lb, git_error_last() ? git_error_last()->message : "failed");
		git_libgit2_shutdown();
		goto out;
	}
	changed = 0;
	for (size_t h = 0; h < git_patch_num_hunks(patch); h++) {
		const git_diff_hunk *hunk;
		size_t n;
		if (git_patch_get_hunk(&hunk, &n, patch, h) < 0)
			break;
		if (h == 0) {
			add_line(lines, '-', aprintf("-- %s", a ? la : "/dev/null"), strlen(a ? la : "/dev/null") + 3);
			add_line(lines, '+', aprintf("++ %s", b ? lb : "/dev/null"), strlen(b ? lb : "/dev/null") + 3);
		}
		add_line(lines, '@', hunk->header + 1, hunk->header_len - 1);
		for (size_t l = 0; l < n; l++) {
			const git_diff_line *line;
			if (git_patch_get_line_in_hunk(&line, patch, h, l) < 0)
				break;
			if (line->origin != GIT_DIFF_LINE_CONTEXT && line->origin != GIT_DIFF_LINE_ADDITION &&
			    line->origin != GIT_DIFF_LINE_DELETION)
				continue;	/* "\ No newline at end of file": YAML text always ends with one */
			add_line(lines, line->origin, line->content, line->content_len);
			changed += line->origin != GIT_DIFF_LINE_CONTEXT;
		}
	}
	git_patch_free(patch);
	git_libgit2_shutdown();
out:
	buf_release(&ta);
	buf_release(&tb);
	return changed;
}

void objdiff_note_crd(json_t *obj, json_t *crds)
{
	json_t *spec = json_object_get(obj, "spec");
	const char *api = json_string_value(json_object_get(obj, "apiVersion"));
	const char *scope = json_string_value(json_object_get(spec, "scope"));
	const char *group = json_string_value(json_object_get(spec, "group"));
	const char *kind = json_string_value(json_object_get(json_object_get(spec, "names"), "kind"));
	const char *what = json_string_value(json_object_get(obj, "kind"));

	if (api && !strncmp(api, "apiextensions.k8s.io/", 21) && what && !strcmp(what, "CustomResourceDefinition") &&
	    scope && !strcmp(scope, "Cluster") && group && kind)
		json_object_set_new(crds, aprintf("%s/%s", group, kind), json_true());
}

int objdiff_cluster_scoped(const char *group, const char *kind, json_t *crds)
{
	static const char *const kinds[][2] = {	/* group, kind: another group's kind of that name is not one */
		{ "apiregistration.k8s.io", "APIService" }, { "storage.k8s.io", "CSIDriver" },
		{ "storage.k8s.io", "CSINode" }, { "certificates.k8s.io", "CertificateSigningRequest" },
		{ "cert-manager.io", "ClusterIssuer" }, { "rbac.authorization.k8s.io", "ClusterRole" },
		{ "rbac.authorization.k8s.io", "ClusterRoleBinding" }, { "", "ComponentStatus" },
		{ "apiextensions.k8s.io", "CustomResourceDefinition" }, { "flowcontrol.apiserver.k8s.io", "FlowSchema" },
		{ "networking.k8s.io", "IngressClass" }, { "admissionregistration.k8s.io", "MutatingWebhookConfiguration" },
		{ "", "Namespace" }, { "", "Node" }, { "", "PersistentVolume" }, { "policy", "PodSecurityPolicy" },
		{ "scheduling.k8s.io", "PriorityClass" }, { "flowcontrol.apiserver.k8s.io", "PriorityLevelConfiguration" },
		{ "node.k8s.io", "RuntimeClass" }, { "storage.k8s.io", "StorageClass" },
		{ "admissionregistration.k8s.io", "ValidatingAdmissionPolicy" },
		{ "admissionregistration.k8s.io", "ValidatingAdmissionPolicyBinding" },
		{ "admissionregistration.k8s.io", "ValidatingWebhookConfiguration" },
		{ "storage.k8s.io", "VolumeAttachment" }, { "snapshot.storage.k8s.io", "VolumeSnapshotClass" },
		{ "snapshot.storage.k8s.io", "VolumeSnapshotContent" },
	};

	for (size_t i = 0; i < sizeof(kinds) / sizeof(*kinds); i++)
		if (!strcmp(group, kinds[i][0]) && !strcmp(kind, kinds[i][1]))
			return 1;
	return json_object_get(crds, aprintf("%s/%s", group, kind)) != NULL;
}

#define LAST_APPLIED "kubectl.kubernetes.io/last-applied-configuration"

static int core_secret(json_t *o)
{
	const char *api = json_string_value(json_object_get(o, "apiVersion"));
	const char *kind = json_string_value(json_object_get(o, "kind"));
	/* the core group at any version (no '/'), as livediff.c's is_secret: what is hidden never depends on a version */
	return api && !strchr(api, '/') && kind && !strcmp(kind, "Secret");
}

/* o's field f hidden: "(hidden, differs)" where the other side's (of) holds another value */
static void hide_value(json_t *o, const char *f, json_t *of)
{
	json_t *v = json_object_get(o, f);

	if (v)
		json_object_set_new(o, f, json_string(of && !json_equal(of, v) ? "(hidden, differs)" : "(hidden)"));
}

int objdiff_hide_secrets(json_t *v, json_t *ov, int annotation_only)
{
	json_t *x, *ann;
	const char *k;
	size_t i;
	int n = 0;

	if (json_is_array(v)) {
		json_array_foreach(v, i, x)
			n += objdiff_hide_secrets(x, json_array_get(ov, i), annotation_only);
		return n;
	}
	if (!json_is_object(v))
		return 0;
	if (!core_secret(v)) {	/* a List's items, or any object holding one */
		json_object_foreach(v, k, x)
			n += objdiff_hide_secrets(x, json_object_get(ov, k), annotation_only);
		return n;
	}
	/* kubectl's record of what it applied holds the values too */
	ann = json_object_get(json_object_get(v, "metadata"), "annotations");
	if (json_is_object(ann))
		hide_value(ann, LAST_APPLIED, json_object_get(json_object_get(json_object_get(ov, "metadata"), "annotations"),
							      LAST_APPLIED));
	for (const char *const *m = (const char *const[]){ "data", "stringData", NULL }; !annotation_only && *m; m++) {
		json_t *map = json_object_get(v, *m), *omap = json_object_get(ov, *m);
		if (!map)
			continue;
		if (!json_is_object(map)) {	/* not a map: hidden whole */
			hide_value(v, *m, omap);
			continue;
		}
		json_object_foreach(map, k, x)
			hide_value(map, k, json_object_get(omap, k));
	}
	return 1;
}

/*
 * Every document of text as JSON (an array), or NULL when it does not
 * parse.  Whether it holds a Secret is decided on these parsed values,
 * never on the text: `kind: "\x53ecret"` is a Secret too.
 */
static json_t *parse_all(const char *name, const char *text, size_t len)
{
	struct ypool *p = ypool_new();
	struct ynode **docs = NULL;
	size_t ndocs = 0;
	json_t *a = NULL;

	if (yaml_parse(p, name, text, len, &docs, &ndocs) == 0) {
		a = json_array();
		for (size_t i = 0; i < ndocs; i++)
			json_array_append_new(a, objdiff_from_yaml(docs[i]));
	}
	ypool_free(p);	/* docs too */
	return a;
}

const char *objdiff_mask_secret(const char *name, const char *text, size_t len, const char *other, size_t olen,
				size_t *outlen)
{
	json_t *o, *oo, *x;
	struct buf b = BUF_INIT;
	const char *ret = NULL;
	size_t i;

	if (!text)
		return NULL;
	if (!(o = parse_all(name, text, len))) {
		/* what does not parse here may still parse elsewhere as a Secret: nothing of it shown */
		ret = "# (hidden: does not parse as YAML, and may hold a Secret)\n";
		*outlen = strlen(ret);
		return ret;
	}
	oo = other ? parse_all(name, other, olen) : NULL;
	if (objdiff_hide_secrets(o, oo, 0)) {
		json_array_foreach(o, i, x) {
			if (json_array_size(o) > 1)
				buf_adds(&b, "---\n");
			if (objdiff_yaml(x, &b) < 0)
				break;
		}
		if (i == json_array_size(o)) {
			ret = astrndup(b.s ? b.s : "", b.len);
			*outlen = b.len;
		} else {
			ret = "# (hidden: holds a Secret that cannot be shown)\n";
			*outlen = strlen(ret);
		}
	}
	buf_release(&b);
	json_decref(o), json_decref(oo);
	return ret;
}

void objdiff_mask_pair(const char *name, const char **old, size_t *oldlen, const char **new, size_t *newlen)
{
	size_t ml = 0, nl = 0;
	const char *mn = objdiff_mask_secret(name, *new, *newlen, *old, *oldlen, &nl);	/* against the unmasked old side */
	const char *mo = objdiff_mask_secret(name, *old, *oldlen, NULL, 0, &ml);

	if (mo)
		*old = mo, *oldlen = ml;
	if (mn)
		*new = mn, *newlen = nl;
}
