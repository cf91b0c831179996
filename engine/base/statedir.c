/*
 * statedir.c - whether a state or bundle folder is safe to use: the
 * user's own, not writable by its group or others, not a symlink another
 * user made (statedir.h, state_dir_check).
 */
#include <errno.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/statedir.h"
#include "base/util.h"

int state_dir_check(const char *dir, const char *what)
{
	struct stat st;
	struct passwd *pw;
	mode_t m;

	/* a symlink another user made (in a folder without the sticky bit) picks which folder is used */
	if (lstat(dir, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid()) {
		pw = getpwuid(st.st_uid);
		return error("%s %s is a symlink that %s (uid %lu) made, not you: another user could pick the folder"
			     " idpmake uses as you; use a folder of your own (--state DIR, or move the archive)", what, dir,
			     pw ? aprintf("user '%s'", pw->pw_name) : "another user", (unsigned long)st.st_uid);
	}
	if (stat(dir, &st) < 0)
		return errno == ENOENT ? 0 : error("cannot read %s %s:", what, dir);
	if (!S_ISDIR(st.st_mode))
		return error("%s %s is not a folder", what, dir);
	if (st.st_uid != geteuid()) {
		pw = getpwuid(st.st_uid);
		return error("%s %s belongs to %s (uid %lu), not to you: another user could change what idpmake runs"
			     " as you; use a folder of your own (--state DIR, or move the archive)", what, dir,
			     pw ? aprintf("user '%s'", pw->pw_name) : "another user", (unsigned long)st.st_uid);
	}
	if ((m = st.st_mode & 022)) {
		pw = getpwuid(st.st_uid);
		return error("%s %s (owner %s) can be written by %s (mode %04o): another user could have changed"
			     " what idpmake runs as you; check what is in it, then 'chmod go-w' it, or remove it",
			     what, dir, pw ? pw->pw_name : aprintf("uid %lu", (unsigned long)st.st_uid),
			     m == 022 ? "its group and others" : m == 020 ? "its group" : "others",
			     (unsigned)(st.st_mode & 07777));
	}
	return 0;
}
