/* yaml.c - YAML trees with locations over libyaml (see yaml.h) */
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <yaml.h>

#include "base/intr.h"
#include "base/re.h"

#include "base/util.h"
#include "base/yaml.h"

/* a pool is a chain of blocks, like the arena, but owned by one tree */
struct pblock {
	struct pblock *next;
	size_t used, size;
	_Alignas(max_align_t) unsigned char data[];
};

struct ypool {
	struct pblock *b;
};

struct ypool *ypool_new(void)
{
	return xcalloc(1, sizeof(struct ypool));
}

static void pool_free(struct ypool *p, int wipe)
{
	if (!p)
		return;
	while (p->b) {
		struct pblock *b = p->b;
		p->b = b->next;
		if (wipe)
			memwipe(b->data, b->used);
		free(b);
	}
	free(p);
}

void ypool_free(struct ypool *p)
{
	pool_free(p, 0);
}

void ypool_free_wipe(struct ypool *p)
{
	pool_free(p, 1);
}

static void *palloc(struct ypool *p, size_t n)
{
	const size_t align = _Alignof(max_align_t);
	void *r;

	n = (n + align - 1) & ~(align - 1);
	if (!p->b || p->b->size - p->b->used < n) {
		size_t size = n > 65536 ? n : 65536;
		struct pblock *b = xmalloc(sizeof(*b) + size);
		b->used = 0;
		b->size = size;
		b->next = p->b;
		p->b = b;
	}
	r = p->b->data + p->b->used;
	p->b->used += n;
	return memset(r, 0, n);
}

static char *pstrndup(struct ypool *p, const char *s, size_t n)
{
	char *r = palloc(p, n + 1);
	memcpy(r, s, n);
	r[n] = 0;
	return r;
}

struct ynode *ynew(struct ypool *p, enum ytype t, struct loc loc)
{
	struct ynode *n = palloc(p, sizeof(*n));
	n->type = t;
	n->loc = loc;
	return n;
}

struct ynode *yscalar(struct ypool *p, const char *s, enum ystyle style, struct loc loc)
{
	struct ynode *n = ynew(p, Y_SCALAR, loc);
	n->slen = strlen(s);
	n->s = pstrndup(p, s, n->slen);
	n->style = style;
	return n;
}

static void grow(struct ypool *p, struct ynode *n, int map)
{
	size_t cap;

	if (n->n == 0)
		cap = 4;
	else if (n->n >= 4 && (n->n & (n->n - 1)) == 0)
		cap = n->n * 2;
	else
		return;
	struct ynode **v = palloc(p, cap * sizeof(*v));
	if (n->n)
		memcpy(v, n->v, n->n * sizeof(*v));
	n->v = v;
	if (map) {
		struct ynode **k = palloc(p, cap * sizeof(*k));
		if (n->n)
			memcpy(k, n->k, n->n * sizeof(*k));
		n->k = k;
	}
}

static void yappend(struct ypool *p, struct ynode *map, struct ynode *key, struct ynode *val)
{
	grow(p, map, 1);
	map->k[map->n] = key;
	map->v[map->n++] = val;
}

void yset(struct ypool *p, struct ynode *map, struct ynode *key, struct ynode *val)
{
	for (size_t i = 0; i < map->n; i++) {
		if (!strcmp(map->k[i]->s, key->s)) {
			map->v[i] = val;
			return;
		}
	}
	yappend(p, map, key, val);
}

void ypush(struct ypool *p, struct ynode *seq, struct ynode *item)
{
	grow(p, seq, 0);
	seq->v[seq->n++] = item;
}

struct ynode *ycopy(struct ypool *p, const struct ynode *n)
{
	struct ynode *c;

	if (!n)
		return NULL;
	if (n->type == Y_SCALAR) {
		c = yscalar(p, n->s, n->style, n->loc);
		return c;
	}
	c = ynew(p, n->type, n->loc);
	for (size_t i = 0; i < n->n; i++) {
		if (n->type == Y_MAP)
			yappend(p, c, ycopy(p, n->k[i]), ycopy(p, n->v[i]));	/* keys are unique already */
		else
			ypush(p, c, ycopy(p, n->v[i]));
	}
	return c;
}

struct ynode *yget(const struct ynode *map, const char *key)
{
	if (!map || map->type != Y_MAP)
		return NULL;
	for (size_t i = 0; i < map->n; i++)
		if (!strcmp(map->k[i]->s, key))
			return map->v[i];
	return NULL;
}

struct ynode *ypath(const struct ynode *n, const char *dotted)
{
	const char *s = dotted;

	while (n && *s) {
		const char *e = strchr(s, '.');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		const struct ynode *next = NULL;
		if (n->type != Y_MAP)
			return NULL;
		for (size_t i = 0; i < n->n; i++)
			if (n->k[i]->slen == len && !memcmp(n->k[i]->s, s, len))
				next = n->v[i];
		n = next;
		s += len + (e ? 1 : 0);
		if (!e)
			break;
	}
	return (struct ynode *)n;
}

int yisnull(const struct ynode *n)
{
	if (!n)
		return 1;
	if (n->type != Y_SCALAR || n->style != YS_PLAIN)
		return 0;
	return !n->slen || !strcmp(n->s, "~") || !strcmp(n->s, "null") ||
	       !strcmp(n->s, "Null") || !strcmp(n->s, "NULL");
}

int ystr_eq(const struct ynode *n, const char *s)
{
	return n && n->type == Y_SCALAR && !strcmp(n->s, s);
}

/*
 * Maps are checked and ordered by sorting once (issue 12 #11: scanning made
 * a map of n keys cost n^2; 80,000 keys took 27 s).  A key with its
 * position in the map, so that equal keys sort in document order.
 */
struct keyat {
	const char *s;
	size_t i;
	const void *node;	/* what the key belongs to, for the caller */
};

static int keyatcmp(const void *a, const void *b)
{
	const struct keyat *x = a, *y = b;
	int c = strcmp(x->s, y->s);
	return c ? c : (x->i > y->i) - (x->i < y->i);
}

static int is_merge_key(const yaml_node_t *k)
{
	return k->type == YAML_SCALAR_NODE && !strcmp((const char *)k->data.scalar.value, "<<") &&
	       (k->data.scalar.style == YAML_PLAIN_SCALAR_STYLE || k->data.scalar.style == YAML_ANY_SCALAR_STYLE);
}

/*
 * The position of the first pair of a libyaml map whose scalar key repeats
 * an earlier key (the one the scan in document order meets first), or the
 * number of pairs when there is none.  Merge keys and non-scalar keys are not
 * keys of the map here: convert deals with them in order.
 */
static size_t first_duplicate(yaml_document_t *doc, const yaml_node_t *map)
{
	size_t n = (size_t)(map->data.mapping.pairs.top - map->data.mapping.pairs.start), m = 0, dup = n;
	struct keyat *v = xmalloc((n ? n : 1) * sizeof(*v));

	for (size_t i = 0; i < n; i++) {
		yaml_node_t *k = yaml_document_get_node(doc, map->data.mapping.pairs.start[i].key);
		if (k && k->type == YAML_SCALAR_NODE && !is_merge_key(k))
			v[m++] = (struct keyat){ (const char *)k->data.scalar.value, i, NULL };
	}
	qsort(v, m, sizeof(*v), keyatcmp);
	for (size_t i = 1; i < m; i++)
		if (!strcmp(v[i - 1].s, v[i].s) && v[i].i < dup)
			dup = v[i].i;
	free(v);
	return dup;
}

/* add the keys of merged maps (<<) that the map does not have; the first merge wins */
static void apply_merges(struct ypool *p, struct ynode *n, struct ynode **merges, size_t nmerges)
{
	size_t own = n->n, ncand = 0, nwin = 0;
	const char **keys = xmalloc((own ? own : 1) * sizeof(*keys));
	struct keyat *cand, *win;

	for (size_t j = 0; j < nmerges; j++)
		if (merges[j]->type == Y_MAP)
			ncand += merges[j]->n;
	if (!ncand) {
		free(keys);
		return;
	}
	for (size_t i = 0; i < own; i++)
		keys[i] = n->k[i]->s;
	qsort(keys, own, sizeof(*keys), strptrcmp);
	cand = xmalloc(ncand * sizeof(*cand));
	win = xmalloc(ncand * sizeof(*win));
	ncand = 0;
	for (size_t j = 0; j < nmerges; j++)
		if (merges[j]->type == Y_MAP)
			for (size_t i = 0; i < merges[j]->n; i++, ncand++)
				cand[ncand] = (struct keyat){ merges[j]->k[i]->s, ncand, merges[j]->v[i] };
	qsort(cand, ncand, sizeof(*cand), keyatcmp);
	for (size_t i = 0; i < ncand; i++) {
		if (i && !strcmp(cand[i - 1].s, cand[i].s))
			continue;	/* an earlier merge has it */
		if (own && bsearch(&cand[i].s, keys, own, sizeof(*keys), strptrcmp))
			continue;	/* the map's own key wins */
		win[nwin++] = cand[i];
	}
	/* in the order the merges list them */
	for (size_t i = 0; i < nwin; i++)
		win[i].s = "";
	qsort(win, nwin, sizeof(*win), keyatcmp);
	ncand = 0;
	for (size_t j = 0, w = 0; j < nmerges && w < nwin; j++)
		if (merges[j]->type == Y_MAP)
			for (size_t i = 0; i < merges[j]->n; i++, ncand++)
				if (w < nwin && win[w].i == ncand) {
					yappend(p, n, merges[j]->k[i], merges[j]->v[i]);
					w++;
				}
	free(keys);
	free(cand);
	free(win);
}

/*
 * The limits on one document (idpmake-distro(5) DIAGNOSTICS), so that
 * hostile input ends as an error at its file:line, not as a run out of
 * memory or time:
 *   YAML_MAX_DEPTH   collections nested in each other;
 *   YAML_MAX_SCALAR  bytes of one scalar (the Kubernetes API takes no
 *                    object above about 1.5 MiB);
 *   YAML_MAX_ALIASED nodes that aliases may add to a document beyond the
 *                    nodes written in it: libyaml shares an anchored node,
 *                    the tree copies it at each alias, so ten levels of ten
 *                    aliases ("billion laughs") would make 10^10 nodes;
 *   YAML_MAX_ALIASED_BYTES  bytes of scalar text that aliases may add beyond
 *                    the document's own: a few thousand aliases of one long
 *                    scalar stay under the node limit but would copy it
 *                    gigabytes' worth.
 */
#define YAML_MAX_DEPTH 200
#define YAML_MAX_SCALAR (4u << 20)
#define YAML_MAX_ALIASED 100000
#define YAML_MAX_ALIASED_BYTES (4u << 20)

struct cctx {
	const char *file;
	int errs;		/* errors printed */
	size_t left;		/* nodes this document may still make */
	size_t bytes;		/* scalar bytes it may still make */
};

/*
 * convert libyaml's document node `id` to a tree; NULL after a located
 * error (a limit above, a key that is not a scalar, a duplicate key).
 */
static struct ynode *convert(struct ypool *p, yaml_document_t *doc, int id, int depth, struct cctx *cx)
{
	yaml_node_t *yn = yaml_document_get_node(doc, id);
	struct loc loc = { cx->file, 0, 0 };
	struct ynode *n;

	if (!yn)
		return NULL;
	if (interrupted()) return NULL;
	loc.line = (int)yn->start_mark.line + 1;
	loc.col = (int)yn->start_mark.column + 1;
	if (depth > YAML_MAX_DEPTH) {
		loc_error(loc, "YAML nested more than %d levels deep%s", YAML_MAX_DEPTH,
			  yn->type == YAML_SCALAR_NODE ? "" : " (or an alias that contains itself)");
		cx->errs++;
		return NULL;
	}
	if (!cx->left) {
		loc_error(loc, "YAML aliases expand to more than %d nodes beyond the document's own "
			  "(an alias bomb?)", YAML_MAX_ALIASED);
		cx->errs++;
		return NULL;
	}
	cx->left--;
	if (yn->type == YAML_SCALAR_NODE && yn->data.scalar.length > YAML_MAX_SCALAR) {
		loc_error(loc, "YAML scalar of %zu bytes is larger than the limit of %u bytes (4 MiB)",
			  yn->data.scalar.length, YAML_MAX_SCALAR);
		cx->errs++;
		return NULL;
	}
	switch (yn->type) {
	case YAML_SCALAR_NODE: {
		enum ystyle st = YS_PLAIN;
		if (yn->data.scalar.length > cx->bytes) {
			loc_error(loc, "YAML aliases expand to more than %u bytes of text beyond the document's own "
				  "(an alias bomb?)", YAML_MAX_ALIASED_BYTES);
			cx->errs++;
			return NULL;
		}
		cx->bytes -= yn->data.scalar.length;
		if (yn->data.scalar.style == YAML_SINGLE_QUOTED_SCALAR_STYLE ||
		    yn->data.scalar.style == YAML_DOUBLE_QUOTED_SCALAR_STYLE)
			st = YS_QUOTED;
		else if (yn->data.scalar.style == YAML_LITERAL_SCALAR_STYLE ||
			 yn->data.scalar.style == YAML_FOLDED_SCALAR_STYLE)
			st = YS_BLOCK;
		n = ynew(p, Y_SCALAR, loc);
		n->style = st;
		n->slen = yn->data.scalar.length;
		n->s = pstrndup(p, (const char *)yn->data.scalar.value, n->slen);
		return n;
	}
	case YAML_SEQUENCE_NODE:
		n = ynew(p, Y_SEQ, loc);
		for (yaml_node_item_t *it = yn->data.sequence.items.start;
		     it < yn->data.sequence.items.top; it++) {
			struct ynode *c = convert(p, doc, *it, depth + 1, cx);
			if (!c)
				return NULL;
			ypush(p, n, c);
		}
		return n;
	case YAML_MAPPING_NODE: {
		struct ynode *merges[64];
		size_t nmerges = 0, dup = first_duplicate(doc, yn);
		n = ynew(p, Y_MAP, loc);
		for (yaml_node_pair_t *pr = yn->data.mapping.pairs.start;
		     pr < yn->data.mapping.pairs.top; pr++) {
			struct ynode *k = convert(p, doc, pr->key, depth + 1, cx);
			struct ynode *v = k ? convert(p, doc, pr->value, depth + 1, cx) : NULL;
			if (!k || !v)
				return NULL;
			if (k->type != Y_SCALAR) {
				loc_error(k->loc, "mapping keys must be scalars");
				cx->errs++;
				return NULL;
			}
			if (k->style == YS_PLAIN && !strcmp(k->s, "<<")) {
				/* merge key: applied after the map's own keys, which win */
				if (v->type == Y_MAP)
					merges[nmerges++ % 64] = v;
				else if (v->type == Y_SEQ)
					for (size_t i = 0; i < v->n && nmerges < 64; i++)
						merges[nmerges++] = v->v[i];
				continue;
			}
			if ((size_t)(pr - yn->data.mapping.pairs.start) == dup) {
				loc_error(k->loc, "duplicate key '%s'", k->s);
				cx->errs++;
				return NULL;
			}
			yappend(p, n, k, v);
		}
		if (nmerges)
			apply_merges(p, n, merges, nmerges < 64 ? nmerges : 64);
		return n;
	}
	default:
		return NULL;
	}
}

/*
 * The documents of one parser, one at a time: each non-empty one converted
 * into pool p, or into a pool of its own (p NULL) that is freed once fn
 * has it.  fn returns < 0 to stop.
 */
static int parse_docs(yaml_parser_t *parser, struct ypool *p, const char *file, const char *text, size_t len,
		      int (*fn)(void *arg, struct ynode *doc), void *arg)
{
	int ret = 0;

	for (;;) {
		yaml_document_t doc;
		yaml_node_t *root;

		if (!yaml_parser_load(parser, &doc)) {
			struct loc loc = { file, (int)parser->problem_mark.line + 1,
					   (int)parser->problem_mark.column + 1 };
			size_t at = parser->problem_mark.index;
			/* libyaml's "found character that cannot start any token" for a tab: say what it is */
			if ((text && at < len && text[at] == '\t') || (parser->problem && strstr(parser->problem, "tab")))
				loc_error(loc, "malformed YAML: a tab is not allowed for indentation: indent with spaces "
					       "(libyaml: %s)", parser->problem ? parser->problem : "syntax error");
			else
				loc_error(loc, "malformed YAML: %s%s%s", parser->problem ? parser->problem : "syntax error",
					  parser->context ? " " : "", parser->context ? parser->context : "");
			ret = -1;
			break;
		}
		root = yaml_document_get_root_node(&doc);
		if (!root) {
			yaml_document_delete(&doc);
			break;
		}
		if (!(root->type == YAML_SCALAR_NODE && root->data.scalar.length == 0)) {
			struct cctx cx = { file, 0, (size_t)(doc.nodes.top - doc.nodes.start) + YAML_MAX_ALIASED,
					   YAML_MAX_ALIASED_BYTES };
			struct ypool *dp = p ? p : ypool_new();
			for (yaml_node_t *x = doc.nodes.start; x < doc.nodes.top; x++)
				if (x->type == YAML_SCALAR_NODE)
					cx.bytes += x->data.scalar.length;
			struct ynode *t = convert(dp, &doc, 1, 0, &cx);
			if (!t) {
				if (!p)
					ypool_free(dp);
				if (interrupted()) { yaml_document_delete(&doc); ret = -1; break; }
				struct loc loc = { file, (int)root->start_mark.line + 1, 1 };
				if (!cx.errs)
					loc_error(loc, "malformed YAML document");
				yaml_document_delete(&doc);
				ret = -1;
				break;
			}
			yaml_document_delete(&doc);
			if (!(t->type == Y_SCALAR && yisnull(t)))
				ret = fn(arg, t);
			if (!p)
				ypool_free(dp);
			if (ret < 0)
				break;
			continue;
		}
		yaml_document_delete(&doc);
	}
	return ret;
}

struct docvec {
	struct ypool *p;
	struct ynode **v;
	size_t n;
};

static int collect(void *arg, struct ynode *t)
{
	struct docvec *d = arg;

	if (d->n == 0 || (d->n & (d->n - 1)) == 0) {
		struct ynode **nv = palloc(d->p, (d->n ? d->n * 2 : 1) * sizeof(*nv));
		if (d->n)
			memcpy(nv, d->v, d->n * sizeof(*nv));
		d->v = nv;
	}
	d->v[d->n++] = t;
	return 0;
}

int yaml_parse(struct ypool *p, const char *file, const char *text, size_t len,
	       struct ynode ***docs, size_t *ndocs)
{
	yaml_parser_t parser;
	struct docvec d = { p, NULL, 0 };
	int ret;

	if (!yaml_parser_initialize(&parser))
		fatal("libyaml: out of memory");
	yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	ret = parse_docs(&parser, p, file, text, len, collect, &d);
	yaml_parser_delete(&parser);
	*docs = d.v;
	*ndocs = d.n;
	return ret;
}

int yaml_parse_each(const char *file, const char *text, size_t len, FILE *in,
		    int (*fn)(void *arg, struct ynode *doc), void *arg)
{
	yaml_parser_t parser;
	int ret;

	if (!yaml_parser_initialize(&parser))
		fatal("libyaml: out of memory");
	if (in)
		yaml_parser_set_input_file(&parser, in);
	else
		yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
	ret = parse_docs(&parser, NULL, file, in ? NULL : text, in ? 0 : len, fn, arg);
	yaml_parser_delete(&parser);
	return ret;
}

/* ---- emitting ---- */

/* a map's keys in sorted order, each with its position (xmalloc'd) */
static struct keyat *sorted_keys(const struct ynode *n)
{
	struct keyat *v = xmalloc((n->n ? n->n : 1) * sizeof(*v));

	for (size_t i = 0; i < n->n; i++)
		v[i] = (struct keyat){ n->k[i]->s, i, NULL };
	qsort(v, n->n, sizeof(*v), keyatcmp);
	return v;
}

static int write_handler(void *data, unsigned char *buffer, size_t size)
{
	buf_add(data, buffer, size);
	return 1;
}

/*
 * The one scalar-type resolver: what a plain scalar's text means to a YAML
 * 1.1 reader (libyaml's, and Kubernetes' go-yaml: yes/no/on/off/y/n are
 * booleans, 0755 is octal) or a YAML 1.2 one (0o17, .inf).  The emitter
 * quotes every string that resolves to something other than a string, so
 * 'v1', "v1" and v1 all come out the same; argocd.c turns scalars into
 * JSON values by it.
 */
static const struct {
	enum ykind kind;
	int truth;
	const char *re;
} kinds[] = {
	{ YK_NULL, 0, "^(|~|null|Null|NULL)$" },
	{ YK_BOOL, 1, "^(true|True|TRUE|yes|Yes|YES|on|On|ON|y|Y)$" },
	{ YK_BOOL, 0, "^(false|False|FALSE|no|No|NO|off|Off|OFF|n|N)$" },
	{ YK_INT, 0, "^([-+]?[0-9][0-9_]*|0x[0-9a-fA-F_]+|0o[0-7]+|0b[01_]+|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+)$" },
	{ YK_FLOAT, 0, "^([-+]?[0-9][0-9_]*(\\.[0-9_]*)?([eE][-+]?[0-9]+)?|[-+]?\\.[0-9][0-9_]*([eE][-+]?[0-9]+)?|"
		       "[-+]?\\.(inf|Inf|INF)|\\.(nan|NaN|NAN)|[-+]?[0-9][0-9_]*(:[0-5]?[0-9])+\\.[0-9_]*)$" },
	{ YK_OTHER, 0, "^(=|<<|[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}.*)$" },	/* value, merge, timestamp */
};
static struct re *kind_re[sizeof(kinds) / sizeof(kinds[0])];
static pthread_once_t kinds_once = PTHREAD_ONCE_INIT;

static void kinds_init(void)
{
	const char *err;

	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (!(kind_re[i] = re_compile(kinds[i].re, &err)))
			fatal("internal regex: %s", err);
}

/* what the text s[0..n) means written plain */
static enum ykind resolve_text(const char *s, size_t n, int *truth)
{
	pthread_once(&kinds_once, kinds_init);
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (re_match(kind_re[i], s, n)) {
			if (truth)
				*truth = kinds[i].truth;
			return kinds[i].kind;
		}
	return YK_STR;
}

enum ykind yresolve(const struct ynode *n, int *truth)
{
	if (!n || n->type != Y_SCALAR || n->style != YS_PLAIN)
		return YK_STR;
	return resolve_text(n->s, n->slen, truth);
}

/* would this text, written plain, be read as something other than a string? */
static int looks_typed(const struct ynode *n)
{
	return resolve_text(n->s, n->slen, NULL) != YK_STR;
}

static int emit_node(yaml_emitter_t *em, const struct ynode *n)
{
	yaml_event_t ev;

	if (interrupted()) return -1;
	if (n->type == Y_SCALAR) {
		yaml_scalar_style_t st = YAML_ANY_SCALAR_STYLE;
		int plain = n->style == YS_PLAIN || !looks_typed(n), quoted = !plain || n->style != YS_PLAIN;
		if (n->style == YS_BLOCK && !strchr(n->s, '\t')) {
			/* a literal block cannot carry trailing spaces on a line */
			int ok = 1;
			for (const char *c = n->s; *c; c++)
				if (*c == ' ' && (c[1] == '\n' || !c[1]))
					ok = 0;
			if (ok && strchr(n->s, '\n'))
				st = YAML_LITERAL_SCALAR_STYLE;
		}
		if (!yaml_scalar_event_initialize(&ev, NULL, NULL, (yaml_char_t *)n->s,
						  (int)n->slen, plain, quoted, st))
			return -1;
		return yaml_emitter_emit(em, &ev) ? 0 : -1;
	}
	if (n->type == Y_SEQ) {
		yaml_sequence_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_SEQUENCE_STYLE);
		if (!yaml_emitter_emit(em, &ev))
			return -1;
		for (size_t i = 0; i < n->n; i++)
			if (emit_node(em, n->v[i]) < 0)
				return -1;
		yaml_sequence_end_event_initialize(&ev);
		return yaml_emitter_emit(em, &ev) ? 0 : -1;
	}
	{
		struct keyat *keys = sorted_keys(n);
		int r = 0;

		yaml_mapping_start_event_initialize(&ev, NULL, NULL, 1, YAML_BLOCK_MAPPING_STYLE);
		if (!yaml_emitter_emit(em, &ev))
			r = -1;
		for (size_t i = 0; !r && i < n->n; i++)
			if (emit_node(em, n->k[keys[i].i]) < 0 || emit_node(em, n->v[keys[i].i]) < 0)
				r = -1;
		if (!r) {
			yaml_mapping_end_event_initialize(&ev);
			if (!yaml_emitter_emit(em, &ev))
				r = -1;
		}
		free(keys);
		return r;
	}
}

int yaml_emit(const struct ynode *doc, struct buf *out)
{
	yaml_emitter_t em;
	yaml_event_t ev;
	int r = -1;

	if (!yaml_emitter_initialize(&em))
		fatal("libyaml: out of memory");
	yaml_emitter_set_output(&em, write_handler, out);
	yaml_emitter_set_unicode(&em, 1);
	yaml_emitter_set_width(&em, -1);
	yaml_emitter_set_indent(&em, 2);
	yaml_stream_start_event_initialize(&ev, YAML_UTF8_ENCODING);
	if (!yaml_emitter_emit(&em, &ev))
		goto out;
	yaml_document_start_event_initialize(&ev, NULL, NULL, NULL, 1);
	if (!yaml_emitter_emit(&em, &ev))
		goto out;
	if (emit_node(&em, doc) < 0)
		goto out;
	yaml_document_end_event_initialize(&ev, 1);
	if (!yaml_emitter_emit(&em, &ev))
		goto out;
	yaml_stream_end_event_initialize(&ev);
	if (!yaml_emitter_emit(&em, &ev))
		goto out;
	r = 0;
out:
	yaml_emitter_delete(&em);
	return r;
}

static void canon_str(const char *s, size_t n, struct buf *out)
{
	buf_addc(out, '"');
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' || s[i] == '\\')
			buf_addc(out, '\\');
		buf_addc(out, s[i]);
	}
	buf_addc(out, '"');
}

void ycanon(const struct ynode *n, struct buf *out)
{
	if (!n) {
		buf_adds(out, "~");
		return;
	}
	if (n->type == Y_SCALAR) {
		/* plain and quoted differ only where the plain text reads as another type */
		if (n->style == YS_PLAIN && looks_typed(n))
			buf_adds(out, "=");
		canon_str(n->s, n->slen, out);
	} else if (n->type == Y_SEQ) {
		buf_addc(out, '[');
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				buf_addc(out, ',');
			ycanon(n->v[i], out);
		}
		buf_addc(out, ']');
	} else {
		struct keyat *keys = sorted_keys(n);
		buf_addc(out, '{');
		for (size_t i = 0; i < n->n; i++) {
			if (i)
				buf_addc(out, ',');
			canon_str(n->k[keys[i].i]->s, n->k[keys[i].i]->slen, out);
			buf_addc(out, ':');
			ycanon(n->v[keys[i].i], out);
		}
		buf_addc(out, '}');
		free(keys);
	}
}
