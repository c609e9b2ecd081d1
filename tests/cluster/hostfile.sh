#!/usr/bin/env bash
# hostfile.sh -- print an Open MPI hostfile for the emulated cluster.
#
#   hostfile.sh [-n HOSTS] [-s SLOTS] [-o FILE]
#
#   -n HOSTS  use the first HOSTS hosts (default: all that are up)
#   -s SLOTS  slots per host (default 1: one rank per emulated host; with
#             more ranks than slots mpirun needs --oversubscribe, which
#             agorarun adds when N exceeds the machine's cores)
#   -o FILE   write to FILE instead of standard output
#
# Host names are the namespaces' names (agora-h1 ...); they resolve inside
# the cluster through /etc/netns/*/hosts, and agent.sh maps them (or their
# addresses) to namespaces.
#
# Copied from the Agora team's emulated-cluster harness (kept outside this
# repository), trimmed to what tests/cluster/cluster_test.sh needs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

hosts=$(cluster_size) slots=1 out=""
while getopts "n:s:o:" o; do
  case $o in
    n) hosts=$OPTARG ;;
    s) slots=$OPTARG ;;
    o) out=$OPTARG ;;
    *) echo "usage: hostfile.sh [-n HOSTS] [-s SLOTS] [-o FILE]" >&2; exit 2 ;;
  esac
done
[ "$hosts" -ge 1 ] 2>/dev/null || cluster_die "no cluster is up (run up.sh N) or bad -n"
[ "$hosts" -le "$(cluster_size)" ] || cluster_die "only $(cluster_size) hosts are up"

gen() {
  echo "# emulated cluster ($hosts hosts, $slots slot(s) each); made by hostfile.sh"
  for i in $(seq 1 "$hosts"); do echo "$(cluster_host_ns "$i") slots=$slots"; done
}
if [ -n "$out" ]; then gen > "$out"; else gen; fi
