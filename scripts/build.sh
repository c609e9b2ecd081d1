#!/usr/bin/env bash
# Configures and builds Agora in build/ (Release, warnings are errors).
#   scripts/build.sh              everything: library, tools, examples,
#                                 benchmarks and tests
#   scripts/build.sh TARGET...    only those targets (and what they need)
# AGORA_MPI=mpich|openmpi chooses the MPI (docs/mpi.md) and AGORA_BUILD_DIR
# the directory (default build): AGORA_MPI=mpich AGORA_BUILD_DIR=build-mpich.
set -eu
cd "$(dirname "$0")/.."
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
build_dir=${AGORA_BUILD_DIR:-build}
mpi=()
if [ -n "${AGORA_MPI:-}" ]; then mpi=(-DAGORA_MPI="$AGORA_MPI"); fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DAGORA_WERROR=ON "${launcher[@]}" "${mpi[@]}" >/dev/null
targets=()
for t in "$@"; do targets+=(--target "$t"); done
cmake --build "$build_dir" "${targets[@]}"
