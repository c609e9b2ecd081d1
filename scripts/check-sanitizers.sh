#!/usr/bin/env bash
# The sanitizer job: the simulator and unit tests built in build-asan/ as a
# Debug build with the internal invariant checks on (AGORA_CHECKS) under
# AddressSanitizer and UndefinedBehaviorSanitizer, any report fatal. Only
# sim_tests and unit_tests are built: they drive the protocol engines and
# sync services without MPI (ASan inside Open MPI is noisy).
#
# AGORA_SIM_SEEDS (default here 500; the Release suite runs 2000-3000 per
# test) bounds the simulator's seeds per randomized test, since everything
# runs several times slower under the sanitizers.
set -eu
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
flags="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=Debug -DAGORA_CHECKS=ON "${launcher[@]}" \
  -DCMAKE_C_FLAGS="$flags" -DCMAKE_CXX_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build build-asan -j"${AGORA_BUILD_JOBS:-2}" --target sim_tests unit_tests
export ASAN_OPTIONS="${ASAN_OPTIONS:-abort_on_error=0:detect_leaks=1:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
export AGORA_SIM_SEEDS="${AGORA_SIM_SEEDS:-500}"
build-asan/bin/unit_tests
build-asan/bin/sim_tests
