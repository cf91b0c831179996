/* rule.h - renderers: the built-in rule files and a distro's own */
#ifndef IDPMAKE_RULE_H
#define IDPMAKE_RULE_H

#include "distro/model.h"

/* the built-in rules (rules/NAME.yaml built into the binary) */
struct rule **rules_builtin(size_t *n);
/* parse a rule file; NULL after a located error */
struct rule *rule_load(const char *file, const char *text, size_t len);

#endif
