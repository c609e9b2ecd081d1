#!/usr/bin/env bash
# bench/observe_overhead.sh BUILD [REPS] [BASELINE_BUILD]: what AGORA_TRACE and
# AGORA_PROFILE cost (docs/observability.md). bench_jacobi and bench_nbody
# on 2 ranks under hlrc, REPS (default 7) interleaved rounds of: hooks off
# (BUILD, nothing set), trace on, profile on, and, if given, BASELINE_BUILD
# (a build without the hooks). Prints each configuration's median ms/iter and
# its ratio to "off".
set -eu
build=$(cd "$1" && pwd) reps=${2:-7} baseline=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
uptime
configs="off trace profile"
[ -n "$baseline" ] && configs="$configs nohooks"
run() {  # CONFIG PROGRAM ARGS...: prints the ms/iter figure
  local config=$1 prog=$2
  shift 2
  local bin=$build/bin env=()
  case $config in
    trace) env=(AGORA_TRACE="$tmp/trace") ; mkdir -p "$tmp/trace" ;;
    profile) env=(AGORA_PROFILE=1 AGORA_TRACE=) ;;
    nohooks) bin=$baseline/bin ;;
  esac
  (cd "$tmp" && env "${env[@]}" "$bin/agorarun" -n 2 --protocol hlrc --timeout 300 "$bin/$prog" "$@" 2>/dev/null) |
    sed -n 's/^BENCH_RESULT .*"figure":\([0-9.e+-]*\),.*/\1/p'
}
declare -A results
for ((i = 0; i < reps; i++)); do
  for config in $configs; do
    results[jacobi,$config]+=" $(run $config bench_jacobi -n 2048 -i 30)"
    results[nbody,$config]+=" $(run $config bench_nbody -n 16384 -i 10)"
  done
done
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
printf '%-8s %-8s %12s %8s   %s\n' program config "median ms" "ratio" "runs (ms/iter)"
for prog in jacobi nbody; do
  off=$(median "${results[$prog,off]}")
  for config in $configs; do
    m=$(median "${results[$prog,$config]}")
    printf '%-8s %-8s %12.3f %8.3f  %s\n' $prog $config "$m" "$(echo "$m / $off" | bc -l)" "${results[$prog,$config]}"
  done
done
uptime
