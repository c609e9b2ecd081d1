#!/usr/bin/env bash
# up.sh N -- create an emulated cluster of N hosts on this machine.
#
# Each host is a network namespace (agora-h1 .. agora-hN) with one interface,
# eth0, on a bridge in the namespace agora-sw; mpirun runs in agora-head (the
# "login node", not a compute host). Addresses: head 10.77.0.10, host I
# 10.77.0.(10+I), all /24, no default route anywhere (nothing inside can reach
# an address outside the cluster). See lib.sh for the names, README.md for
# how to run programs on it.
#
# Writes $CLUSTER_STATE (default /run/agora-cluster): size, hosts (name ip
# namespace per line), hostfile (one slot per host). Undo with down.sh.
# Needs root, iproute2 (ip) and util-linux (unshare).
#
# Copied from the Agora team's emulated-cluster harness (kept outside this
# repository), trimmed to what tests/cluster/cluster_test.sh needs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

n=${1:-}
case "$n" in ''|*[!0-9]*) echo "usage: up.sh N   (N hosts, 1..200)" >&2; exit 2 ;; esac
[ "$n" -ge 1 ] && [ "$n" -le 200 ] || cluster_die "N must be 1..200"
cluster_need_root
command -v ip >/dev/null || cluster_die "ip not found: apt-get install iproute2"
command -v unshare >/dev/null || cluster_die "unshare not found: apt-get install util-linux"

if [ -e "$CLUSTER_STATE/size" ] || ip netns list | grep -q "^${CLUSTER_PREFIX}-"; then
  echo "cluster: an old cluster is up; taking it down first" >&2
  "$CLUSTER_DIR/down.sh"
fi
mkdir -p "$CLUSTER_STATE"
# If anything below fails, leave nothing half-made behind.
trap 'echo "cluster: up.sh failed; cleaning up" >&2; "$CLUSTER_DIR/down.sh" >/dev/null 2>&1 || true' ERR

# The switch.
ip netns add "$CLUSTER_SW"
ip -n "$CLUSTER_SW" link set lo up
ip -n "$CLUSTER_SW" link add br0 type bridge stp_state 0 forward_delay 0
ip -n "$CLUSTER_SW" link set br0 up

# One namespace plugged into the switch: attach NAME IP PORT.
attach() {
  local ns=$1 addr=$2 port=$3
  ip netns add "$ns"
  ip -n "$ns" link set lo up
  ip link add eth0 netns "$ns" type veth peer name "$port" netns "$CLUSTER_SW"
  ip -n "$CLUSTER_SW" link set "$port" master br0
  ip -n "$CLUSTER_SW" link set "$port" up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
}

attach "$CLUSTER_HEAD" "$CLUSTER_HEAD_IP" head
: > "$CLUSTER_STATE/hosts"
for i in $(seq 1 "$n"); do
  attach "$(cluster_host_ns "$i")" "$(cluster_host_ip "$i")" "h$i"
  echo "$(cluster_host_ns "$i") $(cluster_host_ip "$i") $(cluster_host_ns "$i")" >> "$CLUSTER_STATE/hosts"
done
echo "$n" > "$CLUSTER_STATE/size"

# Name resolution inside the cluster: a private hosts file, files only (no
# DNS), for every namespace (ip netns exec bind-mounts these over /etc/).
hosts_file=$(mktemp)
{
  echo "127.0.0.1 localhost"
  echo "$CLUSTER_HEAD_IP $CLUSTER_HEAD"
  for i in $(seq 1 "$n"); do echo "$(cluster_host_ip "$i") $(cluster_host_ns "$i")"; done
} > "$hosts_file"
for ns in "$CLUSTER_SW" "$CLUSTER_HEAD" $(for i in $(seq 1 "$n"); do cluster_host_ns "$i"; done); do
  d=/etc/netns/$ns
  mkdir -p "$d"
  cp "$hosts_file" "$d/hosts"
  echo "# emulated cluster: no DNS" > "$d/resolv.conf"
  if [ -f /etc/nsswitch.conf ]; then
    sed 's/^hosts:.*/hosts: files/' /etc/nsswitch.conf > "$d/nsswitch.conf"
  else
    echo "hosts: files" > "$d/nsswitch.conf"
  fi
done
rm -f "$hosts_file"

"$CLUSTER_DIR/hostfile.sh" -o "$CLUSTER_STATE/hostfile"

# Check that every host answers the head (ping only addresses of the cluster).
if command -v ping >/dev/null; then
  for i in $(seq 1 "$n"); do
    ip netns exec "$CLUSTER_HEAD" ping -q -c 1 -W 2 "$(cluster_host_ip "$i")" >/dev/null ||
      cluster_die "host $i ($(cluster_host_ip "$i")) does not answer the head"
  done
fi
trap - ERR
echo "cluster: $n hosts up: $(for i in $(seq 1 "$n"); do printf '%s(%s) ' "$(cluster_host_ns "$i")" "$(cluster_host_ip "$i")"; done)"
echo "cluster: hostfile $CLUSTER_STATE/hostfile; run programs with $CLUSTER_DIR/exec.sh CMD"
