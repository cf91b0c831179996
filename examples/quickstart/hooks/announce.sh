#!/bin/sh
# A post hook: runs after the package is synced (here: after it is pushed,
# since the quickstart has no Argo CD).  Values arrive as environment.
echo "$IDPMAKE_PACKAGE on $IDPMAKE_CLUSTER is at commit $IDPMAKE_COMMIT"
ls "$IDPMAKE_RENDERED"
