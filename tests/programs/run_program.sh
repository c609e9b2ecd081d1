#!/usr/bin/env bash
# An unmodified program (tests/programs/SOURCE), built exactly as a user
# builds it and run against its pthreads baseline:
#
#   run_program.sh build PREFIX BUILD NAME SOURCE
#     builds BUILD/NAME.pthreads with cc -pthread (PARMACS: m4 c.m4.pthreads;
#     C++: c++) and BUILD/NAME.agora with PREFIX/bin/agoracc (PARMACS: m4
#     PREFIX/share/agora/c.m4.agora; C++: agoracxx); once per program, a
#     ctest fixture the runs share
#   run_program.sh run PREFIX BUILD WORK NAME PROTOCOL ARGS...
#     runs the baseline on this machine and Agora on 1, 2 and 4 ranks under
#     PROTOCOL (`hlrc-aggressive`: hlrc with aggressive intervals)
#
# ARGS holds the literal THREADS where the thread count goes (appended if
# absent). The validation line (the first line ending the run, "...: ok (...)")
# must be the same everywhere. Every run is bounded by agorarun --timeout.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
mode=$1 prefix=$2 build=$3
shift 3
if [ "$mode" = build ]; then
  name=$1 source=$2
  fail() { echo "FAIL $name (build): $*" >&2; exit 1; }
  mkdir -p "$build"
  src=$here/$source
  compile() {  # KIND OUTPUT
    local c=$src
    if [[ $source == *.C ]]; then
      c=$build/$name.$1.c
      if [ "$1" = pthreads ]; then m4 "$here/c.m4.pthreads" "$src" > "$c"; else m4 "$prefix/share/agora/c.m4.agora" "$src" > "$c"; fi
    fi
    local cc=cc agoracc=agoracc
    [[ $source == *.cpp ]] && cc=c++ agoracc=agoracxx
    if [ "$1" = pthreads ]; then $cc -O2 -pthread -o "$2" "$c" -lm
    else "$prefix/bin/$agoracc" -O2 -o "$2" "$c" -lm; fi
  }
  compile pthreads "$build/$name.pthreads" || fail "cc -pthread build"
  compile agora "$build/$name.agora" || fail "agoracc build"
  echo "BUILT $name"
  exit 0
fi
[ "$mode" = run ] || { echo "usage: run_program.sh build|run ..." >&2; exit 2; }
work=$1 name=$2 protocol=$3
shift 3
fail() { echo "FAIL $name ($protocol): $*" >&2; exit 1; }
mkdir -p "$work"
[ -x "$build/$name.agora" ] || fail "$build/$name.agora is missing (the programs_build_$name fixture builds it)"
args_for() {  # THREADS -> the program's arguments
  local out=() seen=0
  for a in "${ARGS[@]}"; do if [ "$a" = THREADS ]; then out+=("$1"); seen=1; else out+=("$a"); fi; done
  [ $seen = 1 ] || out+=("$1")
  echo "${out[@]}"
}
ARGS=("$@")
validation() { grep -m1 -E ': (ok|WRONG) \(' "$1" || true; }
proto_args=(--protocol "$protocol")
[ "$protocol" = hlrc-aggressive ] && proto_args=(--protocol hlrc --intervals aggressive)
for ranks in 1 2 4; do
  # shellcheck disable=SC2046
  set -- $(args_for "$ranks")
  "$build/$name.pthreads" "$@" > "$work/base.$ranks.out" 2>&1 || { cat "$work/base.$ranks.out"; fail "baseline with $ranks threads failed"; }
  want=$(validation "$work/base.$ranks.out")
  [ -n "$want" ] || fail "baseline printed no validation line"
  out=$work/agora.$protocol.$ranks.out
  "$prefix/bin/agorarun" -n "$ranks" "${proto_args[@]}" --timeout 120 -- "$build/$name.agora" "$@" > "$out" 2>&1 \
    || { cat "$out"; fail "Agora on $ranks ranks failed (exit status $?)"; }
  got=$(validation "$out")
  [ "$got" = "$want" ] || { cat "$out"; fail "on $ranks ranks: '$got', baseline '$want'"; }
  echo "$ranks ranks: $got"
done
echo "PASS $name ($protocol)"
