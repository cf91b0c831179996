/*
 * kindcluster.c - CLUSTER:kind (kindcluster.h): the local kind cluster of
 * clusters.NAME.create.kind, made when absent, as idpbuilder makes its own.
 *
 * The node is idpbuilder's: labelled ingress-ready=true, its port 443
 * reached at host-port (8443) on the host, so that https://HOST:8443/ is
 * the ingress controller.  kind writes the context kind-NAME into the
 * kubeconfig (KUBECONFIG's first file, or ~/.kube/config); every kubectl
 * of the cluster then goes there (kubectl.c kubectl_target), never to the
 * current context.
 *
 * Whose cluster it is: this state's when the state recorded it made it,
 * or when the state holds its config (STATE/kind/NAME.yaml, written just
 * before `kind create cluster`, so that a run killed during the creation
 * takes it on next time instead of making a second); a kind cluster of
 * that name that this state never made is refused unless up --adopt
 * (which writes the config: it is this state's from then on).  One this
 * state made for another CLUSTER:kind step (the cluster renamed) or that a
 * killed run was making is taken on only as it was made: that step's key,
 * or the config without its comment, the same image and host port, since
 * kind cannot change them; else refused, as a changed key is.  kind runs with exec.c's environment
 * (no credential) and its arguments only from the distro's checked fields
 * (create.c), never through a shell.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/exec.h"
#include "base/hash.h"
#include "base/intr.h"
#include "base/util.h"
#include "argo/kubectl.h"
#include "graph/adopt.h"
#include "graph/state.h"
#include "graph/status.h"
#include "run/kindcluster.h"

#define KIND_INSTALL "install kind (https://kind.sigs.k8s.io/docs/user/quick-start/#installation: " \
		     "`go install sigs.k8s.io/kind@v0.29.0`, or its release binary on PATH) and docker"
#define KIND_TIMEOUT 900	/* seconds for `kind create cluster` (it pulls the node image) */

static int adopt_flag;
static int listed = -1;		/* `kind get clusters` read this run: 1; it failed: 0; not yet: -1 */
static const char **names;	/* what it listed */
static size_t nnames;
static const char *list_err;

void kindcluster_set_adopt(int adopt)
{
	adopt_flag = adopt;
}

/* run kind with argv, its stdout in *out (NULL: not wanted): 0, or -1 with *err (kind's last line) */
static int kind(const char *const *argv, struct buf *out, int timeout, const char **err)
{
	struct proc p = { 0 };
	const char *why;

	p.argv = argv;
	p.out = out;
	p.out_cap = 1 << 20;
	p.timeout = timeout;
	if (proc_run_why(&p, &why) == 0)
		return 0;
	*err = aprintf("%s: %s (kind's error)", proc_command(argv), why);
	return -1;
}

static int list(const char **err)
{
	static const char *const argv[] = { "kind", "get", "clusters", NULL };
	struct buf out;
	char *save = NULL;

	if (listed >= 0) {
		*err = list_err;
		return listed ? 0 : -1;
	}
	buf_init(&out);
	if (kind(argv, &out, 60, &list_err) < 0) {
		buf_release(&out);
		listed = 0;
		*err = list_err;
		return -1;
	}
	for (char *l = strtok_r(out.s ? out.s : (char[]){ 0 }, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		names = agrow(names, nnames, sizeof(*names));
		names[nnames++] = astrdup(l);
	}
	buf_release(&out);
	listed = 1;
	return 0;
}

/* the list is the run's, read by plan (main thread) and by the steps (workers): one at a time */
static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;

static int exists(const char *name, int fresh, const char **err)
{
	int r = 0;

	pthread_mutex_lock(&list_lock);
	if (fresh) {
		listed = -1;	/* look again: plan's list may be minutes old */
		nnames = 0;
	}
	if (list(err) < 0)
		r = -1;
	for (size_t i = 0; r == 0 && i < nnames; i++)
		if (!strcmp(names[i], name))
			r = 1;
	pthread_mutex_unlock(&list_lock);
	return r;
}

int kindcluster_exists(const char *name, const char **err)
{
	return exists(name, 0, err);
}

static struct hash key_of(const struct cluster *c)
{
	struct hasher *h = hasher_new();

	hasher_adds(h, "kind cluster v1");
	hasher_adds(h, c->create.kind);
	hasher_adds(h, c->create.image ? c->create.image : "");
	hasher_add(h, &c->create.host_port, sizeof(c->create.host_port));
	return hasher_end(h);
}

const char *kindcluster_missing_tool(struct planner *pl)
{
	struct graph *g = pl->g;

	if (which("kind"))
		return NULL;
	for (size_t i = 0; i < g->nsteps; i++) {
		struct step *s = g->steps[i];
		struct record rec;
		if (!s->selected || s->kind != STEP_CREATE)
			continue;
		rec = state_step(pl->st, s->id);
		if (!rec.ok || !hash_eq(rec.key, key_of(s->cluster)))
			return aprintf("%s: kind is not on PATH, and the cluster '%s' is made with it (create.kind): %s",
				       s->id, s->cluster->create.kind, KIND_INSTALL);
	}
	return NULL;
}

/*
 * A cluster renamed in the distro (or another cluster given its create.kind
 * name): this state recorded the kind cluster as made by another CLUSTER:kind
 * step.  It is taken on only when that step's recorded key (name, image,
 * host port) is this one's: kind cannot change a cluster's image or ports.
 * Decided on the main thread (kindcluster_decide), read by the step's run.
 */
struct heir {
	const struct step *s;
	const char *from;		/* the state's CLUSTER:kind row that made it */
	int same;			/* its key is s's */
};
static struct heir *heirs;
static size_t nheirs;
static pthread_mutex_t heir_lock = PTHREAD_MUTEX_INITIALIZER;

/* the other CLUSTER:kind row of this state that made kind cluster `name`, and its key; or NULL */
static const char *made_by_other(struct planner *pl, const struct step *s, const char *name, struct hash *key)
{
	size_t nids;
	const char **ids = state_step_ids(pl->st, &nids);

	for (size_t i = 0; i < nids; i++) {
		size_t len = strlen(ids[i]);
		struct record rec;
		if (len < 6 || strcmp(ids[i] + len - 5, ":kind") || strchr(ids[i], '/') || !strcmp(ids[i], s->id))
			continue;
		rec = state_step(pl->st, ids[i]);
		if (rec.ok && rec.commit && !strcmp(rec.commit, name)) {
			*key = rec.key;
			return ids[i];
		}
	}
	return NULL;
}

static void heir_note(const struct step *s, const char *from, int same)
{
	pthread_mutex_lock(&heir_lock);
	for (size_t i = 0; i < nheirs; i++)
		if (heirs[i].s == s) {
			heirs[i] = (struct heir){ s, from, same };
			pthread_mutex_unlock(&heir_lock);
			return;
		}
	heirs = agrow(heirs, nheirs, sizeof(*heirs));
	heirs[nheirs++] = (struct heir){ s, from, same };
	pthread_mutex_unlock(&heir_lock);
}

static struct heir heir_of(const struct step *s)
{
	struct heir h = { s, NULL, 0 };

	pthread_mutex_lock(&heir_lock);
	for (size_t i = 0; i < nheirs; i++)
		if (heirs[i].s == s && heirs[i].from)
			h = heirs[i];
	pthread_mutex_unlock(&heir_lock);
	return h;
}

/* the refusal of a kind cluster made with another key */
static const char *other_key(const char *name, const char *by)
{
	return aprintf("the kind cluster '%s' was made%s with another image or host port, and kind cannot change them: "
		       "delete it (kind delete cluster --name %s) and run again, or put them back", name,
		       by ? aprintf(" by %s (its cluster since renamed, or another cluster that makes it)", by) : "", name);
}

void kindcluster_decide(struct planner *pl, struct step *s, const struct record *rec)
{
	const char *err;
	int there;

	s->key = key_of(s->cluster);
	if (rec->ok && hash_eq(rec->key, s->key)) {
		s->output = rec->output;
		if (!which("kind")) {
			s->dirty = 0;
			s->reason = R_UP_TO_DATE;
			s->why = "recorded as made (kind is not on PATH to look)";
			return;
		}
		there = kindcluster_exists(s->cluster->create.kind, &err);
		if (there == 1) {
			s->dirty = 0;
			s->reason = R_UP_TO_DATE;
			return;
		}
		s->dirty = 1;
		s->reason = R_FORCED;
		s->why = there < 0 ? aprintf("kind cannot list its clusters: %s", err)
				   : aprintf("the kind cluster '%s' is gone: it is made again", s->cluster->create.kind);
		return;
	}
	plan_compare(s, rec, "the kind cluster's name, image or host port changed");
	if (!rec->ok) {
		struct hash key;
		const char *from = made_by_other(pl, s, s->cluster->create.kind, &key);
		heir_note(s, from, from && hash_eq(key, s->key));
		if (from) {
			s->reason = R_FORCED;
			s->why = hash_eq(key, s->key) ?
				aprintf("the kind cluster '%s' that %s made is taken on (same image and host port)",
					s->cluster->create.kind, from) :
				aprintf("the kind cluster '%s' that %s made has another image or host port: refused while "
					"it exists", s->cluster->create.kind, from);
		}
	}
}

/* a new incarnation: every step of the cluster runs again after it */
static struct hash incarnation(const char *name)
{
	struct hasher *h = hasher_new();
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	hasher_adds(h, name);
	hasher_add(h, &ts, sizeof(ts));
	hasher_add(h, &(pid_t){ getpid() }, sizeof(pid_t));
	return hasher_end(h);
}

static const char *config_path(struct planner *pl, const struct cluster *c)
{
	return aprintf("%s/kind/%s.yaml", pl->statedir, c->create.kind);
}

/* the config kind makes the cluster from: the comment names the cluster, the rest is the kind cluster */
static const char *config_text(const struct cluster *c)
{
	return aprintf("# written by idpmake for cluster '%s' (create.kind): idpbuilder's node\n"
		       "kind: Cluster\napiVersion: kind.x-k8s.io/v1alpha4\nname: %s\nnodes:\n"
		       "  - role: control-plane\n%s%s%s"
		       "    labels: {ingress-ready: \"true\"}\n"
		       "    extraPortMappings:\n"
		       "      - {containerPort: 443, hostPort: %d, protocol: TCP}\n",
		       c->name, c->create.kind, c->create.image ? "    image: \"" : "",
		       c->create.image ? c->create.image : "", c->create.image ? "\"\n" : "", c->create.host_port);
}

/* is the config an earlier run wrote the one c gives (its comment aside: the cluster may be renamed)? */
static int config_same(struct planner *pl, const struct cluster *c)
{
	size_t len;
	char *have = read_file(config_path(pl, c), &len);
	const char *want = config_text(c), *h, *w;
	int same;

	if (!have)
		return 1;	/* unreadable: as before, taken on */
	h = strchr(have, '\n');
	w = strchr(want, '\n');
	same = h && w && !strcmp(h, w);
	free(have);
	return same;
}

static const char *config_file(struct planner *pl, const struct cluster *c, const char **err)
{
	const char *path = config_path(pl, c), *dir = path_dir(path);
	const char *text = config_text(c);

	if (mkdirs(dir) < 0 || write_file_copy(path, text, strlen(text)) < 0) {
		*err = aprintf("cannot write %s: %s", path, strerror(errno));
		return NULL;
	}
	return path;
}

int kindcluster_run(struct planner *pl, struct step *s, struct hash *output, const char **err)
{
	const struct cluster *c = s->cluster;
	struct record rec = state_step(pl->st, s->id);
	const char *name = c->create.kind, *cfg;
	int there, ours;

	if ((there = exists(name, 1, err)) < 0)
		return -1;
	if (there) {
		struct heir h = heir_of(s);
		if (rec.ok && !hash_zero(rec.key) && !hash_eq(rec.key, s->key)) {
			*err = other_key(name, NULL);
			return -1;
		}
		if (rec.ok) {
			*output = rec.output;
			return 0;
		}
		if (h.from && !h.same) {
			*err = other_key(name, h.from);
			return -1;
		}
		if (h.from) {
			*output = incarnation(name);
			s->why = aprintf("taken on: %s made it (same image and host port)", h.from);
			return config_file(pl, c, err) ? 0 : -1;
		}
		ours = access(config_path(pl, c), F_OK) == 0;
		if (ours && !config_same(pl, c)) {
			*err = aprintf("the kind cluster '%s' that an earlier run was making (%s) has another image or host "
				       "port, and kind cannot change them: delete it (kind delete cluster --name %s) and "
				       "run again, or put them back", name, config_path(pl, c), name);
			return -1;
		}
		if (!ours && !adopt_flag) {
			*err = aprintf("a kind cluster '%s' exists, and this state never made it: `idpmake up --adopt` "
				       "takes it on, or give create.kind.name another name", name);
			return -1;
		}
		if (!ours && !config_file(pl, c, err))
			return -1;
		if (!ours)
			adopt_note("kind cluster", name, "not made by this state", s->id);
		*output = incarnation(name);
		s->why = ours ? "taken on: an earlier run was making it" : "taken on (up --adopt)";
		return 0;
	}
	/* the config first: a run killed while kind works takes the cluster on, never makes a second */
	if (!(cfg = config_file(pl, c, err)))
		return -1;
	{
		const char *argv[] = { "kind", "create", "cluster", "--name", name, "--config", cfg, NULL };
		if (kind(argv, NULL, KIND_TIMEOUT, err) < 0) {
			/*
			 * kind removes what it made when it fails, and then a cluster of that name later is
			 * not this state's; one it left (killed, timed out) is, and is taken on next time
			 */
			const char *lerr;
			if (!interrupted() && exists(name, 1, &lerr) == 0)
				unlink(cfg);
			return -1;
		}
	}
	*output = incarnation(name);
	return 0;
}

int kindcluster_delete(const char *name, const char **err)
{
	const char *argv[] = { "kind", "delete", "cluster", "--name", name, NULL };

	pthread_mutex_lock(&list_lock);
	listed = -1;
	nnames = 0;
	pthread_mutex_unlock(&list_lock);
	return kind(argv, NULL, 600, err);
}

/* does the distro still use kind cluster `name` (another cluster creates it, or names its context)?  How, or NULL */
static const char *in_use(const struct distro *d, const char *name)
{
	const char *ctx = aprintf("kind-%s", name), *flag = kubectl_context_flag();

	for (size_t i = 0; i < d->nclusters; i++) {
		const struct cluster *c = &d->clusters[i];
		const struct kube_target *t;
		const char *err;
		if (c->create.kind && !strcmp(c->create.kind, name))
			return aprintf("cluster '%s' creates it", c->name);
		if (c->create.kind)
			continue;
		/* where its kubectl goes, as its steps resolve it: a current-context too; unsure is in use */
		if (!(t = kubectl_target(c, &err)))
			return aprintf("cannot tell where cluster '%s' goes (%s)", c->name, err);
		if (t->context && !strcmp(t->context, ctx))
			return aprintf("cluster '%s' uses its context %s (%s)", c->name, ctx, t->from);
	}
	if (flag && !strcmp(flag, ctx))
		return aprintf("--kube-context %s", ctx);
	return NULL;
}

size_t kindcluster_orphans(struct planner *pl, struct kind_orphan **v)
{
	size_t nids, n = 0;
	const char **ids = state_step_ids(pl->st, &nids);

	*v = NULL;
	for (size_t i = 0; i < nids; i++) {
		size_t len = strlen(ids[i]);
		struct record rec;
		struct step *s;
		if (len < 6 || strcmp(ids[i] + len - 5, ":kind") || strchr(ids[i], '/'))
			continue;
		rec = state_step(pl->st, ids[i]);
		if (!rec.ok || !rec.commit)
			continue;	/* never made (refused, failed): nothing of it is this state's */
		s = graph_find(pl->g, ids[i]);
		if (s && s->kind == STEP_CREATE && !strcmp(s->cluster->create.kind, rec.commit))
			continue;	/* still the distro's */
		*v = agrow(*v, n, sizeof(**v));
		(*v)[n++] = (struct kind_orphan){ ids[i], rec.commit, in_use(pl->g->d, rec.commit) };
	}
	return n;
}

int kindcluster_prune(struct planner *pl, int prune, int delete_clusters)
{
	struct kind_orphan *v;
	size_t n = kindcluster_orphans(pl, &v);
	int bad = 0;

	for (size_t i = 0; i < n; i++) {
		const char *err;
		if (v[i].in_use) {
			/* not made by its old step any more, but used: idpmake keeps it (and the config, if it creates it) */
			status_info("idpmake: the kind cluster '%s' that %s made is still used (%s): kept, never deleted; "
				    "%s", v[i].kind, v[i].id, v[i].in_use,
				    strstr(v[i].in_use, "creates it") ? "it is made by that cluster's step now"
								      : "idpmake no longer manages it");
			if (!strstr(v[i].in_use, "creates it"))
				unlink(aprintf("%s/kind/%s.yaml", pl->statedir, v[i].kind));
			state_forget(pl->st, v[i].id);
			continue;
		}
		if (!prune) {
			status_info("idpmake: the kind cluster '%s' (%s) that idpmake made is gone from the distro; it stays "
				    "(up --prune --delete-clusters deletes it)", v[i].kind, v[i].id);
			continue;
		}
		if (!delete_clusters) {
			error("--prune: the kind cluster '%s' (%s) is gone from the distro; deleting a cluster takes "
			      "--delete-clusters too", v[i].kind, v[i].id);
			bad++;
			continue;
		}
		if (kindcluster_delete(v[i].kind, &err) < 0) {
			error("--prune: cannot delete the kind cluster '%s': %s", v[i].kind, err);
			bad++;
			continue;
		}
		status_info("idpmake: deleted the kind cluster '%s' (gone from the distro)", v[i].kind);
		unlink(aprintf("%s/kind/%s.yaml", pl->statedir, v[i].kind));
		state_forget(pl->st, v[i].id);
	}
	return bad;
}
