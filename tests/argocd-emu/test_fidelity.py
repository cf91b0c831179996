#!/usr/bin/env python3
"""Self-test of the emulator's Argo CD behaviours of issue 21 items 4, 6, 7 and 8 (read in Argo CD's source,
v3.6 37ee009): python3 tests/argocd-emu/test_fidelity.py

  - three-way comparison: a field last-applied holds and the target dropped is OutOfSync (gitops-engine diff.Diff);
  - server/cluster Create and Update reach the cluster before they save (kubectl GetServerVersion);
  - namespaces: a sync into one the cluster lacks fails the dry run unless CreateNamespace=true;
  - cluster info of a cluster no Application deploys to (controller/clusterinfoupdater.go);
  - auto-sync: retry limit 5 by default, alreadyAttemptedSync compares the source, a failed attempt is not retried.
And of issue 33 item 5: an Application whose path a later commit removes is a ComparisonError "app path does not
exist" at its next comparison (util/app/path/path.go Path, controller/state.go CompareAppState), Unknown, not Synced.
"""
import os
import shutil
import socket
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_emulator import Client, git, start_emulator, REPO_URL  # noqa: E402

BAD = "https://127.0.0.1:%d"


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class FidelityTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="argocd-fidelity-")
        bare, work = os.path.join(cls.tmp, "repo.git"), os.path.join(cls.tmp, "work")
        git("init", "--bare", "-q", "-b", "main", bare)
        git("clone", "-q", bare, work)
        os.makedirs(os.path.join(work, "in-cluster", "a"))
        with open(os.path.join(work, "in-cluster", "a", "cm.yaml"), "w") as f:
            f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: '1', y: '2'}\ndata: {k: v, old: o}\n")
        os.makedirs(os.path.join(work, "in-cluster", "b"))
        with open(os.path.join(work, "in-cluster", "b", "cm.yaml"), "w") as f:
            f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: b\n")
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", "init", cwd=work)
        git("push", "-q", "origin", "HEAD:main", cwd=work)
        cls.work = work
        cls.proc, port = start_emulator(cls.tmp, "fid", "--op-ms", "30", "--health-ms", "30", "--reconcile-ms", "10",
                                        "--retry-ms", "10", strict_namespaces=True)
        cls.c = Client("http://127.0.0.1:%d" % port)

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def app(self, name, path, ns, opts=None, auto=False):
        spec = {"source": {"repoURL": REPO_URL, "path": path, "targetRevision": "main"},
                "destination": {"server": "https://kubernetes.default.svc", "namespace": ns}}
        pol = {}
        if opts:
            pol["syncOptions"] = opts
        if auto:
            pol["automated"] = {}
        if pol:
            spec["syncPolicy"] = pol
        st, _, b = self.c.req("POST", "/api/v1/applications?upsert=true", {"metadata": {"name": name}, "spec": spec})
        self.assertEqual(st, 200, b)

    def get(self, name):
        return self.c.req("GET", "/api/v1/applications/" + name)[2]

    def wait_for(self, name, pred, secs=30):
        end = time.time() + secs
        while time.time() < end:
            a = self.get(name)
            if pred(a):
                return a
            time.sleep(0.02)
        self.fail("timeout waiting on %s: %s" % (name, a))

    @staticmethod
    def finished(a):
        return "operation" not in a and (a["status"].get("operationState") or {}).get("phase") in ("Succeeded", "Failed", "Error")

    # ---- item 6
    def test_cluster_create_reaches_the_cluster(self):
        dead = BAD % free_port()
        st, _, b = self.c.req("POST", "/api/v1/clusters", {"server": dead, "name": "dead", "config": {"bearerToken": "t"}})
        self.assertEqual((st, b["code"]), (500, 2))
        self.assertRegex(b["message"], r'^error getting server version: failed to get server version: Get "%s/version\?timeout=32s": '
                         r'dial tcp 127\.0\.0\.1:\d+: connect: connection refused$' % dead)
        st, _, b = self.c.req("POST", "/api/v1/clusters", {"server": "https://x.example", "config": {
            "tlsClientConfig": {"caData": "not base64!"}}})
        self.assertEqual((st, b["code"], b["message"]), (400, 3, "illegal base64 data at input byte 3"))
        st, _, b = self.c.req("POST", "/api/v1/clusters", {"server": "https://x.example", "config": {
            "tlsClientConfig": {"caData": "bm90IHBlbQ=="}}})
        self.assertEqual(b["message"], "error getting server version: failed to create discovery client: unable to load "
                                       "root certificates: unable to parse bytes as PEM block")
        self.c.req("POST", "/_emu/config", {"cluster_tokens": {"https://tok.example": "good"}})
        st, _, b = self.c.req("POST", "/api/v1/clusters", {"server": "https://tok.example", "config": {"bearerToken": "bad"}})
        self.assertEqual((st, b["message"]), (500, "error getting server version: failed to get server version: Unauthorized"))
        st, _, b = self.c.req("POST", "/api/v1/clusters", {"server": "https://tok.example", "config": {"bearerToken": "good"}})
        self.assertEqual(st, 200, b)
        # a labels-only update is checked with the stored credentials
        self.c.req("POST", "/_emu/config", {"cluster_tokens": {"https://tok.example": "rotated"}})
        st, _, b = self.c.req("PUT", "/api/v1/clusters/https%3A%2F%2Ftok.example?updatedFields=labels",
                              {"server": "https://tok.example", "labels": {"a": "b"}})
        self.assertEqual((st, b["message"]), (500, "failed to get server version: failed to get server version: Unauthorized"))
        st, _, b = self.c.req("GET", "/api/v1/clusters/https%3A%2F%2Ftok.example")
        self.assertNotIn("labels", b)   # nothing saved
        # no Application deploys there: not watched
        info = b["info"]
        self.assertEqual(info["connectionState"]["status"], "Unknown")
        self.assertEqual(info["connectionState"]["message"], "Cluster has no applications and is not being monitored.")
        self.assertNotIn("apiVersions", info)

    # ---- item 7
    def test_namespaces(self):
        self.app("ns1", "in-cluster/b", "nowhere")
        self.c.req("POST", "/api/v1/applications/ns1/sync", {})
        a = self.wait_for("ns1", self.finished)
        op = a["status"]["operationState"]
        self.assertEqual((op["phase"], op["message"]), ("Failed", "one or more objects failed to apply (dry run)"))
        self.assertEqual([(r["status"], r["message"]) for r in op["syncResult"]["resources"]],
                         [("SyncFailed", 'namespaces "nowhere" not found')])
        self.app("ns2", "in-cluster/b", "made", opts=["CreateNamespace=true"])
        self.c.req("POST", "/api/v1/applications/ns2/sync", {})
        self.assertEqual(self.wait_for("ns2", self.finished)["status"]["operationState"]["phase"], "Succeeded")

    # ---- items 4 and 8
    def test_three_way_and_auto_sync(self):
        self.app("tw", "in-cluster/a", "default", auto=True)
        a = self.wait_for("tw", lambda a: self.finished(a) and a["status"]["sync"]["status"] == "Synced")
        op = a["status"]["operationState"]["operation"]
        self.assertEqual(op["retry"], {"limit": 5})          # autoSync's default RetryStrategy
        self.assertTrue(op["initiatedBy"]["automated"])
        self.assertIn("source", op["sync"])
        # the render drops a label and a data key: a three-way difference; auto-sync removes them live
        with open(os.path.join(self.work, "in-cluster", "a", "cm.yaml"), "w") as f:
            f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels: {x: '1'}\ndata: {k: v}\n")
        git("commit", "-q", "-am", "drop", cwd=self.work)
        git("push", "-q", "origin", "HEAD:main", cwd=self.work)
        sha = git("rev-parse", "HEAD", cwd=self.work)
        self.get("tw?refresh=normal")
        a = self.wait_for("tw", lambda a: self.finished(a) and a["status"]["operationState"]["syncResult"]["revision"] == sha
                          and a["status"]["sync"]["status"] == "Synced")
        st, _, m = self.c.req("GET", "/api/v1/applications/tw/managed-resources")
        live = __import__("json").loads(m["items"][0]["liveState"])
        self.assertEqual((sorted(live["data"]), sorted(live["metadata"]["labels"])), (["k"], ["x"]))
        # a failing automated sync retries 5 times, then is not attempted again: SyncError
        self.c.req("POST", "/_emu/fault", {"app": "tw", "sync_fail": "boom"})
        with open(os.path.join(self.work, "in-cluster", "a", "cm.yaml"), "a") as f:
            f.write("# a new commit\n")
        git("commit", "-q", "-am", "again", cwd=self.work)
        git("push", "-q", "origin", "HEAD:main", cwd=self.work)
        sha = git("rev-parse", "HEAD", cwd=self.work)
        self.get("tw?refresh=normal")
        a = self.wait_for("tw", lambda a: self.finished(a) and a["status"]["operationState"]["phase"] == "Failed")
        self.assertEqual(a["status"]["operationState"]["retryCount"], 5)
        self.assertEqual(a["status"]["operationState"]["message"], "boom (retried 5 times).")
        a = self.get("tw?refresh=normal")
        self.assertNotIn("operation", a)                    # already attempted: same revision, same source
        self.assertEqual([c["message"] for c in a["status"]["conditions"] if c["type"] == "SyncError"],
                         ["Failed last sync attempt to [%s]: boom (retried 5 times)." % sha])
        # the same revision with another source is a new attempt (alreadyAttemptedSync compares the source)
        self.c.req("POST", "/_emu/fault", {"app": "tw", "clear": True})
        spec = a["spec"]
        spec["source"]["directory"] = {"recurse": True}
        st, _, b = self.c.req("PUT", "/api/v1/applications/tw/spec", spec)
        self.assertEqual(st, 200, b)
        a = self.wait_for("tw", lambda a: self.finished(a) and a["status"]["operationState"]["phase"] == "Succeeded")
        self.assertEqual(a["status"]["operationState"]["syncResult"]["revision"], sha)


class AppPathTest(unittest.TestCase):
    """Issue 33 item 5, on an emulator of its own: its periodic comparison reaches every cluster's info."""
    setUpClass = classmethod(FidelityTest.setUpClass.__func__)
    tearDownClass = classmethod(FidelityTest.tearDownClass.__func__)
    app, get, wait_for = FidelityTest.app, FidelityTest.get, FidelityTest.wait_for
    finished = staticmethod(FidelityTest.finished)

    def test_app_path_removed(self):
        os.makedirs(os.path.join(self.work, "in-cluster", "gone"))
        with open(os.path.join(self.work, "in-cluster", "gone", "cm.yaml"), "w") as f:
            f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: gone\n")
        git("add", ".", cwd=self.work)
        git("commit", "-q", "-m", "gone: add", cwd=self.work)
        git("push", "-q", "origin", "HEAD:main", cwd=self.work)
        self.app("gone", "in-cluster/gone", "default")
        self.c.req("POST", "/api/v1/applications/gone/sync", {})
        a = self.wait_for("gone", lambda a: self.finished(a) and a["status"]["sync"]["status"] == "Synced")
        self.assertFalse([c for c in a["status"].get("conditions", []) if c["type"] == "ComparisonError"])
        # the folder goes from the branch the Application tracks: its next comparison cannot load the target state
        git("rm", "-q", "-r", "in-cluster/gone", cwd=self.work)
        git("commit", "-q", "-m", "gone: remove", cwd=self.work)
        git("push", "-q", "origin", "HEAD:main", cwd=self.work)
        a = self.get("gone?refresh=normal")
        self.assertEqual([c["message"] for c in a["status"]["conditions"] if c["type"] == "ComparisonError"],
                         ["Failed to load target state: failed to generate manifest for source 1 of 1: rpc error: "
                          "code = Unknown desc = in-cluster/gone: app path does not exist"])
        self.assertEqual(a["status"]["sync"]["status"], "Unknown")
        # the periodic comparison (timeout.reconciliation) finds it too, without a refresh
        before = self.c.req("GET", "/_emu/config")[2]["resync_ms"]
        self.c.req("POST", "/_emu/config", {"resync_ms": 50})
        try:
            t0 = self.get("gone")["status"]["reconciledAt"]
            a = self.wait_for("gone", lambda a: a["status"]["reconciledAt"] != t0, secs=10)
            self.assertIn("in-cluster/gone: app path does not exist",
                          " ".join(c["message"] for c in a["status"].get("conditions", [])))
        finally:
            self.c.req("POST", "/_emu/config", {"resync_ms": before})
        # the folder back: the condition goes
        git("revert", "--no-edit", "HEAD", cwd=self.work)
        git("push", "-q", "origin", "HEAD:main", cwd=self.work)
        a = self.get("gone?refresh=normal")
        self.assertFalse([c for c in a["status"].get("conditions", []) if c["type"] == "ComparisonError"])
        self.assertEqual(a["status"]["sync"]["status"], "Synced")


if __name__ == "__main__":
    unittest.main()
