#!/usr/bin/env bash
# Checks that the tracked C and C++ sources follow the repository's format:
# C++ .clang-format, C (*.c and the headers C code includes) .clang-format-c.
# PARMACS sources (*.C) are m4 input, not C, and are left as they are.
#   scripts/check-format.sh          list the files that differ; exit 1 if any
#   scripts/check-format.sh --fix    reformat them in place
set -eu
cd "$(dirname "$0")/.."
fix=0
[ "${1:-}" = --fix ] && fix=1
command -v clang-format >/dev/null || { echo "clang-format is not installed (apt-get install clang-format)" >&2; exit 2; }
# Headers included from C: the public API's C headers and the C tests' and benchmarks'.
is_c() {
  case $1 in
    *.c) return 0 ;;
    include/agora/*.h | tests/mpi/*.h | tests/program/*.h | tests/programs/*.h | bench/programs/*.h | bench/gptr/*.h | \
      bench/flush/*.h | bench/servers/*.h | src/program/program_abi.h) return 0 ;;
  esac
  return 1
}
bad=()
while IFS= read -r f; do
  style=file
  is_c "$f" && style=file:.clang-format-c
  if [ $fix = 1 ]; then
    clang-format -i --style="$style" "$f"
  elif ! clang-format --dry-run -Werror --style="$style" "$f" >/dev/null 2>&1; then
    bad+=("$f")
  fi
done < <(git ls-files '*.c' '*.h' '*.cpp' '*.hpp')
if [ ${#bad[@]} -gt 0 ]; then
  printf 'not formatted (scripts/check-format.sh --fix reformats them):\n'
  printf '  %s\n' "${bad[@]}"
  exit 1
fi
[ $fix = 1 ] && echo "formatted" || echo "format: every C and C++ source follows .clang-format / .clang-format-c"
