#!/usr/bin/env bash
# Cross-checks the aarch64 port from an x86-64 machine (docs/internals.md, "Platforms"):
# compiles every library source for aarch64 (with this machine's MPI
# headers: compile only, no link), then builds the platform test
# (tests/unit/platform_arch_test.cpp: fault read/write bit, call_on_stack)
# statically and runs it under qemu-user.
#   needs: g++-aarch64-linux-gnu qemu-user (apt-get install); exit 77 without them.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cxx=${AARCH64_CXX:-aarch64-linux-gnu-g++}
if ! command -v "$cxx" >/dev/null; then
  echo "check-aarch64: $cxx not found (apt-get install g++-aarch64-linux-gnu)" >&2; exit 77
fi
out=$(mktemp -d); trap 'rm -rf "$out"' EXIT
mpi_flags=$(mpicc -showme:compile 2>/dev/null || true)
flags=(-std=c++20 -O2 -Wall -Wextra -Werror -I"$here/src" -I"$here/include" -DOMPI_SKIP_MPICXX=1
       -DAGORA_PROJECT_VERSION='"0"' -DAGORA_PROJECT_VERSION_MAJOR=0 -DAGORA_PROJECT_VERSION_MINOR=0
       -DAGORA_PROJECT_VERSION_PATCH=0)
failed=0 count=0
cd "$here"
for f in $(find src -name '*.cpp' ! -name 'call_on_stack_x86_64.cpp' ! -name 'version.cpp' | sort); do
  count=$((count + 1))
  # shellcheck disable=SC2086
  "$cxx" "${flags[@]}" $mpi_flags -c "$f" -o "$out/obj.o" || { echo "check-aarch64: $f does not compile" >&2; failed=$((failed + 1)); }
done
echo "check-aarch64: $((count - failed)) of $count library sources compile for aarch64"
# The x86-64 stack switch must refuse to build here, naming the fix.
if "$cxx" "${flags[@]}" -c src/platform/call_on_stack_x86_64.cpp -o "$out/x.o" 2>/dev/null; then
  echo "check-aarch64: call_on_stack_x86_64.cpp compiled for aarch64 (its #error guard is gone)" >&2; failed=$((failed + 1))
fi
"$cxx" "${flags[@]}" -static tests/unit/platform_arch_test.cpp src/platform/fault_access_linux.cpp \
  src/platform/call_on_stack_aarch64.cpp -o "$out/platform_arch_test" || exit 1
if command -v qemu-aarch64 >/dev/null; then
  qemu-aarch64 "$out/platform_arch_test" || failed=$((failed + 1))
else
  echo "check-aarch64: qemu-aarch64 not found (apt-get install qemu-user): the platform test was built, not run"
fi
[ $failed = 0 ]
