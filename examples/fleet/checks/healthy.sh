#!/bin/sh
# The check of the last wave: runs once its Applications are synced at this
# run's commit and Healthy. Put an SLO query here; a non-zero exit halts the
# rollout. idpmake gives IDPMAKE_WAVE, IDPMAKE_WAVE_CLUSTERS and IDPMAKE_COMMIT.
echo "wave $IDPMAKE_WAVE healthy at $IDPMAKE_COMMIT: $IDPMAKE_WAVE_CLUSTERS"
