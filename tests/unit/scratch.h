/*
 * scratch.h - the unit tests' scratch folder: `tmp` (made by
 * scratch_setup, removed by scratch_end), `statedir` and `errpath` inside
 * it, put() to write a file there, and capture_start()/capture_end() to
 * read what the code under test printed on stderr.  Included by one test
 * file each: everything is static.
 */
#ifndef IDPMAKE_SCRATCH_H
#define IDPMAKE_SCRATCH_H

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/util.h"

static char *tmp;		/* scratch folder, removed at the end */
static const char *statedir;	/* tmp/state */
static const char *errpath;	/* tmp/stderr.txt: what capture_start redirects to */
static int saved_fd = -1;

/* make the scratch folder $TMPDIR/NAME.XXXXXX (/tmp without TMPDIR) */
static void scratch_setup(const char *name)
{
	const char *dir = getenv("TMPDIR");
	char *tmpl = aprintf("%s/%s.XXXXXX", dir && *dir ? dir : "/tmp", name);

	if (!mkdtemp(tmpl)) {
		perror("mkdtemp");
		exit(2);
	}
	tmp = xstrdup(tmpl);
	statedir = path_join(tmp, "state");
	errpath = path_join(tmp, "stderr.txt");
	if (mkdirs(statedir) < 0) {
		perror(statedir);
		exit(2);
	}
}

static void scratch_end(void)
{
	rmtree(tmp);
	free(tmp);
	afree_all();
}

/* write tmp/rel (folders made as needed); its path */
static __attribute__((unused)) const char *put(const char *rel, const char *content)
{
	const char *path = path_join(tmp, rel);

	if (mkdirs(path_dir(path)) < 0 || write_file_atomic(path, content, strlen(content)) < 0) {
		perror(path);
		exit(2);
	}
	return path;
}

static __attribute__((unused)) void capture_start(void)
{
	int fd;

	fflush(stderr);
	saved_fd = dup(2);
	if ((fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600)) < 0) {
		perror(errpath);
		exit(2);
	}
	dup2(fd, 2);
	close(fd);
}

/* stderr back; what was printed since capture_start (arena) */
static __attribute__((unused)) const char *capture_end(void)
{
	size_t len;
	char *text;
	const char *r;

	fflush(stderr);
	dup2(saved_fd, 2);
	close(saved_fd);
	text = read_file(errpath, &len);
	r = astrdup(text ? text : "");
	free(text);
	return r;
}

#endif
