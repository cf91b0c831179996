/*
 * refs.h - the names a distro's packages use, checked (refs.c).
 */
#ifndef IDPMAKE_REFS_H
#define IDPMAKE_REFS_H

struct distro;

/* needs, needs cycles and profiles of a converted distro; errors by loc_error */
void check_references(struct distro *d);

#endif
