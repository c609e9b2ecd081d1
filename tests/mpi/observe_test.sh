#!/usr/bin/env bash
# observe_test.sh MODE BUILD PROTOCOL [PROGRAM]: AGORA_TRACE / AGORA_PROFILE
# and agora-report on 2 real ranks, each run time-bounded (run_bounded.sh).
#   trace             PROGRAM under --trace --profile: observe_check.py trace, profile
#   bound             PROGRAM with a 20-event buffer: drops counted and said, files valid
#   false_sharing     bench_false_sharing: the report names every page of its array
#                     as falsely shared, with allocation and offset; a heat map is drawn
#   no_false_sharing  bench_jacobi --variant lock: no page named as falsely shared
#                     (its lock-protected accumulator is true sharing)
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/run_bounded.sh"
mode=$1 build=$2 protocol=$3 program=${4:-}
bin=$build/bin
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
check() { python3 "$here/observe_check.py" "$@" || exit 1; }
run_ok() {  # LIMIT COMMAND...
  run_bounded "$@"
  [ $status -eq 0 ] || { echo "FAIL: the command failed"; exit 1; }
}
report_json() {  # FILE EXPR: prints the value of a Python expression over the report's JSON as `r`
  python3 -c "import json,sys; r=json.load(open(sys.argv[1])); print($2)" "$1"
}

case $mode in
  trace)
    run_ok 60 "$bin/agorarun" -n 2 --timeout 60 --protocol "$protocol" --trace "$tmp/t" --profile "$program"
    check trace "$tmp/t" 2
    check profile "$tmp/t" 2
    # The report reads them, and merges the ranks into one trace.
    run_ok 30 "$bin/agora-report" --trace "$tmp/t" --profile "$tmp/t" --merge "$tmp/merged.json"
    python3 -c "import json; json.load(open('$tmp/merged.json'))" || { echo "FAIL: merged trace"; exit 1; } ;;
  bound)
    run_bounded 60 "$bin/agorarun" -n 2 --timeout 60 --protocol "$protocol" --trace "$tmp/t" --trace-events 20 "$program"
    [ $status -eq 0 ] || { echo "FAIL: the command failed"; exit 1; }
    for r in 0 1; do
      echo "$out" | grep -Eq "agora.rank $r.: AGORA_TRACE: the trace buffer was full: [0-9]+ of [0-9]+ events dropped" ||
        { echo "FAIL: rank $r did not say that events were dropped"; exit 1; }
    done
    check bound "$tmp/t" 2 20 ;;
  false_sharing)
    pages=4
    run_ok 90 "$bin/agorarun" -n 2 --timeout 90 --protocol "$protocol" --profile --stats-json "$tmp/stats.json" \
      "$bin/bench_false_sharing" -g $pages -i 5
    plot=()
    if python3 -c "import matplotlib" 2>/dev/null || /usr/bin/python3 -c "import matplotlib" 2>/dev/null; then
      plot=(--plot "$tmp/heat.png")
    fi
    run_ok 30 "$bin/agora-report" --stats "$tmp/stats.json" --profile . --json "$tmp/report.json" "${plot[@]}"
    # Every page of the array (the program's first agora_alloc, from the
    # start of global memory) is named, with the allocation and its offset.
    for ((p = 0; p < pages; p++)); do
      echo "$out" | grep -Eq "FALSE SHARING page $p \(0x[0-9a-f]+\) in agora_alloc #1 \(16.0 KiB, block\) \+0x$(printf %x $((p * 4096))): written by ranks 0,1" ||
        { echo "FAIL: page $p not named as falsely shared"; exit 1; }
    done
    named=$(report_json "$tmp/report.json" "len(r['false_sharing'])")
    [ "$named" = $pages ] || { echo "FAIL: $named pages named, expected $pages"; exit 1; }
    if [ ${#plot[@]} -gt 0 ]; then [ -s "$tmp/heat.png" ] || { echo "FAIL: no heat map"; exit 1; }; fi ;;
  no_false_sharing)
    run_ok 90 "$bin/agorarun" -n 2 --timeout 90 --protocol "$protocol" --profile "$bin/bench_jacobi" -n 512 -i 10 --variant lock
    run_ok 30 "$bin/agora-report" --profile . --json "$tmp/report.json"
    if echo "$out" | grep -q "FALSE SHARING"; then echo "FAIL: a page named as falsely shared"; exit 1; fi
    [ "$(report_json "$tmp/report.json" "len(r['false_sharing'])")" = 0 ] || { echo "FAIL: false sharing found"; exit 1; }
    # The accumulator every rank adds to under the lock: several writers, the same word.
    [ "$(report_json "$tmp/report.json" "len(r['true_sharing'])")" = 1 ] || { echo "FAIL: the accumulator is not true sharing"; exit 1; } ;;
  *) echo "observe_test.sh: unknown mode $mode"; exit 2 ;;
esac
echo PASS
