/*
 * kubectl.c - `deploy: kubectl`: a package applied with
 * `kubectl apply --server-side` as its sync step, for what Argo CD cannot
 * sync itself: Argo CD into an empty cluster, and the Gitea that is the
 * GitOps remote (graph.c puts these steps before the push and every
 * registration).  The key is a sync's: the render's output, how it is
 * applied and where, so an unchanged render is not applied again.
 *
 * The render's objects, unpacked and each marked as the distro's
 * (annotation idpmake.io/distro), are applied in phases, each with the
 * distro's own field manager, idpmake/DISTRO, after a look at whose they
 * are (kubeowner.h: another distro's objects are refused unless --adopt,
 * which writes this distro's mark over the other's), taken before anything
 * is applied (with CRDs: the later phases' after the first):
 *   0. the package's namespace, with a field manager of its own
 *      (idpmake-namespace), which makes no distro its owner;
 *   1. Namespaces and CustomResourceDefinitions
 *      (then `kubectl wait --for condition=established` on the CRDs);
 *   2. objects without a namespace with `-n NAMESPACE` (as Argo CD's
 *      destination namespace), those with one as they are;
 *   3. with `sync: {wait: healthy}` (the default), `kubectl rollout status`
 *      of every Deployment, StatefulSet and DaemonSet, within sync.timeout.
 * Every command's output goes to the step's log.
 */
#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "base/buf.h"
#include "base/exec.h"
#include "base/pem.h"
#include "base/hash.h"
#include "argo/kubectl.h"
#include "distro/create.h"
#include "argo/kubeowner.h"
#include "graph/adopt.h"
#include "base/url.h"
#include "base/util.h"
#include "base/yaml.h"

#define NS_MANAGER "idpmake-namespace"	/* the package's namespace's field manager: no distro's */
#define OWNERS_CAP (256u << 20)	/* bytes of `kubectl get -o json` read (CRDs are large) */

/* ---- where: the kubeconfig and the kube context ------------------------------ */

static const char *flag_context;
static const char *manager = "idpmake/";	/* the distro's field manager (kubeowner.h) */
static int adopt;

static size_t nseen;	/* kubectl_target's answers so far (below) */

void kubectl_set_context(const char *name)
{
	flag_context = name && *name ? name : NULL;
	nseen = 0;	/* an answer before it may have named another context */
}

void kubectl_set_owner(const char *distro, int adopt_others)
{
	manager = kubeowner_manager(distro);
	adopt = adopt_others;
}

/* the kubeconfig files, as kubectl finds them: NULL-terminated, in the arena */
static const char **kubeconfig_files(const struct cluster *cl)
{
	const char *env = getenv("KUBECONFIG"), *home = getenv("HOME");
	const char **v;
	size_t n = 0, max = 2;

	for (const char *p = env ? env : ""; *p; p++)
		max += *p == ':';
	v = amalloc((max + 1) * sizeof(*v));
	if (cl->reg.kubeconfig) {
		v[0] = cl->reg.kubeconfig;
		return v;
	}
	for (const char *p = env ? env : ""; *p;) {
		size_t len = strcspn(p, ":");
		if (len)
			v[n++] = astrndup(p, len);
		p += len + (p[len] == ':');
	}
	if (!n)
		v[0] = aprintf("%s/.kube/config", home && *home ? home : ".");
	return v;
}

static const char *yscalar_of(const struct ynode *m, const char *key)
{
	const struct ynode *n = m && m->type == Y_MAP ? yget(m, key) : NULL;
	return n && n->type == Y_SCALAR && !yisnull(n) ? astrndup(n->s, n->slen) : NULL;
}

/* `field` of the entry named `name` in the list `list` of the loaded files, the first that has it */
static const struct ynode *entry(struct ynode **docs, size_t n, const char *list, const char *name, const char *field)
{
	for (size_t i = 0; i < n; i++) {
		const struct ynode *l = docs[i] && docs[i]->type == Y_MAP ? yget(docs[i], list) : NULL;
		for (size_t k = 0; l && l->type == Y_SEQ && k < l->n; k++)
			if (l->v[k]->type == Y_MAP && ystr_eq(yget(l->v[k], "name"), name))
				return yget(l->v[k], field);
	}
	return NULL;
}

/* "https://Host:443/" and "https://host:443" are one server; so are "https://h" and "https://h:443" */
static const char *server_norm(const char *s)
{
	const char *b = url_base(s, "https", NULL);
	char *out;
	size_t n;

	if (!b)
		return s;
	out = astrdup(b);
	for (char *p = out; *p; p++)
		*p = (char)tolower((unsigned char)*p);
	n = strlen(out);
	if (n > 4 && !strcmp(out + n - 4, ":443") && !strncmp(out, "https:", 6))
		out[n - 4] = 0;
	return out;
}

static int in_cluster_server(const char *s)
{
	return !s || !strcmp(server_norm(s), "https://kubernetes.default.svc");
}

const char *kubectl_context_flag(void)
{
	return flag_context;
}

const char *kubectl_created_conflict(const struct cluster *cl)
{
	if (!cl->create.kind || !flag_context || !strcmp(flag_context, create_context(cl)))
		return NULL;
	return aprintf("cluster '%s' is the kind cluster '%s' idpmake creates (context %s), and --kube-context says "
		       "'%s': refusing to apply elsewhere", cl->name, cl->create.kind, create_context(cl), flag_context);
}

static const struct cluster **seen_cl;
static struct kube_target **seen_t;

static const struct kube_target *resolve(const struct cluster *cl, const char **err)
{
	struct kube_target *t;
	const char **files;
	struct ynode **docs = NULL;
	struct ypool *pool;
	size_t ndocs = 0;
	const struct ynode *c;
	int any = 0;

	for (size_t i = 0; i < nseen; i++)
		if (seen_cl[i] == cl)
			return seen_t[i];
	t = amalloc(sizeof(*t));
	files = kubeconfig_files(cl);
	pool = ypool_new();
	for (size_t i = 0; files[i]; i++) {
		size_t len, nd;
		struct ynode **d;
		char *text = read_file(files[i], &len);
		if (!text) {
			if (errno != ENOENT || cl->reg.kubeconfig) {
				*err = aprintf("cannot read the kubeconfig %s: %s", files[i], strerror(errno));
				ypool_free_wipe(pool);	/* a kubeconfig: tokens, keys */
				return NULL;
			}
			continue;
		}
		any = 1;
		t->kubeconfig = t->kubeconfig ? aprintf("%s:%s", t->kubeconfig, files[i]) : files[i];
		if (yaml_parse(pool, files[i], text, len, &d, &nd) < 0) {
			memwipe(text, len);
			free(text);
			ypool_free_wipe(pool);	/* a kubeconfig: tokens, keys */
			*err = aprintf("cannot parse the kubeconfig %s (see above)", files[i]);
			return NULL;
		}
		memwipe(text, len);
		free(text);
		docs = agrow(docs, ndocs, sizeof(*docs));
		docs[ndocs++] = nd ? d[0] : NULL;
	}
	t->kubeconfig_arg = cl->reg.kubeconfig;
	if (cl->create.kind) {
		/* a cluster idpmake creates has the context kind gives it, whatever else is current */
		if ((*err = kubectl_created_conflict(cl))) {
			ypool_free_wipe(pool);	/* a kubeconfig: tokens, keys */
			return NULL;
		}
		t->context = create_context(cl);
		t->from = "create.kind";
	} else if (flag_context) {
		t->context = flag_context;
		t->from = "--kube-context";
	} else if (cl->kube_context) {
		t->context = cl->kube_context;
		t->from = "kube-context";
	} else if (cl->reg.context) {
		t->context = cl->reg.context;
		t->from = "register.context";
	} else {
		for (size_t i = 0; i < ndocs && !t->context; i++)
			t->context = yscalar_of(docs[i], "current-context");
		if (t->context && !*t->context)
			t->context = NULL;
		t->from = "current-context";
	}
	if (!any) {
		ypool_free_wipe(pool);	/* a kubeconfig: tokens, keys */
		if (t->context && strcmp(t->from, "current-context")) {
			*err = aprintf("cluster '%s': kube context '%s' (%s), and there is no kubeconfig (%s)", cl->name,
				       t->context, t->from, files[0]);
			return NULL;
		}
		if (!in_cluster_server(cl->server)) {
			*err = aprintf("cluster '%s' is at %s, and there is no kubeconfig (%s) to reach it: give the cluster "
				       "register.kubeconfig, or set KUBECONFIG", cl->name, cl->server, files[0]);
			return NULL;
		}
		t->from = "no kubeconfig: kubectl's in-cluster configuration";
		goto done;
	}
	if (!t->context) {
		ypool_free_wipe(pool);	/* a kubeconfig: tokens, keys */
		*err = aprintf("cluster '%s': the kubeconfig %s has no current-context: give the cluster kube-context: "
			       "NAME, or --kube-context NAME", cl->name, t->kubeconfig);
		return NULL;
	}
	if (!(c = entry(docs, ndocs, "contexts", t->context, "context"))) {
		ypool_free_wipe(pool);	/* a kubeconfig: tokens, keys */
		*err = aprintf("cluster '%s': the kubeconfig %s has no context '%s' (%s)", cl->name, t->kubeconfig,
			       t->context, t->from);
		return NULL;
	}
	{
		const char *cname = yscalar_of(c, "cluster");
		const struct ynode *kc = cname ? entry(docs, ndocs, "clusters", cname, "cluster") : NULL;
		t->server = yscalar_of(kc, "server");
	}
	ypool_free_wipe(pool);	/* a kubeconfig: tokens, keys */
	if (!in_cluster_server(cl->server) &&
	    (!t->server || strcmp(server_norm(t->server), server_norm(cl->server)))) {
		*err = aprintf("cluster '%s' is at %s, and the kube context '%s' (%s, in %s) is %s: refusing to apply "
			       "there; give the cluster kube-context: NAME (or register.kubeconfig and context) for %s",
			       cl->name, cl->server, t->context, t->from, t->kubeconfig,
			       t->server ? t->server : "at no server", cl->server);
		return NULL;
	}
done:
	seen_cl = agrow(seen_cl, nseen, sizeof(*seen_cl));
	seen_t = agrow(seen_t, nseen, sizeof(*seen_t));
	seen_cl[nseen] = cl;
	seen_t[nseen++] = t;
	return t;
}

/* the workers apply and run hooks at once; a created cluster's target is first resolved there */
const struct kube_target *kubectl_target(const struct cluster *cl, const char **err)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	const struct kube_target *t;

	pthread_mutex_lock(&lock);
	t = resolve(cl, err);
	pthread_mutex_unlock(&lock);
	return t;
}

/* KUBECONFIG for a hook of cluster cl: see kubectl.h */
const char *kubectl_hook_kubeconfig(const struct cluster *cl, const char *dir, const char **err)
{
	const struct kube_target *t;
	const char *path, *text;
	struct buf q = BUF_INIT;

	*err = NULL;
	if (!cl->create.kind && !cl->kube_context && !cl->reg.context && !flag_context)
		return NULL;	/* kubectl's current context, as the cluster's packages use */
	if (!(t = kubectl_target(cl, err)) || !t->context || !t->kubeconfig)
		return NULL;
	/* the context as a single-quoted YAML scalar: any text but a line break */
	if (strpbrk(t->context, "\n\r")) {
		*err = aprintf("cluster '%s': the kube context name has a line break", cl->name);
		return NULL;
	}
	for (const char *p = t->context; *p; p++) {
		if (*p == '\'')
			buf_adds(&q, "''");
		else
			buf_add(&q, p, 1);
	}
	path = aprintf("%s/kube/%s.kubeconfig", dir, cl->name);
	text = aprintf("# written by idpmake: a hook of cluster '%s' runs kubectl in this context (the first file of "
		       "KUBECONFIG names it; the others hold it)\napiVersion: v1\nkind: Config\ncurrent-context: '%s'\n",
		       cl->name, q.s ? q.s : "");
	buf_release(&q);
	if (mkdirs(path_dir(path)) < 0 || write_file_copy(path, text, strlen(text)) < 0) {
		*err = aprintf("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	return aprintf("%s:%s", path, t->kubeconfig);
}

/* an argv list in the arena (NULL-terminated), so nothing is left to free */
struct argl {
	const char **v;
	size_t n;
};

static void push(struct argl *a, const char *s)
{
	a->v = agrow(a->v, a->n, sizeof(*a->v));
	a->v[a->n++] = s;
	a->v = agrow(a->v, a->n, sizeof(*a->v));	/* room for the NULL after it */
	a->v[a->n] = NULL;
}

struct hash kubectl_key(const struct step *s, struct hash output)
{
	struct hasher *h = hasher_new();
	const struct package *p = s->pkg;

	/* the objects as applied: marked as the distro's (kubeowner.h), which the render's output is not */
	hasher_adds(h, "kubectl apply --server-side --force-conflicts --field-manager=");
	hasher_adds(h, manager);
	hasher_adds(h, KUBEOWNER_MARK);
	hasher_addh(h, output);
	hasher_adds(h, s->namespace);
	hasher_adds(h, s->cluster->name);
	hasher_adds(h, s->cluster->reg.kubeconfig);
	hasher_adds(h, s->cluster->reg.context);
	{
		/* where it goes: another kube context is another apply */
		const char *err;
		const struct kube_target *t = kubectl_target(s->cluster, &err);
		hasher_adds(h, t ? t->context : "");
		hasher_adds(h, t ? t->server : "");
	}
	hasher_add(h, &p->sync.wait_healthy, sizeof(int));
	hasher_add(h, &p->sync.timeout, sizeof(int));
	return hasher_end(h);
}

/* kubectl [--kubeconfig F] [--context C]: the context always named, never whatever is current when kubectl runs */
static void target_argv(const struct kube_target *t, struct argl *av)
{
	push(av, "kubectl");
	if (t->kubeconfig_arg) {
		push(av, "--kubeconfig");
		push(av, t->kubeconfig_arg);
	}
	if (t->context) {
		push(av, "--context");
		push(av, t->context);
	}
}

/* argv: kubectl [--kubeconfig F] [--context C] ARGS... (NULL-terminated); its stdout into out unless NULL */
static int kubectl_out(const struct step *s, const char *const *args, int timeout, struct buf *out,
		       const char **err)
{
	struct argl av = { 0 };
	struct proc p = { 0 };
	const struct kube_target *t = kubectl_target(s->cluster, err);

	if (!t)
		return -1;
	target_argv(t, &av);
	for (size_t i = 0; args[i]; i++)
		push(&av, args[i]);
	p.argv = av.v;
	p.log = s->log;
	p.out = out;
	p.out_cap = OWNERS_CAP;
	p.timeout = timeout;
	if (proc_run(&p) < 0) {
		*err = aprintf("kubectl %s: %s", args[0], proc_failure(&p));
		return -1;
	}
	return 0;
}

static int kubectl(const struct step *s, const char *const *args, int timeout, const char **err)
{
	return kubectl_out(s, args, timeout, NULL, err);
}

/*
 * Before a phase is applied: who applied its objects (kubeowner.h)?
 * `kubectl get -o json --ignore-not-found` over the phase's files.
 */
static int owners(const struct step *s, const struct argl *files, const char *ns, int timeout,
		  struct kube_adopted *adopted, const char **err)
{
	struct argl a = { 0 };
	struct buf out;
	int rc, n = 0;

	push(&a, "get");
	push(&a, "-o");
	push(&a, "json");
	push(&a, "--ignore-not-found");
	push(&a, "--show-managed-fields");	/* kubectl leaves them out otherwise */
	if (ns) {
		push(&a, "-n");
		push(&a, ns);
	}
	for (size_t i = 0; i + 1 < files->n; i += 2) {
		push(&a, "-f");
		push(&a, files->v[i + 1]);
		n++;
	}
	if (!n)
		return 0;
	buf_init(&out);
	if ((rc = kubectl_out(s, a.v, timeout, &out, err)) < 0)
		*err = aprintf("kubectl get (who applied the objects before)%s", *err + strlen("kubectl get"));
	else
		rc = kubeowner_check(out.s, out.len, manager, !hash_zero(s->old_key), adopt, adopted, err);
	buf_release(&out);
	return rc;
}

const char *kubectl_check(const struct cluster *cl, int timeout)
{
	const struct kube_target *t;
	const char *err, *why = NULL, *where;
	struct argl av = { 0 };
	struct proc p = { 0 };
	struct buf out;
	int rc;

	if (!(t = kubectl_target(cl, &err)))
		return NULL;
	target_argv(t, &av);
	push(&av, "get");
	push(&av, "--raw");
	push(&av, "/api");
	push(&av, aprintf("--request-timeout=%ds", timeout > 10 ? timeout / 2 : 5));
	buf_init(&out);
	p.argv = av.v;
	p.out = &out;	/* the answer: not wanted, kept off the message (kubectl's stderr is) */
	p.out_cap = 1 << 20;
	p.timeout = timeout;
	rc = proc_run_why(&p, &why);
	buf_release(&out);
	if (rc == 0)
		return NULL;
	where = t->context ? aprintf("the kube context '%s' (%s; server %s; in %s)", t->context, t->from,
				     t->server ? t->server : "none", t->kubeconfig)
			   : "kubectl's in-cluster configuration";
	return aprintf("cluster '%s': %s does not answer (kubectl get --raw /api: %s); check the server, the "
		       "credential and that the cluster runs, or give the cluster kube-context: NAME", cl->name, where,
		       why);
}

json_t *kubectl_get_json(const struct cluster *cl, const char *const *args, const char **err)
{
	const struct kube_target *t;
	const char *why = NULL;
	struct argl av = { 0 };
	struct proc p = { 0 };
	struct buf out;
	json_t *doc;
	int rc;

	if (!(t = kubectl_target(cl, err)))
		return NULL;
	target_argv(t, &av);
	for (size_t i = 0; args[i]; i++)
		push(&av, args[i]);
	push(&av, "--output=json");
	push(&av, "--request-timeout=20s");
	buf_init(&out);
	p.argv = av.v;
	p.out = &out;	/* what it read, on stdout alone; kubectl's stderr is its message */
	p.out_cap = 64 << 20;
	p.timeout = 30;
	rc = proc_run_why(&p, &why);
	doc = rc < 0 ? NULL : json_loadb(out.s ? out.s : "", out.len, 0, NULL);
	if (rc < 0)
		*err = aprintf("kubectl %s on cluster '%s' (%s): %s", proc_command(args), cl->name,
			       t->context ? aprintf("context %s, %s", t->context, t->from) :
			       "no kubeconfig: kubectl's in-cluster configuration", why);
	else if (!doc)
		*err = aprintf("kubectl %s on cluster '%s': its answer is not JSON", proc_command(args), cl->name);
	if (out.s)
		memwipe(out.s, out.len);	/* it may be a Secret */
	buf_release(&out);
	return doc;
}

void kubectl_json_wipe(json_t *v)
{
	const char *k;
	json_t *x;
	size_t i;

	if (json_is_string(v))
		memwipe((char *)json_string_value(v), json_string_length(v));
	else if (json_is_object(v))
		json_object_foreach(v, k, x)
			kubectl_json_wipe(x);
	else if (json_is_array(v))
		json_array_foreach(v, i, x)
			kubectl_json_wipe(x);
}

int kubectl_secret_values(const struct cluster *cl, const char *ns, const char *name, const char *const *keys,
			  char **values, const char **err)
{
	const char *args[] = { "--namespace", ns, "get", "secret", name, NULL };
	json_t *doc = kubectl_get_json(cl, args, err);
	size_t i, n;
	int r = 0;

	for (i = 0; keys[i]; i++)
		values[i] = NULL;
	if (!doc)
		return -1;
	for (i = 0; keys[i] && !r; i++) {
		const char *v = json_string_value(json_object_get(json_object_get(doc, "data"), keys[i]));
		if (v && (values[i] = (char *)unbase64(v, &n)) && (memchr(values[i], 0, n) || !n)) {
			memwipe(values[i], n);
			free(values[i]);
			values[i] = NULL;
		}
		if (!values[i]) {
			*err = aprintf("the Secret %s/%s on cluster '%s' has no key '%s' with a value", ns, name, cl->name, keys[i]);
			r = -1;
		}
	}
	for (i = 0; r && keys[i]; i++) {
		if (values[i]) {
			memwipe(values[i], strlen(values[i]));
			free(values[i]);
			values[i] = NULL;
		}
	}
	kubectl_json_wipe(doc);
	json_decref(doc);
	return r;
}

const char *kubectl_secret_rv(const struct cluster *cl, const char *ns, const char *name, const char **err)
{
	const char *args[] = { "--namespace", ns, "get", "secret", name, NULL };
	json_t *doc = kubectl_get_json(cl, args, err);
	const char *rv = doc ? json_string_value(json_object_get(json_object_get(doc, "metadata"), "resourceVersion")) : NULL;

	if (doc && (!rv || !*rv || strlen(rv) > 32 || strspn(rv, "0123456789") != strlen(rv))) {
		*err = aprintf("the Secret %s/%s on cluster '%s' has no resourceVersion", ns, name, cl->name);
		rv = NULL;
	} else if (rv) {
		rv = astrdup(rv);
	}
	if (doc) {
		kubectl_json_wipe(doc);
		json_decref(doc);
	}
	return rv;
}

char *kubectl_secret_value(const struct cluster *cl, const char *ns, const char *name, const char *key,
			   const char **err)
{
	const char *keys[] = { key, NULL };
	char *value[1];

	return kubectl_secret_values(cl, ns, name, keys, value, err) < 0 ? NULL : value[0];
}

enum phase { PH_FIRST, PH_DEFAULT_NS, PH_OWN_NS, PH_N };

/*
 * The distro's mark on the objects of one file of the apply's own copy of
 * the render (kubeowner.h), written over it; the render and its bundle
 * stay as they are, so its output hash does too.
 */
static int mark(const char *path, struct ypool *yp, struct ynode **docs, size_t n, const char **err)
{
	struct buf out = BUF_INIT;
	int r = kubeowner_mark(yp, docs, n, manager, &out);

	if (r > 0 && write_file_copy(path, out.s, out.len) < 0)
		r = -1, *err = aprintf("cannot write %s: %s", path, strerror(errno));
	else if (r < 0)
		*err = aprintf("cannot mark the objects of %s as this distro's (annotation %s)", path, KUBEOWNER_MARK);
	if (out.s)
		memwipe(out.s, out.len);	/* a Secret's values */
	buf_release(&out);
	return r < 0 ? -1 : 0;
}

/* who applied the objects of phases [from, to) before (owners), each phase's look in its namespace */
static int phase_owners(const struct step *s, const struct argl *files, int from, int to, int timeout,
			struct kube_adopted *adopted, const char **err)
{
	for (int ph = from; ph < to; ph++)
		if (owners(s, &files[ph], ph == PH_DEFAULT_NS ? s->namespace : NULL, timeout, adopted, err) < 0)
			return -1;
	return 0;
}

int kubectl_apply(const struct step *s, const char *dir, const char **err)
{
	const struct package *p = s->pkg;
	struct tree t;
	struct argl files[PH_N] = { { 0 } }, crds = { 0 }, rollouts = { 0 }, rollout_ns = { 0 };
	const char *nsfile;
	struct kube_adopted adopted = { 0 };	/* what up --adopt took over */
	char *nsyaml = aprintf("apiVersion: v1\nkind: Namespace\nmetadata:\n  name: %s\n", s->namespace);
	int timeout = p->sync.timeout > 0 ? p->sync.timeout : 300;

	if (!dir) {
		*err = "cannot unpack the rendered objects";
		return -1;
	}
	nsfile = aprintf("%s.namespace.yaml", dir);
	if (write_file_atomic(nsfile, nsyaml, strlen(nsyaml)) < 0) {
		*err = aprintf("cannot write %s: %s", nsfile, strerror(errno));
		return -1;
	}
	if (scan_tree(dir, NULL, &t) < 0) {
		*err = aprintf("cannot read %s", dir);
		return -1;
	}
	for (size_t i = 0; i < t.n; i++) {
		const char *path = aprintf("%s/%s", dir, t.v[i].path);
		size_t len, n;
		char *text = read_file(path, &len);
		struct ypool *yp;
		struct ynode **docs;
		const char *kind = "", *ns = NULL;
		enum phase ph;
		int parsed;
		if (!text) {
			*err = aprintf("cannot read %s: %s", path, strerror(errno));
			tree_free(&t);
			return -1;
		}
		yp = ypool_new();
		parsed = yaml_parse(yp, path, text, len, &docs, &n) == 0;
		if (parsed && n && docs[0]->type == Y_MAP) {
			const struct ynode *k = yget(docs[0], "kind"), *m = ypath(docs[0], "metadata.namespace");
			if (k && k->type == Y_SCALAR)
				kind = astrdup(k->s);
			if (m && m->type == Y_SCALAR && !yisnull(m))
				ns = astrdup(m->s);
		}
		if (parsed && mark(path, yp, docs, n, err) < 0) {
			ypool_free_wipe(yp);
			memwipe(text, len);
			free(text);
			tree_free(&t);
			return -1;
		}
		ypool_free_wipe(yp);	/* a Secret's values */
		memwipe(text, len);
		free(text);
		if (!strcmp(kind, "Namespace") || !strcmp(kind, "CustomResourceDefinition"))
			ph = PH_FIRST;
		else
			ph = ns ? PH_OWN_NS : PH_DEFAULT_NS;
		push(&files[ph], "-f");
		push(&files[ph], path);
		if (!strcmp(kind, "CustomResourceDefinition")) {
			push(&crds, "-f");
			push(&crds, path);
		}
		if (!strcmp(kind, "Deployment") || !strcmp(kind, "StatefulSet") || !strcmp(kind, "DaemonSet")) {
			push(&rollouts, path);
			push(&rollout_ns, ns ? ns : s->namespace);
		}
	}
	tree_free(&t);
	/*
	 * Who applied the objects before: every phase's, before anything is
	 * applied, so that a refused step leaves the cluster as it was; but a
	 * package's custom resources can be looked up only once its CRDs are
	 * there, so with CRDs the later phases are looked at (all of them,
	 * before either is applied) after the first is applied.
	 */
	if (phase_owners(s, files, PH_FIRST, crds.n ? PH_DEFAULT_NS : PH_N, timeout, &adopted, err) < 0)
		return -1;
	/*
	 * The package's namespace, which every package in it applies, with a
	 * field manager of no distro's (kubeowner.h counts only idpmake and
	 * idpmake/NAME): creating it makes no distro the owner of the
	 * Namespace, which a package may hold as an object of its own.
	 */
	{
		const char *a[] = { "apply", "--server-side", "--force-conflicts", "--field-manager=" NS_MANAGER,
				    "-f", nsfile, NULL };
		if (kubectl(s, a, timeout, err) < 0)
			return -1;
	}
	for (int ph = 0; ph < PH_N; ph++) {
		struct argl a = { 0 };
		if (ph == PH_DEFAULT_NS && crds.n &&
		    phase_owners(s, files, PH_DEFAULT_NS, PH_N, timeout, &adopted, err) < 0)
			return -1;
		if (!files[ph].n)
			continue;
		push(&a, "apply");
		push(&a, "--server-side");
		push(&a, "--force-conflicts");
		push(&a, aprintf("--field-manager=%s", manager));
		if (ph == PH_DEFAULT_NS) {
			push(&a, "-n");
			push(&a, s->namespace);
		}
		for (size_t i = 0; i < files[ph].n; i++)
			push(&a, files[ph].v[i]);
		if (kubectl(s, a.v, timeout, err) < 0)
			return -1;
		if (ph == PH_FIRST && crds.n) {
			struct argl w = { 0 };
			push(&w, "wait");
			push(&w, "--for");
			push(&w, "condition=established");
			push(&w, aprintf("--timeout=%ds", timeout));
			for (size_t i = 0; i < crds.n; i++)
				push(&w, crds.v[i]);
			if (kubectl(s, w.v, timeout + 30, err) < 0)
				return -1;
		}
	}
	if (p->sync.wait_healthy)
		for (size_t i = 0; i < rollouts.n; i++) {
			const char *a[] = { "rollout", "status", "-n", rollout_ns.v[i], "-f", rollouts.v[i],
					    aprintf("--timeout=%ds", timeout), NULL };
			if (kubectl(s, a, timeout + 30, err) < 0)
				return -1;
		}
	if (adopted.said)
		*err = aprintf("adopted (--adopt): %s", adopted.said);	/* said as the step's note (kubectl.h) */
	for (size_t i = 0; i < adopted.n; i++)
		adopt_note("kubectl object", adopted.object[i], adopted.from[i], s->id);
	return 0;
}

int kubectl_dry_run(const struct cluster *cl, const char *dir, const char *ns, const char **err)
{
	const struct kube_target *t;
	const char *why = NULL;
	struct argl av = { 0 };
	struct proc p = { 0 };

	if (!(t = kubectl_target(cl, err)))
		return -1;
	target_argv(t, &av);
	push(&av, "apply");
	push(&av, "--server-side");
	push(&av, "--dry-run=server");
	push(&av, "--field-manager=idpmake");
	push(&av, "--request-timeout=30s");
	if (ns) {
		push(&av, "--namespace");
		push(&av, ns);
	}
	push(&av, "-f");
	push(&av, dir);
	p.argv = av.v;
	p.timeout = 60;
	if (proc_run_why(&p, &why) < 0) {
		*err = why;
		return -1;
	}
	return 0;
}
