/*
 * fuzz-distro.c - libFuzzer target: the distro loader (manifest_load), with
 * what it reads besides distro.yaml: the distros it extends and rule files.
 *
 * The input is a set of files, written to a fresh folder each run:
 *
 *     distro.yaml's text
 *     #> NAME\n  the next file's text        NAME: [a-z0-9._-/], no "..",
 *     ...                                    e.g. base.yaml, rules/r.yaml
 *
 * then distro.yaml is loaded as `idpmake` loads it (extends: ./base.yaml,
 * rules: [rules/r.yaml], the built-in `default` distro).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "distro/manifest.h"
#include "distro/rule.h"
#include "base/util.h"

static char root[256], statedir[300];
static struct amark base;

static void cleanup(void)
{
	rmtree(root);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(root, sizeof(root), "%s/idpmake-fuzz-distro.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(root))
		abort();
	snprintf(statedir, sizeof(statedir), "%s/state", root);
	atexit(cleanup);
	unsetenv("IDPMAKE_DISTRO_PATH");
	loc_quiet = 1;
	/* what stays for the whole run (built-in rules), before the mark */
	manifest_unload();
	{
		size_t n;
		rules_builtin(&n);
	}
	amalloc(1);	/* a first arena block that stays: no 1 MiB malloc and free per input */
	base = amark();
	return 0;
}

/* a name the loader may meet: no "..", not absolute, a few folders deep */
static int good_name(const char *s, size_t n)
{
	if (!n || n > 64 || s[0] == '/' || s[0] == '.')
		return 0;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-' || c == '/'))
			return 0;
		if (c == '.' && i + 1 < n && s[i + 1] == '.')
			return 0;
		if (c == '/' && (i + 1 == n || s[i + 1] == '/' || s[i + 1] == '.'))
			return 0;
	}
	return strncmp(s, "state", 5) != 0;
}

static void put(const char *dir, const char *name, size_t nlen, const uint8_t *data, size_t len)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%.*s", dir, (int)nlen, name);
	for (char *p = path + strlen(dir) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdirs(path);
		*p = '/';
	}
	if ((f = fopen(path, "w"))) {
		fwrite(data, 1, len, f);
		fclose(f);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char dir[300];
	const uint8_t *p = data, *end = data + size;
	const char *name = "distro.yaml";
	size_t nlen = strlen(name);
	int files = 0;

	snprintf(dir, sizeof(dir), "%s/d", root);
	rmtree(dir);
	mkdirs(dir);
	while (p <= end && files < 16) {
		const uint8_t *next = NULL;
		for (const uint8_t *q = p; q + 3 <= end; q++)
			if ((q == data || q[-1] == '\n') && q[0] == '#' && q[1] == '>' && q[2] == ' ') {
				next = q;
				break;
			}
		put(dir, name, nlen, p, (size_t)((next ? next : end) - p));
		files++;
		if (!next)
			break;
		/* "#> NAME\n" */
		name = (const char *)next + 3;
		{
			const uint8_t *nl = memchr(next, '\n', (size_t)(end - next));
			if (!nl)
				break;
			nlen = (size_t)(nl - (const uint8_t *)name);
			p = nl + 1;
		}
		if (!good_name(name, nlen))
			break;
	}
	loc_errors = 0;
	{
		char file[320];
		struct distro *d;
		snprintf(file, sizeof(file), "%s/distro.yaml", dir);
		d = manifest_load(file, statedir);
		if (d)
			for (size_t i = 0; i < d->npackages; i++)
				for (size_t c = 0; c < d->nclusters; c++)
					if (cluster_has(d, &d->clusters[c], &d->packages[i]))
						package_namespace(d, &d->clusters[c], &d->packages[i]);
	}
	loc_errors = 0;
	manifest_unload();
	arelease(base);
	return 0;
}
