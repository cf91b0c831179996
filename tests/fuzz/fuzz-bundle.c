/*
 * fuzz-bundle.c - libFuzzer target: the bundle reader (bundle.c), which reads
 * rendered packages back from the cache for the push, `render -o`, `diff`
 * and hooks.
 *
 * The input is a bundle file's bytes.  bundle_parse must accept it or refuse
 * it without reading outside it; an accepted bundle's entries must lie in
 * the text, and writing them again (bundle_write) must give the same bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "render/bundle.h"
#include "base/util.h"

static struct amark base;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	amalloc(1);	/* a first arena block that stays: no 1 MiB malloc and free per input */
	base = amark();
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* the reader gets read_file's malloc'd, NUL-terminated text */
	char *text = malloc(size + 1);
	struct bundle b;

	memcpy(text, data, size);
	text[size] = 0;
	if (bundle_parse(text, size, &b, "fuzz") == 0) {
		struct buf out = BUF_INIT;
		for (size_t i = 0; i < b.n; i++) {
			const struct bundle_entry *e = &b.v[i];
			if (e->data < b.text || e->data + e->len > b.text + b.len || e->name < b.text ||
			    e->name + strlen(e->name) > b.text + b.len)
				abort();
		}
		bundle_write(b.v, b.n, &out);
		if (out.len != size || memcmp(out.s, data, size))
			abort();	/* read and written again, a bundle is the same bytes */
		buf_release(&out);
		bundle_free(&b);
	}
	arelease(base);
	return 0;
}
