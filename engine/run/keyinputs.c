/* keyinputs.c - variables and distro fields named in a key's inputs (keyinputs.h) */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/looksecret.h"
#include "distro/manifest.h"
#include "render/planner.h"
#include "run/keyinputs.h"
#include "graph/state.h"
#include "base/util.h"

int keyin_detail(const char *name)
{
	return !strncmp(name, "var ", 4) || !strncmp(name, "distro ", 7);
}

/* the state's salt for masked values: read, made once by a run that may write, or this process's own */
static const unsigned char *salt(struct planner *pl)
{
	static unsigned char s[16];
	static const char *of;	/* the state folder s is of */
	const char *path;
	size_t len;
	char *text;
	int fd;

	if (of && !strcmp(of, pl->statedir))
		return s;
	of = astrdup(pl->statedir);
	path = path_join(pl->statedir, "explain-salt");
	if ((text = read_file(path, &len)) && len == sizeof(s)) {
		memcpy(s, text, sizeof(s));
		free(text);
		return s;
	}
	free(text);
	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) >= 0) {
		if (read(fd, s, sizeof(s)) != (ssize_t)sizeof(s))
			memset(s, 0, sizeof(s));
		close(fd);
	}
	if (!pl->dry_run && write_file_private(path, s, sizeof(s)) < 0)
		warn("cannot write %s: explain cannot tell which secret-looking value changed", path);
	return s;
}

static void add_value(struct planner *pl, struct inputs *in, const char *name, const char *shown, const char *value)
{
	int masked = looks_secret(shown, value);
	struct hash h;

	if (masked) {
		struct hasher *hs = hasher_new();
		hasher_add(hs, salt(pl), 16);
		hasher_adds(hs, name);
		hasher_adds(hs, value ? value : "\001(undefined)");
		h = hasher_end(hs);
	} else {
		h = value ? hash_bytes(value, strlen(value)) : hash_bytes("\001(undefined)", 13);
	}
	inputs_add_value(in, name, h, value ? value : "(undefined)", masked);
}

void keyin_var(struct planner *pl, struct inputs *in, const char *name, const char *value)
{
	add_value(pl, in, aprintf("var %s", name), name, value);
}

void keyin_field(struct planner *pl, struct inputs *in, const char *path, const char *value)
{
	add_value(pl, in, aprintf("distro %s", path), path, value);
}

/* ---- a canonical spec's fields ------------------------------------------------ */

/* the end of a "..." string at p (on its '"'), its text unescaped into out; NULL when malformed */
static const char *canon_string(const char *p, struct buf *out)
{
	if (*p++ != '"')
		return NULL;
	for (; *p && *p != '"'; p++) {
		if (*p == '\\' && p[1])
			p++;
		if (out)
			buf_addc(out, *p);
	}
	return *p == '"' ? p + 1 : NULL;
}

static const char *spec_node(struct planner *pl, struct inputs *in, const char *path, const char *p, int depth)
{
	if (depth > 32)
		return NULL;
	if (*p == '{' || *p == '[') {
		char close = *p == '{' ? '}' : ']';
		size_t i = 0;
		if (*++p == close) {
			keyin_field(pl, in, path, close == '}' ? "{}" : "[]");
			return p + 1;
		}
		for (;; i++) {
			const char *sub;
			if (close == '}') {
				struct buf k = BUF_INIT;
				if (!(p = canon_string(p, &k)) || *p++ != ':') {
					buf_release(&k);
					return NULL;
				}
				sub = aprintf("%s.%s", path, k.s ? k.s : "");
				buf_release(&k);
			} else {
				sub = aprintf("%s[%zu]", path, i);
			}
			if (!(p = spec_node(pl, in, sub, p, depth + 1)))
				return NULL;
			if (*p == close)
				return p + 1;
			if (*p++ != ',')
				return NULL;
		}
	}
	if (*p == '~') {
		keyin_field(pl, in, path, "~");
		return p + 1;
	}
	{
		struct buf v = BUF_INIT;
		const char *e;
		if (*p == '=')
			p++;
		if ((e = canon_string(p, &v)))
			keyin_field(pl, in, path, astrdup(v.s ? v.s : ""));
		buf_release(&v);
		return e;
	}
}

void keyin_spec(struct planner *pl, struct inputs *in, const char *prefix, const char *spec)
{
	struct inputs fields = { 0 };
	const char *end;

	if (!spec || *spec != '{' || !(end = spec_node(pl, &fields, prefix, spec, 0)) || *end)
		return;
	for (size_t i = 0; i < fields.n; i++)
		in->v = agrow(in->v, in->n, sizeof(*in->v)), in->v[in->n++] = fields.v[i];
}

/* ---- a render's variables and destination ------------------------------------- */

/* add name to l unless it holds it already */
static void add_name(struct strlist *l, const char *name)
{
	for (size_t i = 0; i < l->n; i++)
		if (!strcmp(l->v[i], name))
			return;
	l->v = agrow(l->v, l->n, sizeof(*l->v));
	l->v[l->n++] = name;
}

static void render_vars(struct planner *pl, struct inputs *in, const struct step *s)
{
	const struct distro *d = pl->g->d;
	const struct package *p = s->pkg;
	struct strlist names = { 0 };
	struct vars v;

	vars_init(&v, d, s->cluster, p, s->namespace);
	if (p->values.n) {
		/* values files may name any variable: all of them are in the key (vars_hash) */
		for (size_t l = 1; l < v.n; l++)
			for (size_t i = 0; i < v.layer[l]->n; i++)
				add_name(&names, v.layer[l]->v[i].key);
	} else {
		for (int t = 0; t < 2; t++) {
			const char *text = t ? p->rule->definition : p->spec;
			for (const char *q = text ? strstr(text, "${") : NULL; q; q = strstr(q, "${")) {
				const char *e = strchr(q + 2, '}');
				char *name;
				if (!e)
					break;
				name = astrndup(q + 2, (size_t)(e - q - 2));
				add_name(&names, name);
				q = e + 1;
			}
		}
	}
	for (size_t i = 0; i < names.n; i++)
		keyin_var(pl, in, names.v[i], vars_get(&v, names.v[i]));
}

void keyin_render(struct planner *pl, struct inputs *in, const struct step *s, int uses_vars)
{
	const struct distro *d = pl->g->d;
	const struct rule *r = s->pkg->rule;
	const char *c = aprintf("clusters.%s", s->cluster->name);

	if (uses_vars)
		render_vars(pl, in, s);
	keyin_spec(pl, in, aprintf("packages.%s", s->pkg->name), s->pkg->spec);
	if (r->builtin != RENDER_HELM && r->builtin != RENDER_ARGOCD_APP)
		return;
	keyin_field(pl, in, aprintf("%s.server", c), s->cluster->server);
	keyin_field(pl, in, aprintf("%s.name", c), s->cluster->argo_name);
	keyin_field(pl, in, "argocd.namespace", d->argocd.namespace);
	keyin_field(pl, in, "argocd.project", d->argocd.project);
	keyin_field(pl, in, "argocd.app-name", d->argocd.app_name);
	keyin_field(pl, in, "git.branch", d->git.branch);
	keyin_field(pl, in, "git.remote", pl->rc.remote_url);
}

/* ---- what changed ---------------------------------------------------------------- */

/* does an entry of v start with prefix */
static int has_prefix(const struct strlist *v, const char *prefix)
{
	for (size_t i = 0; i < v->n; i++)
		if (!strncmp(v->v[i], prefix, strlen(prefix)))
			return 1;
	return 0;
}

/* keyinputs.h */
void keyin_changed(struct planner *pl, struct step *s, const struct inputs *now)
{
	static const char *const covered[][2] = { { "vars changed", "var " }, { "package spec changed", "distro " },
						  { "destination changed", "distro " } };
	struct inputs old, cmp = { 0 };
	int details = 0;

	s->changed.n = 0;
	if (state_step_inputs(pl->st, s->id, &old) < 0 || !old.n)
		return;
	for (size_t i = 0; i < old.n; i++)
		details |= keyin_detail(old.v[i].name);
	for (size_t i = 0; i < now->n; i++)
		if (details || !keyin_detail(now->v[i].name))
			inputs_add(&cmp, now->v[i].name, now->v[i].h);
	inputs_diff(&old, &cmp, &s->changed);
	if (s->changed.n > 1) {
		size_t j = 0;
		struct strlist all = s->changed;
		for (size_t i = 0; i < all.n; i++) {
			int drop = !strcmp(all.v[i], "files changed");	/* the per-file entries name it better */
			for (size_t k = 0; k < sizeof(covered) / sizeof(*covered); k++)
				drop |= !strcmp(all.v[i], covered[k][0]) && has_prefix(&all, covered[k][1]);
			if (!drop)
				s->changed.v[j++] = all.v[i];
		}
		s->changed.n = j;
		/* a variable or a field first: it is the cause, the namespace or the destination it makes follows */
		for (size_t i = 1; i < j; i++)
			if (keyin_detail(s->changed.v[i]) && !keyin_detail(s->changed.v[0])) {
				const char *first = s->changed.v[i];
				memmove(s->changed.v + 1, s->changed.v, i * sizeof(*s->changed.v));
				s->changed.v[0] = first;
				break;
			}
	}
}
