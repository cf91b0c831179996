/*
 * runrule.c - what every renderer does with YAML text (renderers.h): the
 * package's rewrites (PCRE2), the text parsed (libyaml) into objects, and a
 * rule's command run with its stdout taken as that text.  render.c and
 * helm.c call it; it calls neither.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/exec.h"
#include "base/intr.h"
#include "distro/manifest.h"
#include "base/re.h"
#include "render/render.h"
#include "render/renderers.h"
#include "base/util.h"
#include "base/yaml.h"

/*
 * how long a rewrite may make a text of n bytes: a pattern that matches
 * everywhere (the empty string) with a long replacement would otherwise
 * multiply it by the replacement's length
 */
#define REWRITE_MAX(n) ((n) * 4 + ((size_t)4 << 20))

/* apply rewrites to text; returns malloc'd text or NULL with *err */
static char *rewrite(const struct package *p, const struct step *s, const struct distro *d,
		     char *text, size_t *len, const char **err)
{
	struct vars v;

	if (!p->nrewrite)
		return text;
	vars_init(&v, d, s->cluster, p, s->namespace);
	for (size_t i = 0; i < p->nrewrite; i++) {
		const char *cerr, *repl = expand(p->rewrite[i].replace, p->rewrite[i].loc, &v);
		struct re *re = re_compile(p->rewrite[i].match, &cerr);
		struct buf out = BUF_INIT;
		int r;
		if (!re || !repl) {
			*err = aprintf("rewrite %d: %s", (int)i + 1, re ? "undefined variable" : cerr);
			re_free(re);
			free(text);
			return NULL;
		}
		if ((r = re_subst(re, text, *len, repl, REWRITE_MAX(*len), &out)) < 0) {
			*err = r == -2 ? aprintf("rewrite '%s' would make the text larger than %zu bytes "
						 "(4 times its %zu bytes and 4 MiB more; does it match the empty string?)",
						 p->rewrite[i].match, REWRITE_MAX(*len), *len)
				       : aprintf("rewrite '%s' failed", p->rewrite[i].match);
			re_free(re);
			buf_release(&out);
			free(text);
			return NULL;
		}
		re_free(re);
		free(text);
		*len = out.len;
		text = buf_detach(&out);
	}
	return text;
}

char *render_rewrite(const struct package *p, const struct step *s, const struct distro *d,
		     char *text, size_t *len, const char **err)
{
	return rewrite(p, s, d, text, len, err);
}

/* one parsed document: an object, or a List's items, or an error */
struct parse {
	struct objects *o;
	int errs;	/* this call's errors: workers share no count (issue 12 #3) */
};

static int one_doc(void *arg, struct ynode *doc)
{
	struct parse *pa = arg;
	struct ynode *kind = yget(doc, "kind"), *items = yget(doc, "items");

	if (interrupted())
		return -1;
	if (doc->type != Y_MAP) {
		loc_error(doc->loc, "a Kubernetes object must be a map");
		pa->errs++;
		return 0;
	}
	if (kind && kind->type == Y_SCALAR && strlen(kind->s) > 4 && !strcmp(kind->s + strlen(kind->s) - 4, "List") &&
	    items && items->type == Y_SEQ) {
		for (size_t j = 0; j < items->n; j++)
			add_obj(pa->o, items->v[j]);
		return 0;
	}
	add_obj(pa->o, doc);
	return 0;
}

/* parse YAML text (or, text NULL, the stream in) into objects, a document at a time */
int parse_objects(struct objects *o, const char *what, const char *text, size_t len, FILE *in,
		  const char **err)
{
	struct parse pa = { o, 0 };

	if (yaml_parse_each(what, text, len, in, one_doc, &pa) < 0) {
		if (interrupted()) return *err = "interrupted", -1;
		*err = aprintf("%s: malformed YAML (see above)", what);
		return -1;
	}
	if (pa.errs) {
		*err = aprintf("%s: not a Kubernetes object (see above)", what);
		return -1;
	}
	return 0;
}

int run_rule(const struct render_ctx *rc, struct step *s, const char *const *argv, struct objects *o,
		    const char **err)
{
	struct buf out = BUF_INIT;
	struct proc p = { 0 };
	char *text;
	size_t len;

	p.argv = argv;
	p.log = s->log;
	p.out = &out;
	p.out_cap = (size_t)512 << 20;
	p.timeout = 600;
	s->command = proc_command(argv);
	if (rc->verbose)
		fprintf(stderr, "idpmake: %s: %s\n", s->id, s->command);
	if (proc_run(&p) < 0) {
		*err = proc_failure(&p);
		buf_release(&out);
		return -1;
	}
	len = out.len;
	text = buf_detach(&out);
	if (!(text = rewrite(s->pkg, s, rc->d, text, &len, err)))
		return -1;
	if (parse_objects(o, aprintf("output of %s", argv[0]), text, len, NULL, err) < 0) {
		free(text);
		return -1;
	}
	free(text);
	return 0;
}

/* nodes made by a renderer (renderers.h): no place in a file */
static struct loc noloc;

struct ynode *ynode_quoted(struct ypool *p, const char *s)
{
	return yscalar(p, s, YS_QUOTED, noloc);
}

struct ynode *ynode_plain(struct ypool *p, const char *s)
{
	return yscalar(p, s, YS_PLAIN, noloc);
}

void ynode_put(struct ypool *p, struct ynode *m, const char *k, struct ynode *v)
{
	yset(p, m, ynode_plain(p, k), v);
}
