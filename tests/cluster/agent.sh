#!/usr/bin/env bash
# agent.sh -- Open MPI's "ssh" for the emulated cluster
# (OMPI_MCA_plm_rsh_agent=/path/agent.sh, set by exec.sh).
#
#   agent.sh [ssh-style options] HOST COMMAND...
#
# mpirun calls it like ssh: HOST is a name from the hostfile (agora-hI) or an
# address of the cluster, and COMMAND is a shell command line (the orted
# daemon with its arguments, joined by spaces as ssh would). It runs COMMAND
# in HOST's network namespace, in a UTS namespace of its own whose host name
# is HOST's name, with a clean environment as an ssh login would have.
#
# CLUSTER_SAME_HOSTNAME=1 (in mpirun's environment) gives every rank one shared host
# name (the head's) instead: every rank then believes it shares one host with the others
# (the PID space is shared, so signals between "hosts" do work).
#
# Copied from the Agora team's emulated-cluster harness (kept outside this
# repository), trimmed to what tests/cluster/cluster_test.sh needs.
set -uo pipefail
. "$(dirname "$(readlink -f "$0")")/lib.sh"

# Skip ssh-style options (mpirun passes none to a custom agent, but be safe).
while [ $# -gt 0 ]; do
  case "$1" in
    -[1246AaCfGgKkMNnqsTtVvXxYy]) shift ;;
    -[BbcDEeFIiJLlmOopQRSWw]) shift 2 ;;
    -*) shift ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "agent.sh: usage: agent.sh HOST COMMAND..." >&2; exit 255; }
host=$1
shift
cmd="$*"

# HOST -> namespace: a name of the cluster, or an address in the hosts table.
ns=""
if ip netns list | awk '{print $1}' | grep -qx -- "$host"; then
  ns=$host
elif [ -r "$CLUSTER_STATE/hosts" ]; then
  ns=$(awk -v h="$host" '$1 == h || $2 == h {print $3; exit}' "$CLUSTER_STATE/hosts")
fi
if [ -z "$ns" ]; then
  echo "agent.sh: $host is not a host of the emulated cluster (see $CLUSTER_STATE/hosts)" >&2
  exit 255  # what ssh returns when it cannot connect
fi

# A login-like environment: only what a fresh ssh session would carry.
envv=(PATH="${PATH:-/usr/local/bin:/usr/bin:/bin}" HOME="${HOME:-/root}" USER="${USER:-root}"
      LOGNAME="${LOGNAME:-root}" SHELL=/bin/bash LANG="${LANG:-C.UTF-8}")
[ -n "${LD_LIBRARY_PATH:-}" ] && envv+=(LD_LIBRARY_PATH="$LD_LIBRARY_PATH")
[ -n "${TMPDIR:-}" ] && envv+=(TMPDIR="$TMPDIR")

if [ "${CLUSTER_SAME_HOSTNAME:-0}" = 1 ]; then
  exec ip netns exec "$ns" env -i "${envv[@]}" /bin/bash -c "$cmd"
fi
# shellcheck disable=SC2016
exec ip netns exec "$ns" unshare --uts -- env -i "${envv[@]}" /bin/bash -c \
  'hostname "$1" || exit 255; exec /bin/bash -c "$2"' agent "$ns" "$cmd"
