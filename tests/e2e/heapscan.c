/*
 * heapscan.c - LD_PRELOAD for the tests, looking for the bytes of
 * HEAPSCAN_NEEDLE_FILE (a secret) in the process's memory; each find is
 * appended to HEAPSCAN_OUT as a line:
 *   ADDRESS freed   free() of a block that holds the secret alone (a copy
 *                   of it, as jansson or strdup make one), not zeroed first;
 *   ADDRESS REGION  at the process's very end (after its atexit handlers: a
 *                   preloaded library's destructor runs last), a copy in a
 *                   writable private mapping that is no file's (the heap,
 *                   thread arenas and stacks), not in the environment the
 *                   process was started with.
 * No malloc of its own.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <malloc.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char needle[512], maps[1 << 20];
static size_t nlen;
static char *envlo, *envhi;	/* the initial environment's strings */
extern char **environ;
extern void __libc_free(void *p);

__attribute__((constructor)) static void init(void)
{
	const char *f = getenv("HEAPSCAN_NEEDLE_FILE");
	int fd = f ? open(f, O_RDONLY) : -1;
	ssize_t n;

	if (fd < 0)
		return;
	n = read(fd, needle, sizeof(needle) - 1);
	close(fd);
	while (n > 0 && (needle[n - 1] == '\n' || needle[n - 1] == '\r'))
		n--;
	nlen = n > 0 ? (size_t)n : 0;
	for (char **e = environ; e && *e; e++) {
		if (!envlo || *e < envlo)
			envlo = *e;
		if (*e + strlen(*e) + 1 > envhi)
			envhi = *e + strlen(*e) + 1;
	}
}

static void say(const char *out, uintptr_t at, const char *region, size_t rlen)
{
	char line[600];
	int fd = open(out, O_WRONLY | O_APPEND | O_CREAT, 0600), k = 0;
	static const char hex[] = "0123456789abcdef";

	if (fd < 0)
		return;
	for (int s = 60; s >= 0; s -= 4)
		line[k++] = hex[(at >> s) & 15];
	line[k++] = ' ';
	if (rlen > 500)
		rlen = 500;
	memcpy(line + k, region, rlen);
	k += (int)rlen;
	line[k++] = '\n';
	if (write(fd, line, (size_t)k) < 0)
		k = 0;
	close(fd);
}

void free(void *p)
{
	const char *out;

	if (p && nlen && malloc_usable_size(p) > nlen && !memcmp(p, needle, nlen) && !((char *)p)[nlen] &&
	    (out = getenv("HEAPSCAN_OUT")))
		say(out, (uintptr_t)p, "freed", 5);
	__libc_free(p);
}

__attribute__((destructor)) static void fini(void)
{
	const char *out = getenv("HEAPSCAN_OUT");
	size_t len = 0;
	ssize_t n;
	int fd;

	if (!nlen || !out || (fd = open("/proc/self/maps", O_RDONLY)) < 0)
		return;
	while (len < sizeof(maps) - 1 && (n = read(fd, maps + len, sizeof(maps) - 1 - len)) > 0)
		len += (size_t)n;
	close(fd);
	maps[len] = 0;
	for (char *l = maps, *e; l < maps + len; l = e + 1) {
		unsigned long lo, hi, inode = 0;
		char perms[5] = "", *p;
		const char *path;
		if (!(e = strchr(l, '\n')))
			e = maps + len;
		*e = 0;
		lo = strtoul(l, &p, 16);
		hi = strtoul(p + 1, &p, 16);
		memcpy(perms, p + 1, 4);
		/* offset dev inode path */
		p += 6;
		strtoul(p, &p, 16);
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
		inode = strtoul(p, &p, 10);
		while (*p == ' ')
			p++;
		path = p;
		if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p')
			continue;
		if (inode && strcmp(path, "[heap]") && strncmp(path, "[stack", 6))
			continue;	/* a file's data: not where a copy is left */
		if (!strcmp(path, "[vvar]") || !strcmp(path, "[vsyscall]"))
			continue;
		for (char *s = (char *)lo; s + nlen <= (char *)hi;) {
			char *f = memmem(s, (size_t)((char *)hi - s), needle, nlen);
			if (!f)
				break;
			if ((f < needle || f >= needle + sizeof(needle)) && (f < envlo || f >= envhi))
				say(out, (uintptr_t)f, *path ? path : "(anonymous)", strlen(*path ? path : "(anonymous)"));
			s = f + 1;
		}
	}
}
