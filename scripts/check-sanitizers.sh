#!/usr/bin/env bash
# The sanitizer job: the simulator and unit tests built in build-asan/ as a
# Debug build with the internal invariant checks on (AGORA_CHECKS) under
# AddressSanitizer and UndefinedBehaviorSanitizer, any report fatal. Only
# sim_tests and unit_tests are built: they drive the protocol engines and
# sync services without MPI (ASan inside Open MPI is noisy).
#
#   scripts/check-sanitizers.sh [build|run]   (no argument: both)
#
# `run` splits sim_tests into AGORA_SANITIZER_SHARDS gtest shards (default
# 8) and runs them, with unit_tests, AGORA_TEST_JOBS (default 2) at a time;
# a failing shard's output is printed whole. AGORA_SIM_SEEDS (default here
# 500; the Release suite runs 2000-3000 per test, scripts/run-tests.sh's fast
# tier 60) bounds the simulator's seeds per randomized test, since
# everything runs several times slower under the sanitizers; runs with a
# planted mutation keep their own seed counts (tests/sim/sim_seeds.h).
# AGORA_SANITIZER_FILTER, a gtest filter for sim_tests (default: every
# test), lets the fast tier leave the planted-mutation checks to the
# Release simulator, which runs them all in ctest (they measure the
# checkers, not the engines' memory safety, and take 9 of the job's 13
# minutes under the sanitizers).
set -eu
cd "$(dirname "$0")/.."
what=${1:-all}
if [ "$what" = build ] || [ "$what" = all ]; then
  launcher=()
  if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
  flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
  cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DAGORA_CHECKS=ON -DAGORA_WERROR=ON "${launcher[@]}" \
    -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
    -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build build-asan -j"${AGORA_BUILD_JOBS:-2}" --target sim_tests unit_tests
fi
if [ "$what" = run ] || [ "$what" = all ]; then
  export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:strict_string_checks=1}"
  export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
  export AGORA_SIM_SEEDS="${AGORA_SIM_SEEDS:-500}"
  shards=${AGORA_SANITIZER_SHARDS:-8}
  logs=$(mktemp -d)
  jobs=("unit unit_tests")
  for ((i = 0; i < shards; i++)); do jobs+=("sim$i sim_tests $i"); done
  run_job() {  # NAME BINARY [SHARD]
    local name=$1 bin=$2 t0=$SECONDS status=0
    if [ $# -gt 2 ]; then
      GTEST_FILTER=${AGORA_SANITIZER_FILTER:-*} GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$3 \
        "build-asan/bin/$bin" > "$logs/$name.log" 2>&1 || status=$?
    else
      "build-asan/bin/$bin" > "$logs/$name.log" 2>&1 || status=$?
    fi
    echo "$status" > "$logs/$name.status"
    echo "  $name: $(grep -E '^\[  (PASSED|FAILED)  \]' "$logs/$name.log" | tr '\n' ' ')($((SECONDS - t0)) s, status $status)"
  }
  export -f run_job
  export logs shards
  echo "sanitizer job: unit_tests and sim_tests (filter ${AGORA_SANITIZER_FILTER:-*}) in $shards shards," \
    "${AGORA_TEST_JOBS:-2} at a time, AGORA_SIM_SEEDS=$AGORA_SIM_SEEDS"
  printf '%s\n' "${jobs[@]}" | xargs -P"${AGORA_TEST_JOBS:-2}" -I{} bash -c 'run_job {}'
  failed=0
  for f in "$logs"/*.status; do
    if [ "$(cat "$f")" != 0 ]; then
      failed=1
      echo "==== ${f%.status}.log ===="
      cat "${f%.status}.log"
    fi
  done
  rm -rf "$logs"
  [ $failed = 0 ] || { echo "the sanitizer job failed" >&2; exit 1; }
fi
