/*
 * capimgmt.c - MGMT:capi-check, what the management cluster of a created
 * cluster has of Cluster API, before anything of it is synced there
 * (capimgmt.h; spec/capi.md "Bootstrap and pre-flight").
 *
 * Read with kubectl through the cluster's kube target, three lists:
 *   providers.clusterctl.cluster.x-k8s.io  clusterctl's inventory
 *   coreproviders.operator.cluster.x-k8s.io the cluster-api-operator's
 *   deployment capi-system/capi-controller-manager  its --feature-gates
 * and judged:
 *   both owners                  refused: clusterctl and the operator would
 *                                fight over the same controllers
 *   the ClusterTopology gate off refused, naming CLUSTER_TOPOLOGY=true
 *   api: v1beta2 on a core older than v1.11  refused, naming api: v1beta1
 *   a clusterctl install         adopted, and said (the distro's own
 *                                capi-providers package would be a second
 *                                owner: refused too)
 *   nothing                      refused, unless the distro installs the
 *                                providers itself (capi-providers, which
 *                                then syncs before this step)
 * Keyed on the management cluster, its kube target and what its created
 * clusters want (api versions): a no-op costs no kubectl.
 */
#include <stdio.h>
#include <string.h>

#include "argo/kubectl.h"
#include "base/buf.h"
#include "distro/capi.h"
#include "graph/state.h"
#include "run/capimgmt.h"
#include "base/util.h"

static struct hash key_of(const struct step *s, const struct distro *d)
{
	struct hasher *h = hasher_new();
	const char *err;
	const struct kube_target *t = kubectl_target(s->cluster, &err);

	hasher_adds(h, "capi-check v1");
	hasher_adds(h, s->cluster->name);
	hasher_adds(h, t ? t->context : "");
	hasher_adds(h, t ? t->server : "");
	for (size_t i = 0; i < d->nclusters; i++) {
		const struct capi *k = d->clusters[i].create.capi;
		if (k && k->mgmt == s->cluster)
			hasher_adds(h, k->api);
	}
	hasher_add(h, &(int){ capimgmt_installs(d, s->cluster) }, sizeof(int));
	return hasher_end(h);
}

int capimgmt_installs(const struct distro *d, const struct cluster *m)
{
	const struct package *p = find_package(d, "capi-providers");
	return p && cluster_has(d, m, p);
}

void capimgmt_decide(struct planner *pl, struct step *s, const struct record *rec)
{
	s->key = key_of(s, pl->g->d);
	plan_compare(s, rec, "the management cluster, its kube context or what its clusters want changed");
}

/* the items of `kubectl get WHAT -A`: an array (empty when the kind is not served), or NULL with *err */
static json_t *items(const struct cluster *m, const char *what, const char *ns, const char **err)
{
	const char *args[] = { "get", what, ns ? "-n" : "-A", ns, NULL };
	json_t *doc, *v;

	if (!ns)
		args[3] = NULL;
	if (!(doc = kubectl_get_json(m, args, err))) {
		if (*err && (strstr(*err, "doesn't have a resource type") || strstr(*err, "NotFound") ||
			     strstr(*err, "not found"))) {
			*err = NULL;
			return json_array();
		}
		return NULL;
	}
	v = json_object_get(doc, "items");
	if (!json_is_array(v))	/* one object (a named get) */
		v = json_pack("[O]", doc);
	else
		json_incref(v);
	json_decref(doc);
	return v;
}

/* the core provider's version ("v1.11.0"), or NULL */
static const char *core_version(json_t *inv)
{
	size_t i;
	json_t *p;

	json_array_foreach(inv, i, p) {
		const char *type = json_string_value(json_object_get(p, "type"));
		const char *ver = json_string_value(json_object_get(p, "version"));
		if (type && !strcmp(type, "CoreProvider") && ver && strlen(ver) < 32)
			return astrdup(ver);
	}
	return NULL;
}

/* the ClusterTopology gate in the controller's args: 1 on, 0 off, -1 not said */
static int topology_gate(json_t *deps)
{
	size_t i, j, k;
	json_t *d, *c, *a;

	json_array_foreach(deps, i, d) {
		json_t *cs = json_object_get(json_object_get(json_object_get(json_object_get(d, "spec"), "template"),
							     "spec"), "containers");
		json_array_foreach(cs, j, c) {
			json_array_foreach(json_object_get(c, "args"), k, a) {
				const char *s = json_string_value(a), *g;
				if (s && !strncmp(s, "--feature-gates=", 16) && (g = strstr(s, "ClusterTopology=")))
					return !strncmp(g + 16, "true", 4);
			}
		}
	}
	return -1;
}

int capimgmt_run(struct planner *pl, struct step *s, const char **note, const char **err)
{
	const struct cluster *m = s->cluster;
	const struct distro *d = pl->g->d;
	json_t *inv = NULL, *op = NULL, *dep = NULL;
	const char *core;
	int gate, ret = -1, v1beta2 = 0;

	*note = NULL;
	for (size_t i = 0; i < d->nclusters; i++)
		if (d->clusters[i].create.capi && d->clusters[i].create.capi->mgmt == m &&
		    !strcmp(d->clusters[i].create.capi->api, "v1beta2"))
			v1beta2 = 1;
	if (!(inv = items(m, "providers.clusterctl.cluster.x-k8s.io", NULL, err)) ||
	    !(op = items(m, "coreproviders.operator.cluster.x-k8s.io", NULL, err)) ||
	    !(dep = items(m, "deployment/capi-controller-manager", "capi-system", err))) {
		*err = aprintf("management cluster '%s' unreachable: %s", m->name, *err);
		goto out;
	}
	if (json_array_size(inv) && json_array_size(op)) {
		*err = aprintf("management cluster '%s' has two owners of Cluster API: clusterctl (%zu providers in its "
			       "inventory) and the cluster-api-operator (%zu CoreProvider); keep one", m->name,
			       json_array_size(inv), json_array_size(op));
		goto out;
	}
	if (json_array_size(inv) && capimgmt_installs(d, m)) {
		*err = aprintf("management cluster '%s' has Cluster API from clusterctl, and the distro installs it too "
			       "(capi-providers): two owners; drop capi-providers from '%s', or the clusterctl install",
			       m->name, m->name);
		goto out;
	}
	if (!json_array_size(inv) && !json_array_size(op) && !json_array_size(dep)) {
		*err = aprintf("management cluster '%s' has no Cluster API (no clusterctl inventory, no operator "
			       "CoreProvider, no capi-system/capi-controller-manager): run `CLUSTER_TOPOLOGY=true "
			       "clusterctl init`, or give it the capi-mgmt distro's packages", m->name);
		goto out;
	}
	if ((gate = topology_gate(dep)) == 0 || (gate < 0 && json_array_size(dep))) {
		*err = aprintf("management cluster '%s': the ClusterTopology feature gate is %s on Cluster API's "
			       "controller, so a Cluster with a topology is refused: set CLUSTER_TOPOLOGY=true "
			       "(clusterctl init) or manager.featureGates.ClusterTopology: true (the operator's "
			       "CoreProvider)", m->name, gate == 0 ? "off" : "not set (off by default)");
		goto out;
	}
	core = core_version(inv);
	if (core && v1beta2) {
		int maj = 0, min = 0;
		if (sscanf(core, "v%d.%d", &maj, &min) == 2 && maj == 1 && min < 11) {
			*err = aprintf("management cluster '%s' runs Cluster API %s, which has no v1beta2 (1.11 and later): "
				       "give its clusters create.api: v1beta1, or upgrade it", m->name, core);
			goto out;
		}
	}
	*note = json_array_size(inv) ? aprintf("adopted clusterctl's Cluster API%s%s", core ? " " : "", core ? core : "")
				     : json_array_size(op) ? "Cluster API from the cluster-api-operator" : "Cluster API";
	ret = 0;
out:
	json_decref(inv);
	json_decref(op);
	json_decref(dep);
	return ret;
}
