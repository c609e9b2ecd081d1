#!/usr/bin/env bash
# options_check.sh BIN PROGRAM OPTIONS BAD_OPTION -- GOOD_ARGS...
# The command line of one benchmark program (bench/programs/shm_options.h),
# in both builds:
#   --help exits 0 and lists every long option in OPTIONS (comma list) and
#   the common ones; BAD_OPTION with a malformed value exits 2 naming the
#   option; bench_PROGRAM_pthreads -p 2 GOOD_ARGS validates. Under Agora
#   --help runs on 1 rank and the bad value on 2 ranks (both must end, not
#   hang). The good Agora invocations are the bench_<protocol>_* tests.
set -u
bin=$1 prog=$2 options=$3 bad=$4
shift 5
fail() { echo "FAIL: $*"; exit 1; }

check_help() { # NAME COMMAND...
  local name=$1 out status
  shift
  out=$(timeout -k 5 60 "$@" --help 2>&1)
  status=$?
  [ $status -eq 0 ] || { echo "$out"; fail "$name --help exited $status"; }
  for opt in ${options//,/ } threads threads-per-rank help; do
    echo "$out" | grep -Eq -- "--$opt( |$)" || { echo "$out"; fail "$name --help does not list --$opt"; }
  done
  echo "ok: $name --help"
}

check_bad() { # NAME COMMAND...
  local name=$1 out status
  shift
  out=$(timeout -k 5 60 "$@" "--$bad" 12abc 2>&1)
  status=$?
  [ $status -eq 2 ] || { echo "$out"; fail "$name --$bad 12abc exited $status, expected 2"; }
  echo "$out" | grep -Eq -- "bad value for (-[a-z]/)*--$bad: '12abc'" ||
    { echo "$out"; fail "$name: no message naming --$bad"; }
  echo "ok: $name --$bad 12abc"
}

pth=$bin/bench_${prog}_pthreads
check_help "$prog (pthreads)" "$pth"
check_bad "$prog (pthreads)" "$pth"
out=$(timeout -k 5 60 "$pth" -p 2 "$@" 2>&1)
status=$?
[ $status -eq 0 ] && echo "$out" | grep -q '"valid":true' || { echo "$out"; fail "$pth -p 2 $* exited $status"; }
echo "ok: $prog (pthreads) -p 2 $*"

if [ -x "$bin/bench_$prog" ]; then
  run="$bin/agorarun --timeout 30"
  # shellcheck disable=SC2086
  check_help "$prog (agora, 1 rank)" $run -n 1 "$bin/bench_$prog"
  # shellcheck disable=SC2086
  check_bad "$prog (agora, 2 ranks)" $run -n 2 "$bin/bench_$prog"
fi
echo PASS
