#!/bin/sh
# Every public header (include/agora/*.h as C11 and as C++17, *.hpp as C++20)
# compiles alone with -Wall -Wextra -Werror -pedantic; a use of a deprecated
# name draws a warning naming its replacement (docs/api-conventions.md), and
# none with AGORA_NO_DEPRECATION_WARNINGS.
#   public_headers_test.sh CC CXX INCLUDE_DIR WORK_DIR
set -u
cc=$1 cxx=$2 inc=$3 work=$4
mkdir -p "$work" || exit 1
flags="-Wall -Wextra -Werror -pedantic -fno-pie -I$inc"
failed=0 count=0
try() {  # try LABEL COMPILER ARGS... : compiles $work/tu.*, reports a failure
  label=$1; shift
  count=$((count + 1))
  if ! out=$("$@" 2>&1); then
    echo "FAIL $label:"; echo "$out"; failed=1
  fi
}
for h in "$inc"/agora/*.h; do
  name=agora/$(basename "$h")
  printf '#include <%s>\nint main(void) { return 0; }\n' "$name" > "$work/tu.c"
  cp "$work/tu.c" "$work/tu.cpp"
  try "$name as C" "$cc" -std=c11 $flags -c "$work/tu.c" -o "$work/tu.o"
  try "$name as C++" "$cxx" -std=c++17 $flags -c "$work/tu.cpp" -o "$work/tu.o"
done
for h in "$inc"/agora/*.hpp; do
  name=agora/$(basename "$h")
  printf '#include <%s>\nint main() { return 0; }\n' "$name" > "$work/tu.cpp"
  try "$name as C++20" "$cxx" -std=c++20 $flags -c "$work/tu.cpp" -o "$work/tu.o"
done

# Deprecated names: a warning (an error under -Werror) that says what to use.
deprecated() {  # deprecated LANG EXT REPLACEMENT CODE
  lang=$1 ext=$2 replacement=$3 code=$4
  printf '#include <agora/agora.h>\n#include <agora/gptr.h>\nint f(void);\nint f(void) { %s }\n' "$code" > "$work/old.$ext"
  compiler=$cc std=-std=c11
  [ "$lang" = c++ ] && compiler=$cxx std=-std=c++17
  count=$((count + 1))
  if out=$("$compiler" $std $flags -c "$work/old.$ext" -o "$work/old.o" 2>&1); then
    echo "FAIL: '$code' ($lang) compiled without a deprecation warning"; failed=1
  elif ! echo "$out" | grep -q "deprecated.*use $replacement"; then
    echo "FAIL: '$code' ($lang) did not name $replacement:"; echo "$out"; failed=1
  fi
  count=$((count + 1))
  if ! out=$("$compiler" $std $flags -DAGORA_NO_DEPRECATION_WARNINGS -c "$work/old.$ext" -o "$work/old.o" 2>&1); then
    echo "FAIL: '$code' ($lang) with AGORA_NO_DEPRECATION_WARNINGS:"; echo "$out"; failed=1
  fi
}
deprecated c c agora_mem_alloc 'return agora_alloc(8) != 0;'
deprecated c c agora_mem_alloc_placed 'return agora_alloc_placed(8, AGORA_PLACE_BLOCK, 0) != 0;'
deprecated c c agora_mem_malloc 'return agora_malloc(8) != 0;'
deprecated c c agora_mem_malloc_placed 'return agora_malloc_placed(8, AGORA_PLACE_BLOCK, 0) != 0;'
deprecated c c agora_mem_free 'return agora_free(0);'
deprecated c c agora_lock_init 'return agora_lock_create() != 0;'
deprecated c c agora_lock_array_init 'return agora_lock_array_create(2) != 0;'
deprecated c c agora_gptr_mem_alloc 'return agora_gptr_alloc(8) != AGORA_GPTR_NULL;'
deprecated c c agora_gptr_signal_t 'agora_signal_t *s = 0; return s != 0;'
deprecated c c agora_gptr_signal_init 'return agora_signal_init(0);'
deprecated c c agora_gptr_signal_wait 'return agora_signal_wait(0);'
deprecated c c agora_gptr_signal_pending 'return (int)agora_signal_pending(0);'
deprecated c++ cpp agora_mem_alloc 'return agora_alloc(8) != 0;'
deprecated c++ cpp "agora_stats_get with an agora_stats_scope_t" 'agora_stats_t s; int scope = 0; return agora_stats_get(&s, scope);'

# The new calls draw nothing, in either language.
printf '#include <agora/agora.h>\n#include <agora/gptr.h>\nint f(void);\nint f(void) {\n  void *p; agora_lock_t l; agora_stats_t s; agora_gptr_t g; agora_gptr_signal_t sig; int64_t n;\n  return agora_mem_alloc(8, &p) + agora_lock_init(&l) + agora_stats_get(&s, AGORA_STATS_RANK) +\n         agora_gptr_mem_alloc(8, &g) + agora_gptr_signal_init(&sig) + agora_gptr_signal_pending(&sig, &n);\n}\n' > "$work/new.c"
cp "$work/new.c" "$work/new.cpp"
try "the new calls as C" "$cc" -std=c11 $flags -c "$work/new.c" -o "$work/new.o"
try "the new calls as C++" "$cxx" -std=c++17 $flags -c "$work/new.cpp" -o "$work/new.o"

[ $failed -eq 0 ] && echo "ok: $count compilations of the public headers as expected"
exit $failed
