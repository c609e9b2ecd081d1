#!/usr/bin/env bash
# exec.sh -- run a command on the emulated cluster's login node (namespace
# agora-head, host name agora-head) with Open MPI set up to launch on the
# cluster's hosts: agent.sh instead of ssh, the cluster's hostfile, TCP only
# (no shared memory between ranks), only the cluster's subnet. Everything is
# passed as OMPI_MCA_* variables (lib.sh: cluster_mpi_env), so any launcher
# underneath picks them up unchanged:
#
#   exec.sh build/bin/agorarun -n 4 build/bin/jacobi
#   exec.sh bench/run --build build --quick --protocols sc
#   exec.sh ctest --test-dir build -R jacobi
#   exec.sh mpirun -n 2 hostname
#
# The working directory and the caller's environment are kept (plus the MPI
# variables). Extra mpirun options can still be given on agorarun's command
# line (e.g. --hostfile FILE overrides the default one).
#
# Copied from the Agora team's emulated-cluster harness (kept outside this
# repository), trimmed to what tests/cluster/cluster_test.sh needs.
set -euo pipefail
. "$(dirname "$(readlink -f "$0")")/lib.sh"
cluster_need_root
[ $# -ge 1 ] || { echo "usage: exec.sh COMMAND [ARGS...]" >&2; exit 2; }
[ -e "$CLUSTER_STATE/size" ] || cluster_die "no cluster is up (run up.sh N)"

cluster_mpi_env
export CLUSTER_STATE
# shellcheck disable=SC2016
exec ip netns exec "$CLUSTER_HEAD" unshare --uts -- /bin/bash -c \
  'hostname "$0" && exec "$@"' "$CLUSTER_HEAD" "$@"
