/* conv.h - YAML nodes to typed fields, with located errors (conv.c) */
#ifndef IDPMAKE_CONV_H
#define IDPMAKE_CONV_H

#include "distro/model.h"
#include "base/yaml.h"

/* an error for each key of map not in allowed[n] */
void check_keys(const struct ynode *map, const char *const *allowed, size_t n, const char *what);
#define CHECK_KEYS(map, what, ...) do { \
	static const char *const keys_[] = { __VA_ARGS__ }; \
	check_keys(map, keys_, sizeof(keys_) / sizeof(keys_[0]), what); \
} while (0)

/* each prints a located error when n is of another type, and returns a default */
int want(const struct ynode *n, enum ytype t, const char *what);		/* 1: n is of type t */
const char *str(const struct ynode *n, const char *what);			/* NULL: absent */
int boolean(const struct ynode *n, const char *what, int def);
int integer(const struct ynode *n, const char *what, int def);		/* >= 0 */
struct strlist strs(const struct ynode *n, const char *what);
/* drop the repeats of a list of names, keeping each first (aliases can repeat a list 100,000 times) */
void strs_uniq(struct strlist *l);
struct kvlist kvs(const struct ynode *n, const char *what);
const char *label(const struct ynode *n, const char *what);		/* a DNS-1123 label */

#endif
