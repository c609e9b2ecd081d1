#!/usr/bin/env bash
# The suite's core on MPICH (docs/mpi.md): builds Agora against MPICH in
# build-mpich (-DAGORA_MPI=mpich, beside the Open MPI build in build/) and
# runs there the tests that exercise what differs between MPIs: the litmus
# and release-consistency tests and one-sided reads under every protocol,
# locks, barriers, the hang watch and deadlock reports, program mode, a
# benchmark, the launcher (agorarun picks Hydra's mpiexec; the other MPI's
# launcher is refused or named by agora_init) and the installed agoracc.
# Part of the full tier (scripts/run-tests.sh --full): it rebuilds most of
# Agora for a second MPI, more than the fast tier's budget allows.
#
#   scripts/run-mpich-tests.sh [CTEST_ARGS...]   (e.g. -R '^litmus_')
set -eu
cd "$(dirname "$0")/.."
if ! command -v mpicc.mpich >/dev/null || ! command -v mpiexec.hydra >/dev/null; then
  echo "run-mpich-tests: MPICH is not installed (mpicc.mpich, mpiexec.hydra): apt-get install mpich libmpich-dev" >&2
  exit 2
fi
# The core: each family under every protocol it runs under in build/ (the
# litmus_* tests check sequential consistency and run under sc; lrc_* are
# the litmus shapes under every protocol).
core='^(litmus_|lrc_(mp|sb|counter|false)_[0-9]_|sync_[0-9]|one_sided_|threadsync_(barrier|locks)_|deadlock_abba_'
core+='|hang_|program_shared_[0-9]|program_forkjoin_[0-9]|bench_[a-z-]+_jacobi_|launcher_(choice|of_other_mpi|of_other_mpi_program)$'
# MPI_Abort's paths: a rank's exit before agora_finalize, a fault, a bad option.
core+='|dead_rank_exit$|segv_outside_global$|bad_protocol$'
core+='|install_and_build_against_prefix$|unit_tests$)'
# What those tests run (not the simulator, the other programs, benchmarks).
targets=(agora agora_shared agora_program_start agora-info unit_tests test_misbehave test_litmus test_sync
  test_lrc test_one_sided test_threadsync program_shared program_forkjoin bench_jacobi)
t0=$(date +%s)
AGORA_MPI=mpich AGORA_BUILD_DIR=build-mpich scripts/build.sh "${targets[@]}"
t1=$(date +%s)
status=0
(cd build-mpich && ctest --output-on-failure --timeout 600 -j"${AGORA_TEST_JOBS:-2}" -R "$core" "$@") || status=$?
t2=$(date +%s)
echo "run-mpich-tests: build $((t1 - t0)) s, ctest $((t2 - t1)) s ($(build-mpich/bin/agora-info | grep 'MPI library'))"
exit $status
