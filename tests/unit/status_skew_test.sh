#!/bin/sh
# The compile-time checks that Status stays in step with agora_status_t:
# status.h compiles as it is, and a copy with one value moved fails to
# compile with a message naming both enums.
#   status_skew_test.sh CXX SOURCE_DIR WORK_DIR
set -u
cxx=$1 src=$2 work=$3
mkdir -p "$work" || exit 1
compile() { "$cxx" -std=c++20 -fsyntax-only -I"$src/include" -I"$src/src" -x c++ "$1" 2>&1; }
if ! out=$(compile "$src/src/common/status.h"); then
  echo "status.h does not compile as it is:"; echo "$out"; exit 1
fi
sed 's/NoMemory = -3,/NoMemory = -30,/' "$src/src/common/status.h" > "$work/status_skew.h"
grep -q 'NoMemory = -30,' "$work/status_skew.h" || { echo "could not skew status.h"; exit 1; }
if out=$(compile "$work/status_skew.h"); then
  echo "a skewed Status compiled: the static_asserts check nothing"; exit 1
fi
echo "$out" | grep -q 'AGORA_ERR_NO_MEMORY and Status::NoMemory differ' ||
  { echo "unexpected compiler output:"; echo "$out"; exit 1; }
echo "ok: a skewed Status is refused at compile time"
