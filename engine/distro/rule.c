/*
 * rule.c - rule files: how a package type is rendered.
 *
 *     rule: NAME                  the `type:` that selects it
 *     description: TEXT
 *     command: [ARGV...]          run with the package folder as ${src};
 *                                 YAML objects on stdout; [] = in-process
 *     version: [ARGV...]          its output joins every key of the rule
 *     inputs: [GLOB...]           files under the source that are hashed
 *
 * The built-in types are rule files too (rules/NAME.yaml, built into the
 * binary); their whole text is part of every key, so an idpmake that renders
 * differently re-renders.
 */
#include <string.h>

#include "base/buf.h"
#include "distro/embed.h"
#include "distro/manifest.h"
#include "distro/rule.h"
#include "base/util.h"
#include "base/yaml.h"

static const char *const builtin_names[] = { NULL, "manifests", "kustomize", "helm", "argocd-app" };

static int argv_list(const struct ynode *n, struct strlist *out, const char *what)
{
	if (!n || yisnull(n))
		return 0;
	if (n->type != Y_SEQ) {
		loc_error(n->loc, "'%s' must be a list of arguments", what);
		return -1;
	}
	out->v = amalloc((n->n + 1) * sizeof(*out->v));
	out->loc = amalloc((n->n + 1) * sizeof(*out->loc));
	for (size_t i = 0; i < n->n; i++) {
		if (n->v[i]->type != Y_SCALAR) {
			loc_error(n->v[i]->loc, "'%s' arguments must be strings", what);
			return -1;
		}
		out->loc[out->n] = n->v[i]->loc;
		out->v[out->n++] = astrdup(n->v[i]->s);
	}
	return 0;
}

struct rule *rule_load(const char *file, const char *text, size_t len)
{
	static const char *const keys[] = { "rule", "description", "command", "version", "inputs" };
	struct ypool *p = ypool_new();
	struct ynode **docs, *n, *x;
	size_t ndocs;
	struct rule *r = NULL;
	int before = loc_errors;

	if (yaml_parse(p, file, text, len, &docs, &ndocs) < 0)
		goto out;
	if (ndocs != 1 || docs[0]->type != Y_MAP) {
		loc_error((struct loc){ file, 1, 1 }, "a rule file is one YAML map");
		goto out;
	}
	n = docs[0];
	for (size_t i = 0; i < n->n; i++) {
		size_t j;
		for (j = 0; j < 5; j++)
			if (!strcmp(n->k[i]->s, keys[j]))
				break;
		if (j == 5) {
			const char *s = closest(n->k[i]->s, keys, 5);
			loc_error(n->k[i]->loc, "unknown key '%s' in a rule%s%s%s", n->k[i]->s,
				  s ? "; did you mean '" : "", s ? s : "", s ? "'?" : "");
		}
	}
	r = amalloc(sizeof(*r));
	r->loc = n->loc;
	if (!(x = yget(n, "rule")) || x->type != Y_SCALAR || !x->slen) {
		loc_error(n->loc, "a rule file needs 'rule: NAME'");
		goto out;
	}
	r->name = astrdup(x->s);
	if ((x = yget(n, "description")) && x->type == Y_SCALAR)
		r->description = astrdup(x->s);
	argv_list(yget(n, "command"), &r->command, "command");
	argv_list(yget(n, "version"), &r->version, "version");
	argv_list(yget(n, "inputs"), &r->inputs, "inputs");
	if (!yget(n, "command"))
		loc_error(n->loc, "rule '%s' needs a 'command'", r->name);
	{
		struct buf b = BUF_INIT;
		ycanon(n, &b);
		r->definition = astrdup(b.s);
		buf_release(&b);
	}
out:
	ypool_free(p);
	return loc_errors > before ? NULL : r;
}

struct rule **rules_builtin(size_t *n)
{
	static struct rule *rules[8];
	static size_t count;

	if (!count) {
		for (int i = RENDER_MANIFESTS; i <= RENDER_ARGOCD_APP; i++) {
			char *path = aprintf("rules/%s.yaml", builtin_names[i]);
			const struct embedded *e = embedded_find(path);
			struct rule *r;
			if (!e)
				fatal("built-in rule %s is missing from this build", path);
			r = rule_load(aprintf("<built-in>/%s", path), (const char *)e->data, e->len);
			if (!r)
				fatal("built-in rule %s does not parse", path);
			r->builtin = i;
			rules[count++] = r;
		}
	}
	*n = count;
	return rules;
}
