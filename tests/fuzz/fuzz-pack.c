/*
 * fuzz-pack.c - libFuzzer target: the index of an archive `idpmake pack`
 * wrote (idpmake-pack.txt, format in engine/pack.h), as unpacking reads it
 * before any member reaches the disk.
 *
 * The input is the index's bytes.  pack_index_parse must accept it or
 * refuse it without reading outside it; when it accepts, every git and
 * chart line of it must be found again by the lookups (pack_git,
 * pack_chart) under the bundle folder, and a file line's member must have
 * a name of plain components (no "..", not absolute).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pack/pack.h"
#include "base/util.h"

static struct amark base;
static FILE *devnull;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	amalloc(1);	/* a first arena block that stays: no 1 MiB malloc and free per input */
	base = amark();
	devnull = fopen("/dev/null", "w");
	return 0;
}

/* the words of one line, split as the format says (one space); n of them */
static size_t words(char *line, char **w, size_t max)
{
	size_t n = 0;
	char *save = NULL;

	for (char *t = strtok_r(line, " ", &save); t && n < max; t = strtok_r(NULL, " ", &save))
		w[n++] = t;
	return n;
}

static int plain_name(const char *s)
{
	return *s && *s != '/' && !strstr(s, "//") && strcmp(s, "..") && strncmp(s, "../", 3) &&
	       !strstr(s, "/../") && !(strlen(s) >= 3 && !strcmp(s + strlen(s) - 3, "/.."));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *saved = stderr;
	int r;

	stderr = devnull ? devnull : stderr;	/* refusals say why: not 100000 times a second */
	r = pack_index_parse((const char *)data, size);
	stderr = saved;
	if (r == 0) {
		char *text = astrndup((const char *)data, size), *save = NULL;
		for (char *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
			char *w[8], commit[41];
			const char *dir, *err, *tgz;
			size_t n = words(line, w, 8);
			if (n == 4 && !strcmp(w[0], "file") && !plain_name(w[3]))
				abort();	/* a member name that would leave the bundle folder */
			if (n == 6 && !strcmp(w[0], "git") &&
			    (pack_git(w[3], w[4], w[5], commit, &dir, &err) != 1 || strncmp(dir, "/fuzz/", 6) ||
			     strlen(commit) != 40))
				abort();	/* an accepted git line the lookup does not find */
			if (n == 5 && !strcmp(w[0], "chart") &&
			    (!(tgz = pack_chart(w[2], w[3], w[4], &err)) || strncmp(tgz, "/fuzz/", 6)))
				abort();	/* an accepted chart line the lookup does not find */
			if (n > 6)
				abort();	/* a line with more words than any line has */
		}
	}
	pack_index_forget();
	arelease(base);
	return 0;
}
