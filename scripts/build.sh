#!/usr/bin/env bash
# Configures and builds Agora in build/ (Release, warnings are errors).
#   scripts/build.sh              everything: library, tools, examples,
#                                 benchmarks and tests
#   scripts/build.sh TARGET...    only those targets (and what they need)
set -eu
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DAGORA_WERROR=ON "${launcher[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build build "${targets[@]}"
