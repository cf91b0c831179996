/*
 * t-provision.c - the provision's line in words (provision_said, issue 32
 * #8): what CLUSTER:provision records ("UID VERSION NAMESPACE MANAGEMENT
 * PKGS DELETE-TIMEOUT") said as "Cluster provisioned on mgmt (v1.33.2, 3
 * workers), uid 08181f0e", "made again" for a new uid, "upgraded from" for
 * another version of the same one; never the record itself.
 */
#include <string.h>

#include "distro/capi.h"
#include "graph/graph.h"
#include "run/provision.h"
#include "base/util.h"
#include "test.h"

static const char *rec = "08181f0e-5c1d-4b7a-9d2e-3f4a5b6c7d8e v1.33.2 fleet mgmt calico,podinfo 3600";

static const char *said(struct capi_worker *w, size_t nw, const char *r, const char *was)
{
	static struct capi k;
	static struct cluster c;
	static struct step s;

	k = (struct capi){ .management = "mgmt", .namespace = "fleet", .workers = w, .nworkers = nw };
	c = (struct cluster){ .name = "eu-1" };
	c.create.capi = &k;
	s = (struct step){ .id = "eu-1:provision", .kind = STEP_PROVISION, .cluster = &c };
	return provision_said(&s, r, was);
}

static void test_first(void)
{
	struct capi_worker w[] = { { .name = "md-0", .replicas = 2 }, { .name = "md-1", .replicas = 1 } };

	CHECK_STR(said(w, 2, rec, NULL), "Cluster provisioned on mgmt (v1.33.2, 3 workers), uid 08181f0e");
	/* a failed provision's row: no record yet */
	CHECK_STR(said(w, 1, rec, ""), "Cluster provisioned on mgmt (v1.33.2, 2 workers), uid 08181f0e");
	/* the class's default replicas: the pools are counted instead */
	w[1].replicas = -1;
	CHECK_STR(said(w, 2, rec, NULL), "Cluster provisioned on mgmt (v1.33.2, 2 worker pools), uid 08181f0e");
	/* create.spec without a version, no workers: nothing in parentheses */
	CHECK_STR(said(NULL, 0, "0aa1b2c3d4 - fleet mgmt - 3600", NULL), "Cluster provisioned on mgmt, uid 0aa1b2c3");
	CHECK(!strstr(said(w, 2, rec, NULL), "calico"));
}

static void test_again(void)
{
	CHECK_STR(said(NULL, 0, rec, "77777777-0000 v1.33.2 fleet mgmt calico,podinfo 3600"),
		  "Cluster made again (its uid changed) on mgmt (v1.33.2), uid 08181f0e");
	CHECK_STR(said(NULL, 0, rec, "08181f0e-5c1d-4b7a-9d2e-3f4a5b6c7d8e v1.32.4 fleet mgmt calico 3600"),
		  "Cluster upgraded from v1.32.4 on mgmt (v1.33.2), uid 08181f0e");
	CHECK_STR(said(NULL, 0, rec, rec), "Cluster converged on mgmt (v1.33.2), uid 08181f0e");
}

TEST_MAIN(test_first, test_again)
