#!/usr/bin/env bash
# robustness-cases.sh [BUILD [TESTS]]: runs each misuse / corner case of
# docs/robustness.md once and prints a Markdown table row per case: exit
# status, seconds, and the first line that says what happened. BUILD holds
# bin/agorarun and bin/jacobi (default build); TESTS the test programs
# test_misbehave, test_alloc, test_signals, test_syscalls, test_bigmem
# (default BUILD/bin). Point both at an older build to see the "before"
# (docs/robustness.md says how the table there was made). Each case is cut
# off after LIMIT seconds (default 20): "hang" in the table.
set -u
build=$(cd "${1:-build}" && pwd)
tests=$(cd "${2:-$build/bin}" && pwd)
limit=${LIMIT:-20}
run=$build/bin/agorarun
t=$tests

# The line that names the outcome: for a success the program's result (and
# any Agora warning), else Agora's or the launcher's message, a failed check,
# or MPI's note of a signal.
summary() {  # STATUS < output
  local out
  out=$(cat)
  local line=""
  if [ "$1" -eq 0 ]; then line=$(echo "$out" | grep -E "unknown variable|PASS|residual|rounds;" | head -1); fi
  [ -n "$line" ] || line=$(echo "$out" | grep -E "agora\[|agora:|agorarun:|check failed|PASS|signal [0-9]+|Segmentation|not found|error" \
    | grep -vE "^\[vm|MPI_ABORT|NOTE:|show_help|help message|orte_base" | head -1)
  echo "$line" | cut -c1-170 | tr '|' '/'
}

case_row() {  # NAME COMMAND...
  local name=$1
  shift
  local start end out status
  start=$(date +%s.%N)
  out=$(timeout -k 3 "$limit" "$@" 2>&1 < /dev/null)
  status=$?
  end=$(date +%s.%N)
  pkill -9 -f "$t/test_" 2>/dev/null
  local what
  if [ $status -eq 124 ] || [ $status -eq 137 ]; then what="hang (cut off at ${limit} s)"; else what="exit $status"; fi
  printf '| %s | %s | %.1f | %s |\n' "$name" "$what" "$(echo "$end - $start" | bc)" "$(echo "$out" | summary $status)"
}

echo "| case | outcome | s | first message |"
echo "|---|---|---|---|"
case_row "alloc/malloc near SIZE_MAX (alloc test, 2 ranks)" $run -n 2 $t/test_alloc
case_row "reduce: counts differ" $run -n 2 $t/test_misbehave reduce_count
case_row "reduce: int64 vs double" $run -n 2 $t/test_misbehave reduce_type
case_row "reduce: count 2^40 on one rank" $run -n 2 $t/test_misbehave reduce_huge
case_row "locks created differently (counter)" $run -n 2 $t/test_misbehave lock_count
case_row "fork(): child touches global memory" $run -n 2 $t/test_syscalls fork
case_row "same thread locks twice" $run -n 2 $t/test_misbehave lock_twice
case_row "two threads of a rank in agora_barrier" $run -n 2 $t/test_misbehave barrier_threads
case_row "one rank calls an extra barrier" $run -n 2 $t/test_misbehave extra_barrier
case_row "agora thread calls agora_barrier" $run -n 2 $t/test_misbehave barrier_agora_thread
case_row "agora_alloc on one rank only" $run -n 3 $t/test_misbehave alloc_one_rank
case_row "app SIGSEGV handler after agora_init" $run -n 2 $t/test_signals segv
case_row "deadlock: two locks, opposite orders" $run -n 2 $t/test_misbehave deadlock
case_row "finalize holding a lock another rank waits for" $run -n 2 $t/test_misbehave finalize_holding
case_row "rank stopped (SIGSTOP) while others wait" env AGORA_HANG_WARN=2 AGORA_HANG_TIMEOUT=4 $run -n 2 $t/test_misbehave stop
case_row "2000 SIGURGs + 2000 doorbell-number signals" $run -n 2 $t/test_signals flood auto 2000
case_row "read/write/fread/recv into remote global memory" $run -n 2 $t/test_syscalls io
case_row "AGORA_PROTOCL=hlrc (typo)" env AGORA_PROTOCL=hlrc $run -n 2 $t/test_misbehave ok
case_row "AGORA_STATS_JSON=/nonexistent/dir/x.json" env AGORA_STATS_JSON=/nonexistent/dir/x.json $run -n 2 $t/test_misbehave ok
case_row "AGORA_MEMORY=48T" env AGORA_MEMORY=48T $run -n 2 $build/bin/jacobi 256 10
case_row "AGORA_MEMORY=64T" env AGORA_MEMORY=64T $run -n 2 $build/bin/jacobi 256 10
case_row "AGORA_MEMORY=32T, ulimit -d 1000000" bash -c "ulimit -d 1000000; AGORA_MEMORY=32T $run -n 2 $build/bin/jacobi 256 10"
case_row "AGORA_MEMORY=16T: 1 TiB per rank used, RSS bound (bigmem)" env AGORA_MEMORY=16T $run -n 2 $t/test_bigmem
case_row "agorarun -n 2 -mca btl self,vader jacobi" $run -n 2 -mca btl self,vader $build/bin/jacobi 256 10
case_row "agorarun -n 2 --protocol (no value)" $run -n 2 --protocol
case_row "agorarun -n x jacobi" $run -n x $build/bin/jacobi
