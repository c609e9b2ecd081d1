#!/usr/bin/env bash
# run_program.sh PREFIX WORK PROGRAM SOURCE PROTOCOL ARGS... -- an unmodified
# program (tests/programs/SOURCE) built twice, exactly as a user builds it:
#   cc -pthread (PARMACS: m4 c.m4.pthreads; C++: c++)      the baseline
#   PREFIX/bin/agoracc (PARMACS: m4 PREFIX/share/agora/c.m4.agora; C++: agoracxx)
# and run with the baseline on this machine and with Agora on 1, 2 and 4
# ranks under PROTOCOL (`hlrc-aggressive`: hlrc with aggressive intervals).
# ARGS holds the literal THREADS where the thread count goes (appended if
# absent). The validation line (the first line ending the run, "...: ok (...)")
# must be the same everywhere. Every run is bounded by agorarun --timeout.
set -eu
prefix=$1 work=$2 name=$3 source=$4 protocol=$5
shift 5
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL $name ($protocol): $*" >&2; exit 1; }
mkdir -p "$work"
src=$here/$source
libs=(-lm)
build() {  # KIND OUTPUT
  local c=$src
  if [[ $source == *.C ]]; then
    c=$work/$name.$1.c
    if [ "$1" = pthreads ]; then m4 "$here/c.m4.pthreads" "$src" > "$c"; else m4 "$prefix/share/agora/c.m4.agora" "$src" > "$c"; fi
  fi
  local cc=cc agoracc=agoracc
  [[ $source == *.cpp ]] && cc=c++ agoracc=agoracxx
  if [ "$1" = pthreads ]; then $cc -O2 -pthread -o "$2" "$c" "${libs[@]}"
  else "$prefix/bin/$agoracc" -O2 -o "$2" "$c" "${libs[@]}"; fi
}
build pthreads "$work/$name.pthreads" || fail "cc -pthread build"
build agora "$work/$name.agora" || fail "agoracc build"
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
  "$work/$name.pthreads" "$@" > "$work/base.$ranks.out" 2>&1 || { cat "$work/base.$ranks.out"; fail "baseline with $ranks threads failed"; }
  want=$(validation "$work/base.$ranks.out")
  [ -n "$want" ] || fail "baseline printed no validation line"
  out=$work/agora.$protocol.$ranks.out
  "$prefix/bin/agorarun" -n "$ranks" "${proto_args[@]}" --timeout 120 -- "$work/$name.agora" "$@" > "$out" 2>&1 \
    || { cat "$out"; fail "Agora on $ranks ranks failed (exit status $?)"; }
  got=$(validation "$out")
  [ "$got" = "$want" ] || { cat "$out"; fail "on $ranks ranks: '$got', baseline '$want'"; }
  echo "$ranks ranks: $got"
done
echo "PASS $name ($protocol)"
