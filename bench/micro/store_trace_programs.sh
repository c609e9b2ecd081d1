#!/bin/bash
# Store tracing's cost on whole programs (docs/store-tracing.md): the
# figure of bench_<p>_clang vs bench_<p>_traced, 2 ranks, 5 runs each
# (median and all runs), under PROTOCOL (default sc; under regc the traced
# build also tells the engine exactly what each span stored).
# Run from anywhere: [PROTOCOL=regc] bench/micro/store_trace_programs.sh [build dir]
cd "${1:-$(dirname "$0")/../../build}"
protocol=${PROTOCOL:-sc}
for spec in "jacobi --variant lock" "jacobi --variant reduce" "md -n 2048 -i 5 --variant lock" "md -n 2048 -i 5 --variant reduce" "lockstress -o 5000"; do
  set -- $spec; p=$1; shift
  for v in clang traced; do
    figs=()
    for r in 1 2 3 4 5; do
      f=$(./bin/agorarun -n 2 --protocol "$protocol" --timeout 120 ./bin/bench_${p}_$v "$@" 2>&1 | grep BENCH_RESULT | sed 's/.*"figure":\([0-9.]*\).*"figure_unit":"\([^"]*\)".*"valid":\([a-z]*\).*/\1 \2 \3/')
      figs+=("$f")
    done
    med=$(printf '%s\n' "${figs[@]}" | sort -n | sed -n 3p)
    echo "$protocol $p $* $v median: $med  all: $(printf '%s;' "${figs[@]}")"
  done
done
