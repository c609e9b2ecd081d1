#!/usr/bin/env bash
# Installs what Agora needs on Debian/Ubuntu, only if it is missing.
set -eu
need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
command -v mpirun >/dev/null || need+=(openmpi-bin)
# Open MPI's headers, under this machine's multiarch directory (x86_64-linux-gnu, aarch64-linux-gnu)
compgen -G "/usr/include/*-linux-gnu/openmpi/include/mpi.h" >/dev/null ||
  compgen -G "/usr/lib/*-linux-gnu/openmpi/include/mpi.h" >/dev/null || need+=(libopenmpi-dev)
[ -d /usr/include/gtest ] || need+=(libgtest-dev)
command -v python3 >/dev/null || need+=(python3)
# the install test (pkg-config agora) and the PARMACS macro file (m4)
command -v pkg-config >/dev/null || need+=(pkg-config)
command -v m4 >/dev/null || need+=(m4)
# store tracing (docs/store-tracing.md): clang -fsanitize-coverage=trace-stores
command -v clang >/dev/null && command -v clang++ >/dev/null || need+=(clang)
# the format check (scripts/check-format.sh)
command -v clang-format >/dev/null || need+=(clang-format)
# the full tier's static analysis (scripts/check-tidy.sh)
command -v clang-tidy >/dev/null || need+=(clang-tidy)
python3 -c 'import matplotlib' 2>/dev/null || need+=(python3-matplotlib)
if [ ${#need[@]} -gt 0 ]; then
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  echo "installing: ${need[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi
