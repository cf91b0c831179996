/*
 * fuzz-rewrite.c - libFuzzer target: a package's `rewrite` and ${var}
 * expansion (vars.c expand, render.c render_rewrite), then the parsing and
 * normalisation the rewritten text goes through (yaml_parse, yaml_emit,
 * ycanon).
 *
 * The input is three parts:
 *
 *     MATCH\n  REPLACE\n  TEXT
 *
 * MATCH is a PCRE2 pattern, REPLACE a replacement with ${var} references
 * (domain, a, b, cluster, package, namespace are defined) and $1 groups,
 * TEXT a renderer's output.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "distro/manifest.h"
#include "render/render.h"
#include "base/util.h"
#include "base/yaml.h"

static struct distro d;
static struct cluster cl;
static struct package pkg;
static struct step st;
static struct kv dvars[3], cvars[1];
static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	dvars[0] = (struct kv){ "domain", "idp.example.com", { "distro.yaml", 3, 3 } };
	dvars[1] = (struct kv){ "a", "$1${b}", { "distro.yaml", 4, 3 } };
	dvars[2] = (struct kv){ "b", "\\x{41}$$", { "distro.yaml", 5, 3 } };
	cvars[0] = (struct kv){ "domain", "c1.example.com", { "distro.yaml", 9, 5 } };
	d.vars = (struct kvlist){ dvars, 3 };
	cl.name = "c1";
	cl.vars = (struct kvlist){ cvars, 1 };
	pkg.name = "p";
	st.cluster = &cl;
	st.pkg = &pkg;
	st.namespace = "ns";
	loc_quiet = 1;
	amalloc(1);	/* a first arena block that stays: no 1 MiB malloc and free per input */
	base = amark();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *end = data + size, *n1 = memchr(data, '\n', size), *n2;
	struct rewrite rw;
	struct vars v;
	const char *err = NULL;
	char *text;
	size_t len;

	if (!n1 || !(n2 = memchr(n1 + 1, '\n', (size_t)(end - n1 - 1))))
		return 0;
	rw.match = astrndup((const char *)data, (size_t)(n1 - data));
	rw.replace = astrndup((const char *)n1 + 1, (size_t)(n2 - n1 - 1));
	rw.loc = (struct loc){ "distro.yaml", 12, 7 };
	len = (size_t)(end - n2 - 1);
	text = xmalloc(len + 1);
	memcpy(text, n2 + 1, len);
	text[len] = 0;

	vars_init(&v, &d, &cl, &pkg, "ns");
	expand(rw.replace, rw.loc, &v);
	expand(text, rw.loc, &v);

	pkg.rewrite = &rw;
	pkg.nrewrite = 1;
	text = render_rewrite(&pkg, &st, &d, text, &len, &err);
	if (text) {
		struct ypool *p = ypool_new();
		struct ynode **docs;
		size_t ndocs;
		if (strlen(text) > len)
			abort();
		if (yaml_parse(p, "rendered", text, len, &docs, &ndocs) == 0)
			for (size_t i = 0; i < ndocs; i++) {
				struct buf out = BUF_INIT, canon = BUF_INIT;
				yaml_emit(docs[i], &out);
				ycanon(docs[i], &canon);
				buf_release(&out);
				buf_release(&canon);
			}
		ypool_free(p);
		free(text);
	}
	loc_errors = 0;
	arelease(base);
	return 0;
}
