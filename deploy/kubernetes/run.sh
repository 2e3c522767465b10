#!/usr/bin/env bash
# Runs job.yaml's segments together and merges them: sets START_AT to now plus
# LEAD seconds (time for every pod to be scheduled and to pull the image), waits
# for the segments, runs merge-job.yaml, and prints the merged summary.
#
# Usage: deploy/kubernetes/run.sh [LEAD seconds (60)]
# Needs: kubectl pointed at the cluster, the image `servelab:latest` (see
# Dockerfile) where the nodes can pull it, and an RWX storage class (pvc.yaml).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
LEAD=${1:-60}
START_AT=$(date -u -d "+$LEAD seconds" +%Y-%m-%dT%H:%M:%SZ)
kubectl apply -f "$HERE/pvc.yaml"
kubectl delete job servelab-load servelab-merge --ignore-not-found
sed "s/START_AT_PLACEHOLDER/$START_AT/" "$HERE/job.yaml" | kubectl apply -f -
echo "segments start at $START_AT"
kubectl wait --for=condition=complete job/servelab-load --timeout=2h
kubectl apply -f "$HERE/merge-job.yaml"
kubectl wait --for=condition=complete job/servelab-merge --timeout=10m
kubectl logs job/servelab-merge
