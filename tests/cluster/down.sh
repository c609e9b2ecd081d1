#!/usr/bin/env bash
# down.sh -- tear down the emulated cluster made by up.sh: stop any process
# still running inside the cluster's namespaces, delete the namespaces
# (which deletes their interfaces and bridge), and remove
# /etc/netns/$CLUSTER_PREFIX-* and the state directory. Safe to run when nothing is up.
#
# Copied from the Agora team's emulated-cluster harness (kept outside this
# repository), trimmed to what tests/cluster/cluster_test.sh needs.
set -uo pipefail
. "$(dirname "$0")/lib.sh"
cluster_need_root

for ns in $(ip netns list | awk '{print $1}' | grep "^${CLUSTER_PREFIX}-" || true); do
  # Processes still inside (a hung job): each by its id.
  for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$pid" 2>/dev/null; done
  sleep 0.2
  for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  ip netns del "$ns" || echo "cluster: could not delete namespace $ns" >&2
  rm -rf "/etc/netns/$ns"
done
rmdir /etc/netns 2>/dev/null  # only if empty (nothing else uses it)
rm -rf "$CLUSTER_STATE"
echo "cluster: down"
