/*
 * fuzz-capi.c - libFuzzer target: the parsers of what a cluster made
 * through Cluster API hands idpmake (capi.h), all hostile input:
 *   byte 0 0xe0 to 0xef: capi_class_revise (render/capiclass.c) on a class
 *                package's render (YAML, each object through add_obj), then
 *                the bundle it names;
 *   byte 0 0xf0 and up: capi_spec_object (render/capicheck.c) on each
 *                object of a create.spec package's render (YAML), which it
 *                checks and, for the Cluster, edits: then emitted again;
 *   else byte 0 even: capi_status_parse (argo/argocapi.c), a Cluster's
 *                manifest as Argo CD's resource API returns it;
 *   else odd:    kubecred_parse (argo/kubecred.c) on the kubeconfig of a
 *                Secret NAME-kubeconfig, with no folder (it may name no file),
 *                and cert_not_after (base/certtime.c: libcrypto's PEM and X.509
 *                readers) on its client certificate.
 * The rest of the input is the text, not NUL-terminated.
 *
 * What must hold: no read outside the text; the status's uid is NULL or a
 * short token of [-0-9A-Za-z]; its phase and why are set and hold no
 * control character; a kubeconfig is either refused with a message and
 * nothing kept, or gives a server and a token or a client certificate and
 * key, and never reads a file; a render's object that capi_spec_object
 * accepts as the Cluster is named ${cluster}, carries idpmake's labels,
 * and emits; a class revision names only REVISION (its 8 hex digits) and
 * files under that one folder, each an object named NAME-<h8> that says
 * its revision.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argo/argoapi.h"
#include "argo/argocd.h"
#include "base/buf.h"
#include "base/certtime.h"
#include "base/pem.h"
#include "base/util.h"
#include "base/yaml.h"
#include "distro/capi.h"
#include "render/bundle.h"
#include "render/capicheck.h"
#include "render/capiclass.h"
#include "render/renderers.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	amalloc(1);	/* a first arena block that stays */
	base = amark();
	return 0;
}

static void printable(const char *s)
{
	if (!s)
		abort();
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f)
			abort();
}

/* a render of cluster-r1 (create.spec capi-raw) on mgmt: each object as add_obj hands it over */
static void spec_objects(const char *text, size_t len)
{
	static struct capi k = { .api = "v1beta2", .namespace = "fleet", .version = "v1.33.2", .spec_pkg = "capi-raw",
				 .distro = "fuzz", .management = "mgmt",
				 .home = "0123456789abcdef" };	/* capi_home's, never NULL in a run */
	static struct cluster c = { .name = "r1" };
	static struct package p = { .name = "cluster-r1" };
	static struct step s;
	struct ypool *pool = ypool_new();
	struct ynode **docs;
	size_t nd;

	c.create.capi = &k;
	p.capi_of = &c;
	s.pkg = &p;
	if (yaml_parse(pool, "render", text, len, &docs, &nd) == 0)
		for (size_t i = 0; i < nd; i++) {
			struct ynode *n = docs[i];
			const struct ynode *md = yget(n, "metadata"), *nm = ypath(n, "metadata.name");
			struct buf out = BUF_INIT;
			/* add_obj's own checks first: apiVersion, kind and metadata.name as scalars */
			if (n->type != Y_MAP || !md || md->type != Y_MAP || !nm || nm->type != Y_SCALAR || !nm->slen ||
			    !yget(n, "apiVersion") || yget(n, "apiVersion")->type != Y_SCALAR || !yget(n, "kind") ||
			    yget(n, "kind")->type != Y_SCALAR)
				continue;
			if (capi_spec_object(pool, &s, n) == 1 &&
			    (!ystr_eq(ypath(n, "metadata.name"), "r1") ||
			     !ystr_eq(yget(ypath(n, "metadata.labels"), "idpmake.io/cluster"), "r1") ||
			     !ystr_eq(yget(ypath(n, "metadata.annotations"), "idpmake.io/home"), "0123456789abcdef") ||
			     yaml_emit(n, &out) < 0))
				abort();
			buf_release(&out);
		}
	ypool_free(pool);
}

static int add_each(void *arg, struct ynode *doc)
{
	if (doc->type == Y_MAP)
		add_obj(arg, doc);
	return 0;
}

/* a render of class package capi-classes on mgmt: its objects, revised, as a bundle */
static void class_objects(const char *text, size_t len)
{
	static struct cluster c = { .name = "mgmt" };
	static struct package p = { .name = "capi-classes" };
	static struct step s = { .capi_class = 1 };
	struct objects o;
	struct bundle b = { 0 };
	const char *err = NULL, *rev = NULL;

	s.cluster = &c;
	s.pkg = &p;
	s.id = "mgmt/capi-classes:render";
	objects_init(&o, &s);
	if (yaml_parse_each("render", text, len, NULL, add_each, &o) == 0 && !o.errs &&
	    capi_class_revise("/nonexistent", 0, &s, &o, &err) == 0 && objects_bundle(&o, &b, &err) == 0) {
		rev = capi_class_current(&b);
		for (size_t i = 0; i < b.n; i++) {
			const char *slash = strchr(b.v[i].name, '/');
			struct ypool *pool;
			struct ynode **docs;
			size_t nd;
			if (!strcmp(b.v[i].name, CAPI_REVISION_FILE)) {
				if (!rev)
					abort();
				continue;
			}
			if (!slash)
				continue;
			if (!rev || strchr(slash + 1, '/') || (size_t)(slash - b.v[i].name) != 8 ||
			    strncmp(b.v[i].name, rev, 8))
				abort();
			pool = ypool_new();
			if (yaml_parse(pool, b.v[i].name, b.v[i].data, b.v[i].len, &docs, &nd) < 0 || nd != 1 ||
			    !ypath(docs[0], "metadata.name") || ypath(docs[0], "metadata.name")->type != Y_SCALAR ||
			    capi_class_revision_of(ypath(docs[0], "metadata.name")->s) == NULL ||
			    strcmp(capi_class_revision_of(ypath(docs[0], "metadata.name")->s), rev) ||
			    !ystr_eq(yget(ypath(docs[0], "metadata.annotations"), "idpmake.io/class-revision"), rev))
				abort();
			ypool_free(pool);
		}
	}
	objects_free(&o);
	bundle_free(&b);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text;

	if (!size)
		return 0;
	text = malloc(size > 1 ? size - 1 : 1);	/* exactly the bytes: a read past them is ASan's */
	memcpy(text, data + 1, size - 1);
	if (data[0] >= 0xf0) {
		spec_objects(text, size - 1);
	} else if (data[0] >= 0xe0) {
		class_objects(text, size - 1);
	} else if (!(data[0] & 1)) {
		struct capi_status st;
		if (capi_status_parse(text, size - 1, &st) == 0) {
			if (st.uid) {
				size_t n = strlen(st.uid);
				if (!n || n > 64 || strspn(st.uid, "-0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ") != n)
					abort();
			}
			printable(st.phase);
			printable(st.why);
			if (st.fatal)
				printable(st.fatal);
		}
	} else {
		struct kubecred k;
		const char *err = NULL;
		if (kubecred_parse("Secret fuzz/x-kubeconfig", NULL, text, size - 1, NULL, &k, &err) == 0) {
			size_t n;
			unsigned char *pem;
			if (!k.server || (!k.token && !(k.cert && k.key)))
				abort();
			/* its notAfter (certtime.c), as credential: kubeconfig records it */
			if (k.cert && (pem = unbase64(k.cert, &n))) {
				long long t = cert_not_after((const char *)pem, n);
				if (t < -1 || t > 253402300799LL)	/* 9999-12-31T23:59:59Z, GeneralizedTime's last */
					abort();
				free(pem);
			}
			kubecred_free(&k);
		} else if (!err || k.ca || k.cert || k.key || k.token) {
			abort();
		}
	}
	free(text);
	arelease(base);
	return 0;
}
