/*
 * cmd-distros.c - `distros`: the distros `extends: NAME` can name, in the
 * order it searches them (manifest.c find_distro): the folders of
 * IDPMAKE_DISTRO_PATH, then the installed ones (PREFIX/share/idpmake/distros),
 * then those built into the binary (embed.h).  A name found again later is
 * shadowed: `extends` takes the first.
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cmd/cmd.h"
#include "distro/embed.h"
#include "base/util.h"
#include "base/yaml.h"

#ifndef IDPMAKE_PREFIX
#define IDPMAKE_PREFIX "/usr/local"
#endif

struct found {
	const char *name, *source, *path, *description, *shadowed_by;
};

static struct found *list;
static size_t nlist;

/* the description of a distro.yaml's text, or "" */
static const char *describe(const char *file, const char *text, size_t len)
{
	struct ypool *p = ypool_new();
	struct ynode **docs;
	size_t n;
	const char *d = "";

	/* a broken file's syntax error is printed, and it is listed without a description */
	if (yaml_parse(p, file, text, len, &docs, &n) == 0 && n && docs[0]->type == Y_MAP) {
		const struct ynode *x = yget(docs[0], "description");
		if (x && x->type == Y_SCALAR)
			d = astrdup(x->s);
	}
	ypool_free(p);
	return d;
}

static void add(const char *name, const char *source, const char *path, const char *description)
{
	struct found f = { astrdup(name), source, path, description, NULL };

	for (size_t i = 0; i < nlist; i++)
		if (!strcmp(list[i].name, name) && !list[i].shadowed_by) {
			f.shadowed_by = list[i].path ? list[i].path : list[i].source;
			break;
		}
	list = agrow(list, nlist, sizeof(*list));
	list[nlist++] = f;
}

static int namecmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* every DIR/NAME/distro.yaml, by name */
static void scan_dir(const char *dir, const char *source)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	const char **names = NULL;
	size_t n = 0;

	if (!d)
		return;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.' || access(aprintf("%s/%s/distro.yaml", dir, e->d_name), R_OK))
			continue;
		names = agrow(names, n, sizeof(*names));
		names[n++] = astrdup(e->d_name);
	}
	closedir(d);
	if (n)
		qsort(names, n, sizeof(*names), namecmp);
	for (size_t i = 0; i < n; i++) {
		const char *file = aprintf("%s/%s/distro.yaml", dir, names[i]);
		size_t len;
		char *text = read_file(file, &len);
		add(names[i], source, aprintf("%s/%s", dir, names[i]), text ? describe(file, text, len) : "");
		free(text);
	}
}

int cmd_distros(struct ctx *c)
{
	const char *env = getenv("IDPMAKE_DISTRO_PATH");
	size_t wname = 4, wsource = 6;

	if (c->ntargets) {
		fprintf(stderr, "idpmake: distros takes no arguments\n");
		return 2;
	}
	if (env && *env) {
		char *copy = astrdup(env), *save = NULL;
		for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save))
			scan_dir(d, "IDPMAKE_DISTRO_PATH");
	}
	scan_dir(IDPMAKE_PREFIX "/share/idpmake/distros", "installed");
	/* built in: distros/NAME/distro.yaml (embedded_files is sorted by path) */
	for (size_t i = 0; i < embedded_count; i++) {
		const struct embedded *e = &embedded_files[i];
		const char *rest, *slash;
		if (strncmp(e->path, "distros/", 8))
			continue;
		rest = e->path + 8;
		if (!(slash = strchr(rest, '/')) || strcmp(slash, "/distro.yaml"))
			continue;
		add(astrndup(rest, (size_t)(slash - rest)), "built-in", NULL,
		    describe(e->path, (const char *)e->data, e->len));
	}

	if (c->json) {
		json_t *a = json_array();
		char *text;
		for (size_t i = 0; i < nlist; i++) {
			json_t *o = json_object();
			json_object_set_new(o, "name", json_string(list[i].name));
			json_object_set_new(o, "source", json_string(list[i].source));
			json_object_set_new(o, "path", list[i].path ? json_string(list[i].path) : json_null());
			json_object_set_new(o, "description", json_string(list[i].description));
			json_object_set_new(o, "shadowed_by",
					    list[i].shadowed_by ? json_string(list[i].shadowed_by) : json_null());
			json_array_append_new(a, o);
		}
		text = json_dumps(a, JSON_INDENT(2));
		printf("%s\n", text ? text : "[]");
		free(text);
		json_decref(a);
		return 0;
	}
	for (size_t i = 0; i < nlist; i++) {
		if (strlen(list[i].name) > wname)
			wname = strlen(list[i].name);
		if (strlen(list[i].source) > wsource)
			wsource = strlen(list[i].source);
	}
	printf("%-*s  %-*s  %s\n", (int)wname, "NAME", (int)wsource, "SOURCE", "DESCRIPTION");
	for (size_t i = 0; i < nlist; i++) {
		printf("%-*s  %-*s  %s\n", (int)wname, list[i].name, (int)wsource, list[i].source,
		       list[i].description);
		if (list[i].path)
			printf("%-*s  %-*s  at %s\n", (int)wname, "", (int)wsource, "", list[i].path);
		if (list[i].shadowed_by)
			printf("%-*s  %-*s  shadowed: extends: %s takes %s\n", (int)wname, "", (int)wsource, "",
			       list[i].name, list[i].shadowed_by);
	}
	return 0;
}
