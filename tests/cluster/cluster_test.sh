#!/usr/bin/env bash
# cluster_test.sh BUILD_DIR -- Agora across 2 emulated hosts (network
# namespaces, one rank per host, TCP only): jacobi and two litmus tests,
# checking that the ranks really sit on different hosts, that no doorbell
# signal crosses hosts and that the remote doorbell (UDP) is rung instead;
# then a computing home served with and without the remote doorbell
# (test_service_wakeup): rings counted in remote_doorbells only with it, and
# the idle service thread no dearer with it. Brings the cluster up under a
# name of its own and always takes it down. Exits 77 (ctest
# SKIP_RETURN_CODE) where namespaces are not permitted.
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
# Each rank sees only itself on its node and rings nobody by signal, and
# sent no signal; it rings the other by datagram, at the other's address.
expect_no_doorbell_across() {
  expect "rank 0\]: doorbell: signal [0-9]+, same node \[ 0 \], rings \[ \]" "rank 0 shares its node or rings"
  expect "rank 1\]: doorbell: signal [0-9]+, same node \[ 1 \], rings \[ \]" "rank 1 shares its node or rings"
  expect "rank 0\]: doorbell: rings sent to rank:count \[ 1:0 \]" "rank 0 rang rank 1 across hosts"
  expect "rank 1\]: doorbell: rings sent to rank:count \[ 0:0 \]" "rank 1 rang rank 0 across hosts"
  expect "rank 0\]: remote doorbell: UDP port [0-9]+ on \[ $ip1 \], rings \[ 1@$ip2:[0-9]+ \]" "rank 0 has no remote doorbell to rank 1"
  expect "rank 1\]: remote doorbell: UDP port [0-9]+ on \[ $ip2 \], rings \[ 0@$ip1:[0-9]+ \]" "rank 1 has no remote doorbell to rank 0"
}
# Rank R sent a datagram to the other rank, and its service thread took
# some from its own socket (its wait watches the socket).
expect_datagrams_from() {
  expect "rank $1\]: remote doorbell: datagrams sent to rank:count \[ $((1 - $1)):[1-9][0-9]* \]" "rank $1 rang no remote doorbell"
  expect "rank $1\]: remote doorbell: datagrams sent .* taken by the service thread [1-9]" "rank $1's service thread took no datagram"
}

agorarun="$bin/agorarun -n 2 --timeout $((step_seconds - 10))"
. "$here/lib.sh"
ip1=$(cluster_host_ip 1) ip2=$(cluster_host_ip 2)

# The same placement as the runs below: one rank on each host, each in its
# own network namespace.
run where $agorarun -- /bin/sh -c 'echo "where: $(hostname) $(readlink /proc/self/ns/net)"'
hosts=$(echo "$out" | awk '/^where:/ {print $2}' | sort -u | wc -l)
nets=$(echo "$out" | awk '/^where:/ {print $3}' | sort -u | wc -l)
[ "$hosts" -eq 2 ] && [ "$nets" -eq 2 ] || fail "the 2 ranks are not on 2 hosts ($hosts host names, $nets network namespaces)"

run jacobi $agorarun "$bin/jacobi" 256 40
expect "^jacobi 256x256, 40 iterations on 2 ranks" "jacobi did not report"
expect_no_doorbell_across
expect_datagrams_from 0
expect_datagrams_from 1

run litmus_sb $agorarun --protocol sc "$bin/test_litmus" sb 1000
expect "^PASS sb on 2 ranks" "litmus sb did not pass"
expect_no_doorbell_across

run litmus_mp $agorarun --protocol sc "$bin/test_litmus" mp 1000
expect "^PASS mp on 2 ranks" "litmus mp did not pass"
expect_no_doorbell_across

# Across hosts the service thread waits in ppoll on a signalfd: the
# program's own signals of the doorbell's number must still all come back.
run signals_blocked $agorarun --doorbell-signal 40 "$bin/test_signals" blocked 40 500
expect "^PASS signals blocked on 2 ranks" "signals blocked did not pass"
expect "rank 0\]: doorbell: rings sent .*handed back [1-9]" "rank 0's service thread handed back no signal"
expect "rank 0\]: remote doorbell: UDP port" "rank 0 did not wait on its remote doorbell"
run signals_flood $agorarun "$bin/test_signals" flood auto 500
expect "^PASS signals flood on 2 ranks" "signals flood did not pass"
expect_datagrams_from 0

# A computing home across hosts, without and with the remote doorbell.
# Only counts and generous bounds are judged (the timings are printed): the
# idle service thread wakes at most ~1000 times a second (the 1 ms nap cap)
# either way, and its CPU share with the doorbell's ppoll stays within
# twice that of the sigtimedwait nap plus one point.
field() {  # RANK KEY: the number after KEY on rank RANK's line
  echo "$out" | sed -n "s/^rank $1 .*$2 \([0-9.]*\).*/\1/p" | head -1
}
declare -A cpu
for mode in off auto; do
  run "service_wakeup_$mode" $agorarun --remote-doorbell $mode "$bin/test_service_wakeup" 100 2000 2000
  expect "^PASS service_wakeup on 2 ranks" "service_wakeup ($mode) did not pass"
  doorbells=$(field 0 remote_doorbells)
  if [ $mode = off ]; then
    [ "$doorbells" = 0 ] || fail "remote_doorbells is $doorbells with AGORA_REMOTE_DOORBELL=off"
    echo "$out" | grep -q "remote doorbell: UDP port" && fail "a remote doorbell opened with AGORA_REMOTE_DOORBELL=off"
  else
    [ -n "$doorbells" ] && [ "$doorbells" -gt 0 ] || fail "no remote doorbell rung across hosts (remote_doorbells '$doorbells')"
  fi
  for r in 0 1; do
    wakeups=$(field $r wakeups_per_s)
    [ -n "$wakeups" ] && [ "${wakeups%.*}" -le 1250 ] ||
      fail "rank $r's idle service thread woke $wakeups times a second ($mode; at most ~1000 expected)"
    cpu[$mode$r]=$(field $r cpu_pct)
  done
done
for r in 0 1; do
  awk -v a="${cpu[auto$r]}" -v o="${cpu[off$r]}" 'BEGIN { exit !(a <= 2 * o + 1) }' ||
    fail "rank $r's idle service thread costs ${cpu[auto$r]} % of a core with the remote doorbell, ${cpu[off$r]} % without"
done

echo "PASS: jacobi and litmus sb/mp on 2 emulated hosts, no doorbell signal across hosts, remote doorbells rung; idle service ${cpu[off0]}/${cpu[off1]} % of a core without the remote doorbell, ${cpu[auto0]}/${cpu[auto1]} % with"
