#!/usr/bin/env bash
# One command on a fresh Debian machine: install what is missing, build, and
# run the demo: Jacobi on 1, 2 and 4 ranks (with statistics on 2), then an
# unmodified pthreads program built with agoracc, on 2 ranks under sc, hlrc
# and regc (it checks its own result against a serial product).
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
# Only what the demo needs: the library (static, shared, program-mode start),
# the launcher and compiler wrappers, agora-info and the example (the tests
# and benchmarks are built by scripts/run-tests.sh).
scripts/build.sh agora agora_shared agora_program_start agora-info jacobi
for n in 1 2 4; do build/bin/agorarun -n "$n" build/bin/jacobi 512 100; done
build/bin/agorarun -n 2 --stats build/bin/jacobi 512 100
build/bin/agoracc -O2 -o build/pthreads_matmul tests/programs/pthreads_matmul.c
for protocol in sc hlrc regc; do build/bin/agorarun -n 2 --protocol "$protocol" build/pthreads_matmul 384; done
