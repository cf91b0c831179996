#define _GNU_SOURCE	/* memmem */
/*
 * t-objdiff.c - the field-level object diff (engine/objdiff.c): YAML typed
 * as Kubernetes reads it, JSON written back as YAML with sorted keys,
 * projection of a live object onto the fields the target sets (fields only
 * live do not count), JSON pointers (RFC 6901 escapes), and the unified
 * lines of a change, a creation and a removal.
 */
#include <jansson.h>
#include <string.h>

#include "base/buf.h"
#include "review/objdiff.h"
#include "base/util.h"
#include "test.h"

static json_t *parse(const char *text)
{
	return objdiff_parse("test.yaml", text, strlen(text));
}

/* the lines joined with '\n' (arena) */
static const char *joined(json_t *lines)
{
	struct buf b = BUF_INIT;
	size_t i;
	json_t *l;
	const char *r;

	json_array_foreach(lines, i, l) {
		buf_adds(&b, json_string_value(l));
		buf_addc(&b, '\n');
	}
	r = astrdup(b.s);
	buf_release(&b);
	return r;
}

static void test_types(void)
{
	json_t *o = parse("a: 1\nb: \"1\"\nc: yes\nd: ~\ne: 0o17\nf: 1.5\ng: text\nh: [x, 2]\n");
	CHECK(o != NULL);
	CHECK(json_is_integer(json_object_get(o, "a")) && json_integer_value(json_object_get(o, "a")) == 1);
	CHECK_STR(json_string_value(json_object_get(o, "b")), "1");
	CHECK(json_is_true(json_object_get(o, "c")));
	CHECK(json_is_null(json_object_get(o, "d")));
	CHECK(json_integer_value(json_object_get(o, "e")) == 15);
	CHECK(json_is_real(json_object_get(o, "f")));
	CHECK_STR(json_string_value(json_object_get(o, "g")), "text");
	CHECK(json_array_size(json_object_get(o, "h")) == 2);
	json_decref(o);
	/* not an object: refused */
	CHECK(parse("- a\n- b\n") == NULL);
}

static void test_yaml(void)
{
	json_t *o = json_pack("{s:s, s:s, s:i, s:b, s:s, s:n}", "z", "true", "a", "plain", "num", 3, "t", 1, "m",
			      "line1\nline2\n", "x");
	struct buf b = BUF_INIT;
	json_t *back;

	CHECK(objdiff_yaml(o, &b) == 0);
	/* keys sorted; a string that reads as a boolean stays quoted; a number does not */
	CHECK(strstr(b.s, "a: plain\n") == b.s);
	CHECK(strstr(b.s, "z: 'true'\n") != NULL || strstr(b.s, "z: \"true\"\n") != NULL);
	CHECK(strstr(b.s, "num: 3\n") != NULL);
	CHECK(strstr(b.s, "m: |\n") != NULL);
	/* and it reads back as the same JSON */
	back = parse(b.s);
	CHECK(back && json_equal(back, o));
	json_decref(back);
	json_decref(o);
	buf_release(&b);
}

static void test_project(void)
{
	json_t *target = parse("metadata: {name: a, labels: {x: '1'}}\nspec: {ports: [{port: 80}]}\n");
	json_t *live = parse("metadata: {name: a, uid: u-1, labels: {x: '1', extra: y}}\n"
			     "spec: {ports: [{port: 80, protocol: TCP}]}\nstatus: {ok: true}\n");
	json_t *p = objdiff_project(live, target, NULL);

	/* everything only live is gone: uid, the extra label, protocol, status */
	CHECK(p && json_equal(p, target));
	json_decref(p);
	/* a changed value stays */
	json_object_set_new(json_object_get(json_object_get(live, "metadata"), "labels"), "x", json_string("2"));
	p = objdiff_project(live, target, NULL);
	CHECK(p && !json_equal(p, target));
	json_decref(p);
	/* a list longer live keeps its extra items (a different length is a difference) */
	json_array_append_new(json_object_get(json_object_get(live, "spec"), "ports"), json_pack("{s:i}", "port", 81));
	p = objdiff_project(live, target, NULL);
	CHECK(json_array_size(json_object_get(json_object_get(p, "spec"), "ports")) == 2);
	json_decref(p);
	CHECK(objdiff_project(NULL, target, NULL) == NULL);
	json_decref(live);
	json_decref(target);
}

/* three ways: a field live and last-applied but dropped by the target is kept, one only live is not */
static void test_project_last(void)
{
	json_t *target = parse("metadata: {name: a}\ndata: {k: v}\n");
	json_t *last = parse("metadata: {name: a, labels: {team: x}}\ndata: {k: v, gone: g}\n");
	json_t *live = parse("metadata: {name: a, uid: u-1, labels: {team: x, ctl: y}}\n"
			     "data: {k: v, gone: g, srv: s}\n");
	json_t *want = parse("metadata: {name: a, labels: {team: x}}\ndata: {k: v, gone: g}\n");
	json_t *p = objdiff_project(live, target, last);

	CHECK(p && json_equal(p, want));
	json_decref(p);
	/* without last-applied: two ways, as before */
	p = objdiff_project(live, target, NULL);
	CHECK(p && json_equal(p, target));
	json_decref(p);
	/* dropped from last-applied and from live already: nothing left to remove */
	json_object_del(json_object_get(live, "data"), "gone");
	json_object_del(json_object_get(json_object_get(live, "metadata"), "labels"), "team");
	p = objdiff_project(live, target, last);
	CHECK(p && json_equal(p, target));
	json_decref(p);
	json_decref(live), json_decref(last), json_decref(target), json_decref(want);
}

static void test_drop(void)
{
	json_t *o = parse("spec: {replicas: 3, a/b: 1, t~x: 2, list: [{n: 1}, {n: 2}]}\n");

	objdiff_drop(o, "/spec/replicas");
	CHECK(!json_object_get(json_object_get(o, "spec"), "replicas"));
	objdiff_drop(o, "/spec/a~1b");
	CHECK(!json_object_get(json_object_get(o, "spec"), "a/b"));
	objdiff_drop(o, "/spec/t~0x");
	CHECK(!json_object_get(json_object_get(o, "spec"), "t~x"));
	objdiff_drop(o, "/spec/list/0/n");
	CHECK(json_object_size(json_array_get(json_object_get(json_object_get(o, "spec"), "list"), 0)) == 0);
	/* paths that name nothing change nothing */
	objdiff_drop(o, "/nope/x");
	objdiff_drop(o, "/spec/list/9/n");
	objdiff_drop(o, "spec");
	CHECK(json_array_size(json_object_get(json_object_get(o, "spec"), "list")) == 2);
	json_decref(o);
}

static void test_lines(void)
{
	json_t *a = parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k1: a, k2: b}\n");
	json_t *b = parse("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k1: a, k2: c}\n");
	json_t *lines = json_array();
	const char *t;

	CHECK(objdiff_lines(a, a, "live", "render", lines) == 0);
	CHECK(json_array_size(lines) == 0);
	CHECK(objdiff_lines(a, b, "live", "render", lines) == 2);
	t = joined(lines);
	CHECK(strstr(t, "--- live\n+++ render\n@@ ") == t);
	CHECK(strstr(t, "\n-  k2: b\n+  k2: c\n") != NULL);
	CHECK(strstr(t, "\n   k1: a\n") != NULL);	/* context */
	json_array_clear(lines);
	/* created: every line added, from /dev/null */
	CHECK(objdiff_lines(NULL, b, "live", "render", lines) == 7);
	t = joined(lines);
	CHECK(strstr(t, "--- /dev/null\n+++ render\n@@ -0,0 +1,7 @@\n+apiVersion: v1\n") == t);
	json_array_clear(lines);
	/* removed */
	CHECK(objdiff_lines(a, NULL, "live", "render", lines) == 7);
	t = joined(lines);
	CHECK(strstr(t, "--- live\n+++ /dev/null\n") == t);
	CHECK(strstr(t, "\n-kind: ConfigMap\n") != NULL);
	json_decref(lines);
	json_decref(a);
	json_decref(b);
}

/* a Secret's values never in the masked text, whatever its shape */
static void test_mask(void)
{
	static const char *const texts[] = {
		"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: {p: VALUE-Zq5}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: VALUE-Zq5\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\ndata: [VALUE-Zq5]\n",
		"apiVersion: v1\nkind: Secret\nmetadata:\n  name: a\n  annotations:\n"
		"    kubectl.kubernetes.io/last-applied-configuration: '{\"data\":{\"p\":\"VALUE-Zq5\"}}'\n",
		"apiVersion: v1\nkind: List\nmetadata: {name: l}\nitems:\n- apiVersion: v1\n  kind: Secret\n"
		"  metadata: {name: a}\n  data: {p: VALUE-Zq5}\n",
		"apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: {p: VALUE-Zq5, p: [\n",	/* a hand edit that does not parse */
		/* the kind by its parsed value, whatever the text says (issue 20 item 8) */
		"apiVersion: v1\nkind: \"\\x53ecret\"\nmetadata: {name: a}\ndata: {p: VALUE-Zq5}\n",
		"apiVersion: \"\\x76\\x31\"\nkind: \"\\u0053\\u0065cret\"\nmetadata: {name: a}\nstringData: {p: VALUE-Zq5}\n",
		"apiVersion: 'v1'\nkind: !!str Secret\nmetadata: {name: a}\ndata: {p: VALUE-Zq5}\n",
		"{apiVersion: v1, kind: \"Se\\\n  cret\", metadata: {name: a}, data: {p: VALUE-Zq5}}\n",
		"apiVersion: v1\nkind: List\nitems:\n- {apiVersion: v1, kind: \"\\x53ecret\", metadata: {name: a}, data: {p: VALUE-Zq5}}\n",
		/* a second document is applied too */
		"apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n---\napiVersion: v1\nkind: \"\\x53ecret\"\n"
		"metadata: {name: a}\nstringData: {p: VALUE-Zq5}\n",
		/* any core-group version is a Secret, as livediff.c's is_secret has it */
		"apiVersion: v2\nkind: Secret\nmetadata: {name: a}\ndata: {p: VALUE-Zq5}\n",
		/* what does not parse is hidden whole, "Secret" written or not */
		"apiVersion: v1\nkind: \"\\x53ecret\"\nmetadata: {name: a}\ndata: {p: VALUE-Zq5, q: [\n",
	};
	for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
		size_t len = 0;
		const char *m = objdiff_mask_secret("t.yaml", texts[i], strlen(texts[i]), NULL, 0, &len);
		CHECK(m != NULL);
		CHECK(m && !memmem(m, len, "VALUE-Zq5", 9));
	}
	/* a changed value marked on the new side */
	{
		const char *o = "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: {p: x, q: y}\n";
		const char *n = "apiVersion: v1\nkind: Secret\nmetadata: {name: a}\nstringData: {p: x, q: z}\n";
		size_t len = 0;
		const char *m = objdiff_mask_secret("t.yaml", n, strlen(n), o, strlen(o), &len);
		CHECK(m && strstr(m, "p: (hidden)\n") && strstr(m, "q: (hidden, differs)\n"));
	}
	/* every document shown, the Secret's values hidden */
	{
		const char *t = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\ndata: {k: shown-Zq5}\n---\n"
				"apiVersion: v1\nkind: \"\\x53ecret\"\nmetadata: {name: a}\ndata: {p: VALUE-Zq5}\n";
		size_t len = 0;
		const char *m = objdiff_mask_secret("t.yaml", t, strlen(t), NULL, 0, &len);
		CHECK(m && strstr(m, "shown-Zq5") && strstr(m, "\n---\n") && strstr(m, "p: (hidden)") &&
		      !strstr(m, "VALUE-Zq5"));
	}
	/* not a core Secret: left as it is */
	{
		const char *c = "apiVersion: example.com/v1\nkind: Secret\nmetadata: {name: a}\ndata: {p: x}\n";
		size_t len = 0;
		CHECK(objdiff_mask_secret("t.yaml", c, strlen(c), NULL, 0, &len) == NULL);
	}
	/* not a Secret: left as it is */
	{
		const char *c = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: Secret}\ndata: {p: x}\n";
		size_t len = 0;
		CHECK(objdiff_mask_secret("t.yaml", c, strlen(c), NULL, 0, &len) == NULL);
	}
}

/* a cluster-scoped kind is Kubernetes' own in its group, or a CRD's of scope Cluster */
static void test_scope(void)
{
	json_t *crds = json_object();

	CHECK(objdiff_cluster_scoped("", "Namespace", crds));
	CHECK(objdiff_cluster_scoped("storage.k8s.io", "StorageClass", crds));
	CHECK(!objdiff_cluster_scoped("example.com", "StorageClass", crds));	/* a namespaced CRD's kind */
	CHECK(!objdiff_cluster_scoped("example.com", "Node", crds));
	CHECK(!objdiff_cluster_scoped("", "ConfigMap", crds));
	json_object_set_new(crds, "example.com/Gadget", json_true());
	CHECK(objdiff_cluster_scoped("example.com", "Gadget", crds));
	json_decref(crds);
}

TEST_MAIN(test_types, test_yaml, test_project, test_project_last, test_drop, test_lines, test_mask, test_scope)
