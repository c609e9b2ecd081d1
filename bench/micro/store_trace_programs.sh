#!/bin/bash
# Store tracing's cost on whole programs (docs/store-tracing.md): the
# figure of bench_<p>_clang vs bench_<p>_traced, sc, 2 ranks, 5 runs each
# (median and all runs). Run from anywhere: bench/micro/store_trace_programs.sh [build dir]
cd "${1:-$(dirname "$0")/../../build}"
for spec in "jacobi --variant lock" "jacobi --variant reduce" "md -n 2048 -i 5 --variant lock" "md -n 2048 -i 5 --variant reduce"; do
  set -- $spec; p=$1; shift
  for v in clang traced; do
    figs=()
    for r in 1 2 3 4 5; do
      f=$(./bin/agorarun -n 2 --protocol sc --timeout 120 ./bin/bench_${p}_$v "$@" 2>&1 | grep BENCH_RESULT | sed 's/.*"figure":\([0-9.]*\).*"figure_unit":"\([^"]*\)".*"valid":\([a-z]*\).*/\1 \2 \3/')
      figs+=("$f")
    done
    med=$(printf '%s\n' "${figs[@]}" | sort -n | sed -n 3p)
    echo "$p $* $v median: $med  all: $(printf '%s;' "${figs[@]}")"
  done
done
