#!/usr/bin/env bash
# The test command (what .ci/run runs; docs/testing.md).
#
#   scripts/run-tests.sh            the fast tier: every test not labelled
#                                   `full` (ctest -LE full -j2), the sanitizer
#                                   job with fewer simulator seeds; at most
#                                   25 minutes on a clean 2-core machine
#   scripts/run-tests.sh --full     everything: every test, every protocol,
#                                   the sanitizer job with 500 seeds, clang-tidy
#                                   (scripts/check-tidy.sh), the suite's core
#                                   on MPICH (scripts/run-mpich-tests.sh;
#                                   AGORA_MPICH=0 skips it) (before a release)
#   scripts/run-tests.sh [--full] -- CTEST_ARGS...
#                                   passes CTEST_ARGS to ctest (e.g. -L sim)
#
# Phases: dependencies, the format check (scripts/check-format.sh), Release
# build (warnings are errors), clang-tidy (full tier), ctest, the
# sanitizer build, the sanitizer job (scripts/check-sanitizers.sh;
# AGORA_SANITIZERS=0 skips both). Each phase has a time budget; the script
# prints every phase's wall time at the end and fails, naming the phase,
# when one took longer than its budget, so that growth is seen the day it
# happens. AGORA_TIER_BUDGETS=0 reports without failing (a loaded machine).
set -eu
cd "$(dirname "$0")/.."

tier=fast
if [ "${1:-}" = --full ]; then tier=full; shift; fi
if [ "${1:-}" = -- ]; then shift; fi

# Budgets in seconds, per phase and in all; measured figures: docs/testing.md.
if [ $tier = fast ]; then
  declare -A budget=([deps]=240 [format]=60 [build]=600 [ctest]=660 [asan-build]=360 [asan-run]=300)
  total_budget=1500
  ctest_select=(-LE full)
  # The Release simulator: 400 seeds per randomized test instead of its
  # 2000-3000 (planted mutations keep their own counts).
  export AGORA_SIM_SEEDS=${AGORA_SIM_SEEDS:-400}
  sanitizer_seeds=${AGORA_SANITIZER_SEEDS:-60}
  # The planted-mutation checks run in the ctest phase (Release simulator).
  sanitizer_filter='-*Catch*:*Caught*:*Mutation*:*Fails*'
else
  declare -A budget=([deps]=240 [format]=60 [build]=600 [tidy]=600 [ctest]=2400 [mpich]=900 [asan-build]=360
    [asan-run]=2400)
  total_budget=6900
  ctest_select=()
  sanitizer_seeds=${AGORA_SANITIZER_SEEDS:-500}
  sanitizer_filter='*'
fi

phases=()
declare -A took=()
start_all=$(date +%s)
phase() {  # NAME COMMAND...: runs COMMAND, timing it
  local name=$1 t0 status=0
  shift
  echo "==== $name ($tier tier) ===="
  t0=$(date +%s)
  "$@" || status=$?
  took[$name]=$(($(date +%s) - t0))
  phases+=("$name")
  if [ $status -ne 0 ]; then
    report
    echo "FAILED: phase '$name' exited with status $status" >&2
    exit $status
  fi
}
report() {
  echo "==== phase times ($tier tier) ===="
  local name
  for name in "${phases[@]}"; do
    printf '  %-11s %5d s  (budget %d s)\n' "$name" "${took[$name]}" "${budget[$name]}"
  done
  printf '  %-11s %5d s  (budget %d s)\n' total $(($(date +%s) - start_all)) "$total_budget"
}

phase deps scripts/install-deps.sh
phase format scripts/check-format.sh
phase build scripts/build.sh
if [ $tier = full ]; then phase tidy scripts/check-tidy.sh; fi
phase ctest bash -c 'cd build && exec ctest --output-on-failure --timeout 600 -j"${AGORA_TEST_JOBS:-2}" "$@"' \
  ctest "${ctest_select[@]}" "$@"
if [ $tier = full ] && [ "${AGORA_MPICH:-1}" != 0 ]; then phase mpich scripts/run-mpich-tests.sh; fi
if [ "${AGORA_SANITIZERS:-1}" != 0 ]; then
  phase asan-build scripts/check-sanitizers.sh build
  # Only this phase sees them: the runtime warns about AGORA_* variables it
  # does not know, and tests check that it does.
  phase asan-run env AGORA_SIM_SEEDS="$sanitizer_seeds" AGORA_SANITIZER_FILTER="$sanitizer_filter" \
    scripts/check-sanitizers.sh run
fi
report

over=()
for name in "${phases[@]}"; do
  [ "${took[$name]}" -le "${budget[$name]}" ] || over+=("$name took ${took[$name]} s, budget ${budget[$name]} s")
done
total=$(($(date +%s) - start_all))
[ $total -le $total_budget ] || over+=("the $tier tier took $total s in all, budget $total_budget s")
if [ ${#over[@]} -gt 0 ]; then
  printf 'OVER BUDGET: %s\n' "${over[@]}" >&2
  if [ "${AGORA_TIER_BUDGETS:-1}" != 0 ]; then
    echo "(the budgets are in scripts/run-tests.sh; move slow tests to the full tier, docs/testing.md)" >&2
    exit 1
  fi
fi
echo "all phases passed ($tier tier, $total s)"
