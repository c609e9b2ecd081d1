#!/usr/bin/env bash
# pidns_test.sh BUILD_DIR -- two ranks on one node (as MPI sees it) but each
# in a PID namespace of its own: a pid means a different process to each, so
# neither may ring the other's doorbell signal (both even have pid 1); they
# ring each other's remote doorbell (UDP) instead, where the machine has an
# IPv4 address other than loopback. Exits 77
# (ctest SKIP_RETURN_CODE) where PID namespaces are not permitted.
set -u
[ $# -eq 1 ] || { echo "usage: pidns_test.sh BUILD_DIR" >&2; exit 2; }
bin=$(cd "$1" && pwd)/bin
command -v unshare >/dev/null || { echo "SKIP: unshare not found"; exit 77; }
unshare --pid --fork true 2>/dev/null || { echo "SKIP: PID namespaces are not permitted here (unshare --pid failed)"; exit 77; }

# TCP between the ranks: Open MPI's shared-memory transport finds its peer
# by pid, which a PID namespace hides.
out=$(AGORA_DEBUG=1 OMPI_MCA_btl=tcp,self timeout -k 5 60 "$bin/agorarun" -n 2 --timeout 50 --protocol sc -- \
  unshare --pid --fork "$bin/test_litmus" mp 500 2>&1)
status=$?
echo "$out" | grep -v ': started:'
[ $status -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
patterns=("^PASS mp on 2 ranks"
  "rank 0\]: doorbell: signal [0-9]+, same node \[ 0 1 \], rings \[ \]"
  "rank 1\]: doorbell: signal [0-9]+, same node \[ 0 1 \], rings \[ \]"
  "rank 0\]: doorbell: rings sent to rank:count \[ 1:0 \]"
  "rank 1\]: doorbell: rings sent to rank:count \[ 0:0 \]")
if command -v ip >/dev/null && ip -4 -o addr show up scope global 2>/dev/null | grep -q inet; then
  patterns+=("rank 0\]: remote doorbell: datagrams sent to rank:count \[ 1:[1-9][0-9]* \]; taken by the service thread [1-9]"
    "rank 1\]: remote doorbell: datagrams sent to rank:count \[ 0:[1-9][0-9]* \]; taken by the service thread [1-9]")
fi
for pattern in "${patterns[@]}"; do
  echo "$out" | grep -Eq -- "$pattern" || { echo "FAIL: no line matches: $pattern"; exit 1; }
done
echo "PASS: same node, different PID namespaces: no doorbell signal, ${#patterns[@]} checks"
