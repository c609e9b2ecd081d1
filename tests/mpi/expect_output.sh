#!/usr/bin/env bash
# expect_output.sh SECONDS CHECK... -- COMMAND...
# Passes if COMMAND exits 0 within SECONDS and its output (stdout and stderr)
# passes every CHECK: a PATTERN (an extended regular expression some line
# must match) or `-c N PATTERN` (exactly N lines must match; 0: none may).
set -u
. "$(dirname "$0")/run_bounded.sh"
limit=$1
shift
checks=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  if [ "$1" = "-c" ]; then checks+=("$2" "$3"); shift 3; else checks+=(any "$1"); shift; fi
done
shift
run_bounded "$limit" "$@"
if [ $status -ne 0 ]; then echo "FAIL: the command failed"; exit 1; fi
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
