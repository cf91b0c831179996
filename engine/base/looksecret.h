/* looksecret.h - does a named value look like a secret (explain masks it, the state keeps no copy) */
#ifndef IDPMAKE_LOOKSECRET_H
#define IDPMAKE_LOOKSECRET_H

/*
 * 1 when `name` (a variable's name or a field's path) holds token,
 * password, passwd, secret, credential or key in any case; or `value` holds
 * one of those words but key, a PEM block, or a word (split at blanks,
 * quotes and '=') that looks like a credential: a URL with a password, a
 * known token prefix (ghp_, github_pat_, glpat-, xox?-, sk-, AKIA, eyJ) and
 * more, or 20 or more characters without '/' that mix letters and digits.
 * It errs on the side of masking: a false positive costs only a value
 * explain would have shown.
 */
int looks_secret(const char *name, const char *value);

#endif
