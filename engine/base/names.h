/*
 * names.h - the one check of a file or folder name idpmake did not make
 * itself: an entry of a GitOps tree (lazycache.c), a folder of the keys
 * index (remotekeys.c), a member of a bundle or chart archive (unpack.c),
 * a render's extra file (objects.c).  Such a name is used to write files
 * and is printed, so it may lead nowhere outside the folder it is read
 * into, and hold no control character (a newline would forge a line of a
 * bundle's header, an escape would reach the terminal).
 */
#ifndef IDPMAKE_NAMES_H
#define IDPMAKE_NAMES_H

#define NAME_PATH	1	/* '/'-separated components; else one component, no '/' */
#define NAME_NO_GIT	2	/* no ".git" component, as git sees it: any case, trailing
				   dots or spaces, NTFS's "GIT~1" */

/*
 * NULL when `name` is a clean relative name; else why not: empty, longer
 * than 4096 bytes, a control character (below 0x20, or 0x7f), absolute, an
 * empty, "." or ".." component, a '/' without NAME_PATH, ".git" with
 * NAME_NO_GIT.  The reason never quotes the name.
 */
const char *name_bad(const char *name, unsigned flags);

/* name as it may be printed: each control character as \\xNN, at most 4096 bytes of it (arena) */
const char *name_shown(const char *name);

/* does the path have the component `part` (compared exactly)? */
int name_has_part(const char *path, const char *part);

#endif
