/*
 * names.c - one check for the names idpmake reads from where it does not
 * trust them (names.h).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "base/names.h"
#include "base/util.h"

#define NAME_MAX_LEN 4096

/* a ".git" component as git would see it on some file system */
static int is_git(const char *p, size_t n)
{
	while (n && (p[n - 1] == '.' || p[n - 1] == ' '))
		n--;
	return (n == 4 && !strncasecmp(p, ".git", 4)) || (n == 5 && !strncasecmp(p, "git~1", 5));
}

const char *name_bad(const char *name, unsigned flags)
{
	const char *p = name;

	if (!*name)
		return "is empty";
	if (strlen(name) > NAME_MAX_LEN)
		return "is longer than 4096 bytes";
	for (const char *c = name; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			return "holds a control character";
	if (*name == '/')
		return "is absolute";
	if (!(flags & NAME_PATH) && strchr(name, '/'))
		return "holds a '/'";
	while (*p) {
		size_t n = strcspn(p, "/");
		if (!n)
			return "has an empty component";
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return "has a '.' or '..' component";
		if ((flags & NAME_NO_GIT) && is_git(p, n))
			return "names .git";
		p += n;
		if (*p == '/' && !*++p)
			return "ends with a '/'";
	}
	return NULL;
}

int name_has_part(const char *path, const char *part)
{
	size_t l = strlen(part);

	while (*path) {
		size_t n = strcspn(path, "/");
		if (n == l && !memcmp(path, part, l))
			return 1;
		path += n;
		if (*path == '/')
			path++;
	}
	return 0;
}

const char *name_shown(const char *name)
{
	char *out = aprintf("%*s", (int)(strlen(name) > NAME_MAX_LEN ? NAME_MAX_LEN : strlen(name)) * 4, ""), *o = out;

	for (const char *c = name; *c && c - name < NAME_MAX_LEN; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			o += sprintf(o, "\\x%02x", (unsigned char)*c);
		else
			*o++ = *c;
	*o = 0;
	return out;
}
