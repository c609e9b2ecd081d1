#!/usr/bin/env bash
# expect_output.sh SECONDS CHECK... -- COMMAND...
# Passes if COMMAND exits 0 within SECONDS and its output (stdout and stderr)
# passes every CHECK: a PATTERN (an extended regular expression some line
# must match) or `-c N PATTERN` (exactly N lines must match; 0: none may).
set -u
limit=$1
shift
checks=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  if [ "$1" = "-c" ]; then checks+=("$2" "$3"); shift 3; else checks+=(any "$1"); shift; fi
done
shift
start=$(date +%s%N)
out=$(timeout -k 5 $((limit + 20)) "$@" 2>&1)
status=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "$out" | tail -40
echo "exit status $status after ${elapsed_ms} ms"
if [ $status -ne 0 ]; then echo "FAIL: the command failed"; exit 1; fi
if [ $elapsed_ms -gt $((limit * 1000)) ]; then echo "FAIL: took more than ${limit} s (hang?)"; exit 1; fi
for ((i = 0; i < ${#checks[@]}; i += 2)); do
  want=${checks[i]} pattern=${checks[i + 1]}
  matches=$(echo "$out" | grep -Ec -- "$pattern")
  if [ "$want" = any ]; then
    [ "$matches" -gt 0 ] || { echo "FAIL: output does not match: $pattern"; exit 1; }
  elif [ "$matches" -ne "$want" ]; then
    echo "FAIL: $matches lines match, expected $want: $pattern"; exit 1
  fi
done
echo PASS
