/* statedir.h - whether a state or bundle folder is safe to use (statedir.c) */
#ifndef IDPMAKE_STATEDIR_H
#define IDPMAKE_STATEDIR_H

/*
 * WHAT DIR (a state folder, a bundle folder), when it exists, is a folder
 * of this user's that group and others cannot write (as git refuses a
 * repository another user owns), and not a symlink another user made:
 * 0, or -1 after naming it and its owner or
 * its mode.  state_open, state_lock and state_remove check their folder so.
 */
int state_dir_check(const char *dir, const char *what);

#endif
