/* keyinputs.h - the named inputs explain shows beside a key: variables and distro fields, with values */
#ifndef IDPMAKE_KEYINPUTS_H
#define IDPMAKE_KEYINPUTS_H

#include "base/hash.h"

struct planner;
struct step;

/*
 * Entries "var NAME" and "distro PATH" explain a key's aggregate inputs
 * ("vars", "package spec", "destination"): each with its value, which the
 * state keeps beside its hash so that explain can name the old value too.
 * A value that looks secret (looksecret.h) is masked: its hash only, keyed
 * with the state's random salt (STATE/explain-salt), so the state holds no
 * copy of it and no hash a dictionary could be run against; explain shows
 * "***".  They are details: key_of leaves them out, the aggregates stand
 * for them in the key, so the key is what it was before they existed.
 */
int keyin_detail(const char *name);
void keyin_var(struct planner *pl, struct inputs *in, const char *name, const char *value);
void keyin_field(struct planner *pl, struct inputs *in, const char *path, const char *value);
/*
 * The fields of a package's canonical spec (ycanon's text) as entries
 * "distro PREFIX.FIELD.SUB", a sequence's items as FIELD[i]; nothing when
 * the text is not canonical YAML.
 */
void keyin_spec(struct planner *pl, struct inputs *in, const char *prefix, const char *spec);
/* the variables a render of s uses (as vars_hash), and the fields of its destination */
void keyin_render(struct planner *pl, struct inputs *in, const struct step *s, int uses_vars);
/*
 * s->changed: the inputs of s's last success that differ from now's, by
 * name ("var region changed"), a variable or a field first.  An aggregate
 * ("files", "vars", "package spec", "destination") gives way to the
 * entries that name the change better; a state recorded before variables
 * and fields were named (no such entry) is diffed without them, so it reads
 * as it did.
 */
void keyin_changed(struct planner *pl, struct step *s, const struct inputs *now);

#endif
