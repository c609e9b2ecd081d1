#!/usr/bin/env bash
# All tests: unit and simulator tests, then the multi-rank tests on real
# Open MPI ranks (one at a time: timings on 2 cores are tight enough); then
# the sanitizer job (scripts/check-sanitizers.sh: simulator and unit tests,
# Debug with AGORA_CHECKS, under ASan and UBSan; AGORA_SANITIZERS=0 skips it).
# Arguments go to ctest (e.g. -L sim; docs/testing.md).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh
(cd build && ctest --output-on-failure --timeout 600 "$@")
if [ "${AGORA_SANITIZERS:-1}" != 0 ]; then
  scripts/check-sanitizers.sh
fi
