#!/usr/bin/env bash
# cluster_test.sh BUILD_DIR -- Agora across 2 emulated hosts (network
# namespaces, one rank per host, TCP only): jacobi and two litmus tests,
# checking that the ranks really sit on different hosts and that no doorbell
# is rung across hosts. Brings the cluster up under a name of its own and
# always takes it down. Exits 77 (ctest SKIP_RETURN_CODE) where namespaces
# are not permitted.
set -u
here=$(cd "$(dirname "$0")" && pwd)
[ $# -eq 1 ] || { echo "usage: cluster_test.sh BUILD_DIR" >&2; exit 2; }
bin=$(cd "$1" && pwd)/bin
step_seconds=${CLUSTER_TEST_STEP_SECONDS:-60}  # bound of each run

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

[ "$(id -u)" = 0 ] || skip "needs root (network namespaces); run as root to test across hosts"
for tool in ip unshare mpirun timeout; do
  command -v "$tool" >/dev/null || skip "$tool not found"
done
# A name of our own, so that a cluster someone else has up is left alone.
export CLUSTER_PREFIX=agct$$
export CLUSTER_STATE=/run/$CLUSTER_PREFIX-cluster
probe=$CLUSTER_PREFIX-probe
ip netns add "$probe" 2>/dev/null || skip "network namespaces are not permitted here (ip netns add failed)"
ip netns del "$probe"
unshare --uts true 2>/dev/null || skip "UTS namespaces are not permitted here (unshare --uts failed)"

# Clusters of earlier runs that were killed before their trap ran.
for stale in $(ip netns list | awk '{print $1}' | sed -n 's/^agct\([0-9]*\)-.*/\1/p' | sort -u); do
  kill -0 "$stale" 2>/dev/null ||
    CLUSTER_PREFIX=agct$stale CLUSTER_STATE=/run/agct$stale-cluster "$here/down.sh" >/dev/null 2>&1
done

log=$(mktemp)
trap '"$here/down.sh" >/dev/null 2>&1; rm -f "$log"' EXIT  # down.sh also ends what still runs inside
trap 'echo "cluster_test: interrupted"; exit 1' INT TERM HUP
"$here/up.sh" 2 || fail "could not bring up 2 emulated hosts"

# run NAME COMMAND...: on the cluster's login node, with AGORA_DEBUG; the
# output is left in $out.
run() {
  local name=$1
  shift
  echo "== $name: $*"
  # In the background: `wait` returns at once when a trapped signal arrives.
  AGORA_DEBUG=1 timeout -k 5 "$step_seconds" "$here/exec.sh" "$@" >"$log" 2>&1 &
  wait $!
  local status=$?
  out=$(cat "$log")
  echo "$out" | grep -v ': started:'
  [ $status -eq 0 ] || fail "$name exited with status $status"
}
expect() {  # PATTERN WHAT
  echo "$out" | grep -Eq -- "$1" || fail "$2 (no line matches: $1)"
}
# Each rank sees only itself on its node and rings nobody, and sent no ring.
expect_no_doorbell_across() {
  expect "rank 0\]: doorbell: signal [0-9]+, same node \[ 0 \], rings \[ \]" "rank 0 shares its node or rings"
  expect "rank 1\]: doorbell: signal [0-9]+, same node \[ 1 \], rings \[ \]" "rank 1 shares its node or rings"
  expect "rank 0\]: doorbell: rings sent to rank:count \[ 1:0 \]" "rank 0 rang rank 1 across hosts"
  expect "rank 1\]: doorbell: rings sent to rank:count \[ 0:0 \]" "rank 1 rang rank 0 across hosts"
}

agorarun="$bin/agorarun -n 2 --timeout $((step_seconds - 10))"

# The same placement as the runs below: one rank on each host, each in its
# own network namespace.
run where $agorarun -- /bin/sh -c 'echo "where: $(hostname) $(readlink /proc/self/ns/net)"'
hosts=$(echo "$out" | awk '/^where:/ {print $2}' | sort -u | wc -l)
nets=$(echo "$out" | awk '/^where:/ {print $3}' | sort -u | wc -l)
[ "$hosts" -eq 2 ] && [ "$nets" -eq 2 ] || fail "the 2 ranks are not on 2 hosts ($hosts host names, $nets network namespaces)"

run jacobi $agorarun "$bin/jacobi" 256 40
expect "^jacobi 256x256, 40 iterations on 2 ranks" "jacobi did not report"
expect_no_doorbell_across

run litmus_sb $agorarun "$bin/test_litmus" sb 1000
expect "^PASS sb on 2 ranks" "litmus sb did not pass"
expect_no_doorbell_across

run litmus_mp $agorarun "$bin/test_litmus" mp 1000
expect "^PASS mp on 2 ranks" "litmus mp did not pass"
expect_no_doorbell_across

echo "PASS: jacobi and litmus sb/mp on 2 emulated hosts, no doorbell across hosts"
