#!/usr/bin/env python3
"""Where the emulator still answers otherwise than the recorded answers of a real Argo CD (recorded/):
each test here fails against today's emulator and names the difference.  Not run by tests/run.sh: the
emulator's owner makes them pass, then moves them into test_emulator.py.

    python3 tests/argocd-emu/test_recorded_todo.py
"""
import unittest

import test_emulator as T


class RecordedTodo(T.EmulatorTest):
    # only the tests below run (load_tests): the inherited ones run in test_emulator.py
    def test_todo_summary_images(self):
        """recorded/application-get.json: status.summary.images lists the images of the Application's
        workloads (["nginx:latest"] for its Deployment); the emulator answers summary {}"""
        a = self.synced_app("todo-images")
        self.assertEqual(a["status"]["summary"].get("images"), ["nginx:1"])

    def test_todo_empty_repository_list_is_null(self):
        """argo-cd 37ee009 server/repository/repository.go:184-238 (ListRepositories, prepareRepoList) builds the
        list with Repositories.Filter (pkg/apis/application/v1alpha1/repository_types.go:440-449), which starts from
        a nil slice, and RepositoryList.Items is `json:"items"` (not omitempty): with no repository the answer is
        {"metadata": {}, "items": null}; the emulator answers "items": []"""
        st, _, lst = self.c.req("GET", "/api/v1/repositories")
        self.assertEqual(st, 200, lst)
        self.assertEqual(lst, {"metadata": {}, "items": None})


def load_tests(loader, tests, pattern):
    return unittest.TestSuite(RecordedTodo(n) for n in loader.getTestCaseNames(RecordedTodo) if n.startswith("test_todo"))


if __name__ == "__main__":
    unittest.main()
