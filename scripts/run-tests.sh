#!/usr/bin/env bash
# All tests: unit and simulator tests, then the multi-rank tests on real
# Open MPI ranks (one at a time: timings on 2 cores are tight enough).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
cd build
ctest --output-on-failure --timeout 600 "$@"
