/*
 * fuzz-kubeowner.c - libFuzzer target: kubeowner_check (argo/kubeowner.c),
 * which reads what `kubectl get -o json --show-managed-fields` answered
 * about the objects a deploy: kubectl package is about to apply: the
 * cluster's objects, hostile text anyone who can write them may have
 * shaped (names, managers, times).
 *
 * The input is that answer's bytes, not NUL-terminated.  The check must
 * not read outside them, and its verdict must hold what the apply relies
 * on: 0 or -1; -1 only with a message; a message free of control
 * characters but its line breaks, of a bounded number of lines (five
 * objects named, then a count, then the way out); with adopt, only an
 * answer that is not JSON is refused; an answer that names no idpmake
 * manager (nor escapes one) is never refused.  An object whose mark
 * (annotation idpmake.io/distro) names another distro is another's; the
 * mark names it made safe too.
 *
 * The same bytes, read as YAML, go through kubeowner_mark, which writes
 * the mark into the apply's copy of a render: when it marks anything,
 * every document that is an object carries the mark "self", and what it
 * emits reads back as as many documents, the objects still marked (that
 * the emitter keeps every scalar as it was is the render's concern: it
 * emits each object the same way).
 */
#define _GNU_SOURCE	/* memmem */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "argo/kubeowner.h"
#include "base/buf.h"
#include "base/util.h"
#include "base/yaml.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	amalloc(1);	/* a first arena block that stays */
	loc_quiet = 1;	/* YAML that does not parse: counted, not printed */
	base = amark();
	return 0;
}

static void verdict(const char *text, size_t size, int applied_before, int adopt)
{
	const char *err = NULL;
	struct kube_adopted adopted = { 0 };
	int rc = kubeowner_check(text, size, "idpmake/self", applied_before, adopt, &adopted, &err), lines = 1;

	if (rc != 0 && rc != -1)
		abort();
	if (adopted.said || adopted.n) {
		/* what --adopt took over: only with adopt, one line, safe for a terminal; each object too */
		if (!adopt || rc || !adopted.said || !adopted.n)
			abort();
		for (const char *p = adopted.said; *p; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				abort();
		for (size_t i = 0; i < adopted.n; i++)
			for (const char *p = adopted.object[i]; *p; p++)
				if ((unsigned char)*p < 0x20 || *p == 0x7f)
					abort();
	}
	if (rc == 0)
		return;
	if (!err)
		abort();
	for (const char *p = err; *p; p++) {
		if (*p == '\n')
			lines++;
		else if ((unsigned char)*p < 0x20 || *p == 0x7f)
			abort();
	}
	if (lines > 7)
		abort();
	if (strncmp(err, "kubectl get -o json: not JSON", 29)) {
		/* a refusal of an object: not with adopt, and only when an idpmake manager is named */
		if (adopt || (!memmem(text, size, "idpmake", 7) && !memchr(text, '\\', size)))
			abort();
	}
}

/* is doc an object marked as self's? -1: not an object kubeowner_mark marks */
static int marked_self(const struct ynode *doc)
{
	const struct ynode *md = doc->type == Y_MAP ? yget(doc, "metadata") : NULL;
	const struct ynode *an = md && md->type == Y_MAP ? yget(md, "annotations") : NULL;

	if (!yget(doc, "apiVersion") || !yget(doc, "kind") || !md || md->type != Y_MAP || !an || an->type != Y_MAP)
		return -1;
	return ystr_eq(yget(an, KUBEOWNER_MARK), "self");
}

static void marked(const char *text, size_t size)
{
	struct ypool *p = ypool_new(), *q;
	struct ynode **docs, **back;
	struct buf out = BUF_INIT;
	size_t n, nback;
	int r;

	if (yaml_parse(p, "fuzz", text, size, &docs, &n) < 0) {
		ypool_free(p);
		return;
	}
	r = kubeowner_mark(p, docs, n, "idpmake/self", &out);
	if (r > (int)n || (r == 0 && out.len))
		abort();
	for (size_t i = 0; r > 0 && i < n; i++)
		if (marked_self(docs[i]) == 0)
			abort();	/* an object left unmarked */
	if (r > 0) {
		q = ypool_new();
		if (yaml_parse(q, "marked", out.s, out.len, &back, &nback) < 0 || nback != n)
			abort();	/* what it wrote does not read back */
		for (size_t i = 0; i < n; i++)
			if (marked_self(docs[i]) == 1 && marked_self(back[i]) != 1)
				abort();	/* nor with the mark */
		ypool_free(q);
	}
	buf_release(&out);
	ypool_free(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size ? size : 1);

	memcpy(text, data, size);
	for (int i = 0; i < 4; i++)
		verdict(text, size, i & 1, i >> 1);
	marked(text, size);
	free(text);
	arelease(base);
	return 0;
}
