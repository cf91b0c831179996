/*
 * remotekeys.c - the keys index in the GitOps repository, and the
 * reconstruction of an empty state from it and from Argo CD (remotekeys.h).
 *
 * Reconstruction, per render step never recorded in this state:
 *
 *     the tip's index has FOLDER with this run's key? --no--> render
 *           |yes
 *     the tip's FOLDER is the line's tree (git's content   --no--> render (a hand
 *     hash: what idpmake pushed), naming only files idpmake        edit is drift)
 *     could have written?
 *           |yes
 *     render and push recorded with the line's output (commit: the tip);
 *     the files are not read: the bundle is left in git, built and checked
 *     against that output when first read or when a render comes out equal
 *     to it (lazycache.h)
 *
 * and per sync step never recorded whose render was reconstructed, the
 * proof in Argo CD (remotesync.c), which reads commits of the clone kept
 * open here (remotekeys_folder_at).
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <git2.h>
#include <git2/sys/odb_backend.h>

#include "base/buf.h"
#include "base/gitcred.h"
#include "base/url.h"
#include "render/bundle.h"
#include "git/gitdrift.h"
#include "git/gitremote.h"
#include "base/intr.h"
#include "git/lazycache.h"
#include "base/names.h"
#include "render/planner.h"
#include "git/remotekeys.h"
#include "graph/status.h"
#include "base/util.h"

#define HEADER "idpmake-keys 1\n"
static const char WHY_DONE[] = "reconstructed from the GitOps repository";

static int key_cmp(const void *a, const void *b)
{
	return strcmp(((const struct remotekey *)a)->folder, ((const struct remotekey *)b)->folder);
}

/* a clean relative repository path (names.c, no .git), and not the index's own folder */
static int clean_folder(const char *p)
{
	return !name_bad(p, NAME_PATH | NAME_NO_GIT) && !name_has_part(p, REMOTEKEYS_DIR);
}

static int hex40(const char *s)
{
	for (int i = 0; i < 40; i++)
		if (!strchr("0123456789abcdef", s[i]) || !s[i])
			return 0;
	return 1;
}

void remotekeys_parse(const char *text, size_t len, struct remotekey **v, size_t *n)
{
	const char *p = text, *end = text + len;
	size_t j = 0;

	*v = NULL;
	*n = 0;
	if (len > REMOTEKEYS_CAP || len < strlen(HEADER) || memcmp(text, HEADER, strlen(HEADER)))
		return;
	p += strlen(HEADER);
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
		/* FOLDER SP 32 SP 32 SP 40 */
		const size_t tail = 1 + 32 + 1 + 32 + 1 + 40;
		struct remotekey k;
		char *line;
		/* the shape first: a bad line costs no memory (a hostile index of empty lines would) */
		if (!nl || l <= tail || memchr(p, 0, l) || p[l - tail] != ' ' || p[l - tail + 33] != ' ' ||
		    p[l - tail + 66] != ' ') {
			p += l + 1;
			continue;
		}
		line = astrndup(p, l);
		p += l + 1;
		line[l - tail] = line[l - tail + 33] = line[l - tail + 66] = 0;
		k.folder = line;
		if (!clean_folder(line) || hash_parse(line + l - tail + 1, &k.key) < 0 ||
		    hash_parse(line + l - tail + 34, &k.output) < 0 || !hex40(line + l - tail + 67) || hash_zero(k.key))
			continue;
		memcpy(k.tree, line + l - tail + 67, 41);
		*v = agrow(*v, *n, sizeof(**v));
		(*v)[(*n)++] = k;
	}
	if (!*n)
		return;
	qsort(*v, *n, sizeof(**v), key_cmp);
	/* a folder named twice: neither line is trusted */
	for (size_t i = 0; i < *n; i++) {
		int dup = (i > 0 && !strcmp((*v)[i].folder, (*v)[i - 1].folder)) ||
			  (i + 1 < *n && !strcmp((*v)[i].folder, (*v)[i + 1].folder));
		if (!dup)
			(*v)[j++] = (*v)[i];
	}
	*n = j;
}

const struct remotekey *remotekeys_find(const struct remotekey *v, size_t n, const char *folder)
{
	struct remotekey k = { folder, { 0, 0 }, { 0, 0 }, "" };
	return n ? bsearch(&k, v, n, sizeof(*v), key_cmp) : NULL;
}

/* the index in `tree` (NULL: none), parsed; 0, or -1 after an error */
static int read_index(struct git *g, git_tree *tree, struct remotekey **v, size_t *n)
{
	git_oid id;
	git_blob *b = NULL;
	int found, err;

	*v = NULL;
	*n = 0;
	if ((found = entry_at(g, tree, REMOTEKEYS_PATH, &id)) <= 0)
		return found;
	/* hostile: a blob over the cap is not an index, and is never read */
	if (git_object_size(g, &id) > (long long)REMOTEKEYS_CAP)
		return 0;
	if ((err = git_blob_lookup(&b, g->repo, &id)) < 0) {
		git_error_clear();
		return 0;	/* not a file: no index */
	}
	remotekeys_parse(git_blob_rawcontent(b), (size_t)git_blob_rawsize(b), v, n);
	git_blob_free(b);
	return 0;
}

static int change_ptr_cmp(const void *a, const void *b)
{
	return strcmp((*(struct change *const *)a)->path, (*(struct change *const *)b)->path);
}

int remotekeys_update(struct git *g, git_tree *base, struct change *ch, size_t n)
{
	struct remotekey *old;
	size_t nold, i = 0, k = 0;
	struct buf b = BUF_INIT;
	struct change **sorted = xcalloc(n + 1, sizeof(*sorted));
	int err;

	if (read_index(g, base, &old, &nold) < 0) {
		free(sorted);
		return -1;
	}
	for (size_t c = 0; c < n; c++)
		sorted[c] = &ch[c];
	/* ch is in path order with '/' first; the index in byte order: sort the pointers */
	qsort(sorted, n, sizeof(*sorted), change_ptr_cmp);
	buf_adds(&b, HEADER);
	while (i < nold || k < n) {
		int c = i >= nold ? 1 : k >= n ? -1 : strcmp(old[i].folder, sorted[k]->path);
		if (c < 0) {
			char kh[33], oh[33];
			hash_hex(old[i].key, kh);
			hash_hex(old[i].output, oh);
			buf_addf(&b, "%s %s %s %s\n", old[i].folder, kh, oh, old[i].tree);
			i++;
			continue;
		}
		if (!hash_zero(sorted[k]->key) && clean_folder(sorted[k]->path)) {
			char kh[33], oh[33], th[41];
			hash_hex(sorted[k]->key, kh);
			hash_hex(sorted[k]->output, oh);
			git_oid_tostr(th, sizeof(th), &sorted[k]->tree);
			buf_addf(&b, "%s %s %s %s\n", sorted[k]->path, kh, oh, th);
		}
		if (!c)
			i++;
		k++;
	}
	free(sorted);
	if (!nold && b.len == strlen(HEADER)) {
		/* no line to write and none before: no index */
		buf_release(&b);
		return 0;
	}
	memset(&ch[n], 0, sizeof(ch[n]));
	ch[n].path = REMOTEKEYS_PATH;
	ch[n].blob = 1;
	if ((err = git_odb_hash(&ch[n].tree, b.s, b.len, GIT_OBJECT_BLOB)) >= 0 &&
	    (err = g->mempack->write(g->mempack, &ch[n].tree, b.s, b.len, GIT_OBJECT_BLOB)) >= 0)
		g->unflushed = 1;
	buf_release(&b);
	return err < 0 ? gerror(g, err, "cannot store %s", REMOTEKEYS_PATH) : 1;
}

/* ---- reconstruction ------------------------------------------------------ */

/*
 * The last parent folder's tree, kept: libgit2 caches no tree over 4 KiB,
 * so looking up CLUSTER/PKG from the root parses CLUSTER's tree, one line
 * per package, again for every package (quadratic in a big fleet).
 */
struct parent {
	git_oid root;		/* the tree it was looked up in */
	char *path;		/* NULL: none kept (arena) */
	git_tree *tree;		/* NULL: no such folder */
};

static void parent_free(struct parent *pa)
{
	git_tree_free(pa->tree);	/* the path is the arena's */
	memset(pa, 0, sizeof(*pa));
}

/* entry_at(g, root, folder, id), through pa's tree: 1, 0 (none, *id zero) or -1 */
static int entry_in(struct git *g, git_tree *root, const char *folder, git_oid *id, struct parent *pa)
{
	const char *slash = strrchr(folder, '/');
	const git_tree_entry *e;
	git_oid pid;
	int found;

	if (!slash || !root)
		return entry_at(g, root, folder, id);
	if (!pa->path || !git_oid_equal(&pa->root, git_tree_id(root)) || strlen(pa->path) != (size_t)(slash - folder) ||
	    memcmp(pa->path, folder, (size_t)(slash - folder))) {
		parent_free(pa);
		git_oid_cpy(&pa->root, git_tree_id(root));
		pa->path = astrndup(folder, (size_t)(slash - folder));
		if ((found = entry_at(g, root, pa->path, &pid)) < 0)
			return -1;
		if (found && git_tree_lookup(&pa->tree, g->repo, &pid) < 0) {
			git_error_clear();
			pa->tree = NULL;	/* a file: nothing under it */
		}
	}
	memset(id, 0, sizeof(*id));
	if (!pa->tree || !(e = git_tree_entry_byname(pa->tree, slash + 1)))
		return 0;
	git_oid_cpy(id, git_tree_entry_id(e));
	return 1;
}

static struct {
	int open;
	struct git g;
	struct gitops_opts o;
	git_commit *tip;
	git_tree *root;
	char tipid[41];
	int read;		/* the remote was read: tipid its tip, or empty for a remote with none */
	struct parent at_tip, at_rev;	/* remotekeys_folder_at's, one Application after another */
} rk;

/*
 * Is root's folder line k's tree, with names only idpmake writes?  Its
 * files are not read: the tree id is their content's hash, and the line's
 * output is checked when it is used (lazycache.h)
 */
static int folder_proven(struct git *g, git_tree *root, struct parent *pa, const char *folder,
			 const struct remotekey *k)
{
	git_oid want, now;
	git_tree *t = NULL;
	int found, ok;

	if (git_oid_fromstr(&want, k->tree) < 0 || (found = entry_in(g, root, folder, &now, pa)) < 0) {
		git_error_clear();
		return 0;
	}
	if (!git_oid_equal(&want, &now))
		return 0;	/* not the tree the line names: changed by another hand */
	if (found && git_tree_lookup(&t, g->repo, &now) < 0) {
		git_error_clear();
		return 0;	/* a file where the folder should be */
	}
	ok = folder_names_ok(t);
	git_tree_free(t);
	return ok;
}

/*
 * The folders to prove, shared by -j workers: reading the trees is most
 * of the proof's cost, one folder is independent of the others, and a
 * libgit2 repository is one thread's, so each worker opens the clone again.
 * The run's thread proves its share with the clone it has: there is
 * progress when no worker starts.
 */
struct proof {
	const char *folder;
	const struct remotekey *k;
	struct step *s;
	int ok;
};

static struct {
	struct proof *v;
	size_t n, next;
	pthread_mutex_t lock;
} pj = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void prove_some(struct git *g, git_tree *root)
{
	struct parent pa = { 0 };

	for (;;) {
		size_t i;
		pthread_mutex_lock(&pj.lock);
		i = pj.next < pj.n ? pj.next++ : pj.n;
		pthread_mutex_unlock(&pj.lock);
		if (i >= pj.n || interrupted())
			break;
		pj.v[i].ok = folder_proven(g, root, &pa, pj.v[i].folder, pj.v[i].k);
	}
	parent_free(&pa);
}

static void *prove_worker(void *arg)
{
	(void)arg;
	struct git g = rk.g;	/* the settings gerror reads; a repository of its own */
	git_tree *root = NULL;

	g.repo = NULL;
	g.odb = NULL;
	g.mempack = NULL;
	g.local = NULL;
	g.remote = NULL;
	if (git_repository_open_ext(&g.repo, rk.g.clone, GIT_REPOSITORY_OPEN_NO_SEARCH | GIT_REPOSITORY_OPEN_BARE,
				    NULL) == 0 &&
	    git_repository_odb(&g.odb, g.repo) == 0 && git_tree_lookup(&root, g.repo, git_tree_id(rk.root)) == 0)
		prove_some(&g, root);
	git_error_clear();
	git_tree_free(root);
	git_odb_free(g.odb);
	git_repository_free(g.repo);
	return NULL;
}

static void prove_all(struct planner *pl)
{
	pthread_t th[16];
	int n = pl->jobs > 16 ? 16 : pl->jobs;

	pj.next = 0;
	if (pj.n < 8)
		n = 1;	/* not worth a thread */
	for (int i = 1; i < n; i++)
		if (pthread_create(&th[i], NULL, prove_worker, NULL)) {
			n = i;
			break;
		}
	prove_some(&rk.g, rk.root);
	for (int i = 1; i < n; i++)
		pthread_join(th[i], NULL);
}

/* the newest first-parent commit (at most 1000 back) that changed the index: idpmake's last push */
static void last_index_commit(git_oid *at)
{
	git_commit *c = rk.tip, *p = NULL;
	git_oid cur, prev;

	git_oid_cpy(at, git_commit_id(rk.tip));
	git_commit_dup(&c, rk.tip);
	for (int i = 0; i < 1000 && c; i++) {
		git_tree *t = NULL, *pt = NULL;
		int changed;
		if (git_commit_tree(&t, c) < 0 || entry_at(&rk.g, t, REMOTEKEYS_PATH, &cur) < 0) {
			git_tree_free(t);
			break;
		}
		if (git_commit_parentcount(c) == 0 || git_commit_parent(&p, c, 0) < 0 || git_commit_tree(&pt, p) < 0 ||
		    entry_at(&rk.g, pt, REMOTEKEYS_PATH, &prev) < 0)
			changed = 1;
		else
			changed = !git_oid_equal(&cur, &prev);
		git_tree_free(t);
		git_tree_free(pt);
		if (changed) {
			git_oid_cpy(at, git_commit_id(c));
			break;
		}
		git_commit_free(c);
		c = p;
		p = NULL;
	}
	git_commit_free(c);
	git_commit_free(p);
	git_error_clear();
}

/*
 * A clone that never pushed learns the index's folders of this distro as
 * idpmake's, as the index left them (gitops.c's known tree), so that a
 * folder changed since by another hand is drift, not overwritten.
 */
static void learn_known(struct graph *gr, const struct remotekey *v, size_t n)
{
	git_commit *k = NULL, *at = NULL;
	git_tree_update *u = xcalloc(n + 1, sizeof(*u));
	char *used = xcalloc(n + 1, 1);
	git_oid tree, id, atid;
	git_tree *t = NULL;
	git_signature *sig = NULL;
	size_t nu = 0;

	if (clone_ref_commit(&rk.g, rk.g.known, &k) < 0 || k) {
		git_commit_free(k);
		free(u);
		free(used);
		return;
	}
	for (size_t i = 0; i < gr->nsteps; i++) {
		const struct step *s = gr->steps[i];
		const struct remotekey *l;
		const char *f;
		git_oid o;
		if (s->kind != STEP_RENDER || !(f = norm_path(s->gitpath)) || !(l = remotekeys_find(v, n, f)) ||
		    git_oid_fromstr(&o, l->tree) < 0 || git_oid_is_zero(&o) ||
		    !git_odb_exists(rk.g.odb, &o))
			continue;
		if (used[l - v]++)
			continue;	/* a linked folder: one line for its clusters */
		u[nu++] = (git_tree_update){ GIT_TREE_UPDATE_UPSERT, o, GIT_FILEMODE_TREE, f };
	}
	last_index_commit(&atid);
	if (nu && git_commit_lookup(&at, rk.g.repo, &atid) >= 0 &&
	    git_tree_create_updated(&tree, rk.g.repo, NULL, nu, u) >= 0 && git_tree_lookup(&t, rk.g.repo, &tree) >= 0 &&
	    git_signature_now(&sig, "idpmake", "idpmake@localhost") >= 0 &&
	    git_commit_create(&id, rk.g.repo, NULL, sig, sig, NULL, KNOWN_MSG, t, 1, (const git_commit **)&at) >= 0) {
		rk.g.roots = xrealloc(rk.g.roots, (rk.g.nroots + 2) * sizeof(*rk.g.roots));
		rk.g.roots[rk.g.nroots++] = tree;
		rk.g.roots[rk.g.nroots++] = id;
		rk.g.unflushed = 1;
		clone_set_ref(&rk.g, rk.g.known, &id);
	}
	git_error_clear();
	git_signature_free(sig);
	git_tree_free(t);
	git_commit_free(at);
	free(u);
	free(used);
}

int remotekeys_renders(struct planner *pl)
{
	struct graph *gr = pl->g;
	struct remotekey *v;
	struct pushed *np = NULL;
	size_t n, nn = 0, want = 0, distrusted = 0;
	git_oid tip;
	int have = 0;

	for (size_t i = 0; i < gr->nsteps; i++) {
		struct step *s = gr->steps[i];
		struct pushed p;
		if (s->kind == STEP_RENDER && s->selected && s->dirty && s->reason == R_NEVER &&
		    !state_pushed(pl->st, pushed_key(pl, s->gitpath), &p))
			want++;
	}
	if (!want)
		return 0;
	/* git.credentials not readable yet: the cluster that holds them (in a bootstrap, the remote too)
	 * is still to be made, and the fetch could only fail, asking for a token in a run that needs none
	 * (t8412); what is not reconstructed runs.  Read here only when there is something to reconstruct */
	if (gitcred_get(NULL, NULL, 1) < 0) {
		if (pl->rc.verbose)
			fprintf(stderr, "idpmake: nothing reconstructed: %s cannot be read yet\n", url_git_token_name());
		return 0;
	}
	rk.o = *pl->reconstruct;
	rk.open = 1;	/* clone_close after any answer */
	switch (clone_open(&rk.g, &rk.o, 1)) {
	case 1:
		rk.read = 1;
		return 0;	/* the embedded default remote, not created yet */
	case -1:
		return -1;
	}
	/* a credential missing, or one plain http may not carry: pre-flight says so, once (issue 37 item 5) */
	rk.g.quiet_auth = 1;
	if (remote_fetch(&rk.g, &tip, &have) < 0) {
		rk.g.quiet_auth = 0;
		if (rk.g.auth == AUTH_HTTP || (rk.g.auth == AUTH_NONE && !rk.g.parsed.password && !gitcred_given())) {
			if (pl->rc.verbose)
				fprintf(stderr, "idpmake: nothing reconstructed: the GitOps remote wants a credential "
						"(pre-flight says which)\n");
			return 0;
		}
		return -1;
	}
	rk.g.quiet_auth = 0;
	rk.read = !have;	/* a tip: read once it is looked up */
	if (!have || git_commit_lookup(&rk.tip, rk.g.repo, &tip) < 0 || git_commit_tree(&rk.root, rk.tip) < 0) {
		git_error_clear();
		return 0;
	}
	git_oid_tostr(rk.tipid, sizeof(rk.tipid), &tip);
	rk.read = 1;
	if (read_index(&rk.g, rk.root, &v, &n) < 0)
		return -1;
	if (!n)
		return 0;
	learn_known(gr, v, n);
	for (size_t i = 0; i < gr->nsteps; i++) {
		struct step *s = gr->steps[i];
		const struct remotekey *k;
		const char *f;
		struct pushed p;
		if (s->kind != STEP_RENDER || !s->selected || !s->dirty || s->reason != R_NEVER ||
		    state_pushed(pl->st, pushed_key(pl, s->gitpath), &p) || !(f = norm_path(s->gitpath)) ||
		    !(k = remotekeys_find(v, n, f)) || !hash_eq(k->key, s->key))
			continue;
		pj.v = agrow(pj.v, pj.n, sizeof(*pj.v));
		pj.v[pj.n++] = (struct proof){ f, k, s, 0 };
	}
	prove_all(pl);
	if (interrupted())
		return 0;	/* nothing recorded: the run stops, or renders */
	/* one transaction for every step (a commit each writes the journal); the steps change once it holds */
	if (state_begin(pl->st) < 0)
		return -1;
	for (size_t i = 0; i < pj.n; i++)
		if (pj.v[i].ok && state_step_ok(pl->st, pj.v[i].s->id, pj.v[i].s->key, pj.v[i].k->output, NULL,
						rk.tipid, 0) < 0) {
			state_end(pl->st, 0);
			return -1;
		}
	if (state_end(pl->st, 1) < 0)
		return -1;
	for (size_t i = 0; i < pj.n; i++) {
		struct step *s = pj.v[i].s;
		const struct remotekey *k = pj.v[i].k;
		if (!pj.v[i].ok) {
			distrusted++;
			if (status_verbose())
				fprintf(stderr, "idpmake: %s: %s is not what %s says: rendered\n", s->id, pj.v[i].folder,
					REMOTEKEYS_PATH);
			continue;
		}
		s->dirty = 0;
		s->reason = R_UP_TO_DATE;
		s->why = WHY_DONE;
		s->output = s->old_output = k->output;
		s->old_key = s->key;
		if (s->tree) {
			tree_free(s->tree);
			free(s->tree);
			s->tree = NULL;
		}
		lazycache_add(pl->statedir, k->output, rk.tipid, pj.v[i].folder);
		np = agrow(np, nn, sizeof(*np));
		np[nn++] = (struct pushed){ pushed_key(pl, s->gitpath), k->output, rk.tipid };
	}
	if (nn && state_push_done(pl->st, np, nn, rk.tipid) < 0)
		return -1;
	if (status_verbose())
		fprintf(stderr, "idpmake: %zu render%s reconstructed from %s at %.12s%s\n", nn, nn == 1 ? "" : "s",
			REMOTEKEYS_PATH, rk.tipid, distrusted ? aprintf(", %zu not trusted", distrusted) : "");
	return 0;
}

int remotekeys_proving(const struct step *r)
{
	return rk.open && rk.root && r && r->why == WHY_DONE;
}

const char *remotekeys_tip(void)
{
	return rk.tipid;
}

int remotekeys_read(void)
{
	return rk.read;
}

int remotekeys_folder_at(const char *rev, const char *folder)
{
	git_oid rid, at, now;
	git_commit *rc = NULL;
	git_tree *rt = NULL;
	int ok = rk.root && strlen(rev) == 40 && hex40(rev) && git_oid_fromstr(&rid, rev) == 0 &&
		 git_commit_lookup(&rc, rk.g.repo, &rid) == 0 && git_commit_tree(&rt, rc) == 0 &&
		 entry_in(&rk.g, rt, folder, &at, &rk.at_rev) >= 0 && entry_in(&rk.g, rk.root, folder, &now, &rk.at_tip) >= 0 &&
		 git_oid_equal(&at, &now);

	git_error_clear();
	git_tree_free(rt);
	git_commit_free(rc);
	return ok;
}

void remotekeys_end(void)
{
	if (!rk.open)
		return;
	parent_free(&rk.at_tip);
	parent_free(&rk.at_rev);
	git_tree_free(rk.root);
	git_commit_free(rk.tip);
	clone_close(&rk.g);
	memset(&rk, 0, sizeof(rk));
	pj.v = NULL;	/* the arena's */
	pj.n = pj.next = 0;
}
