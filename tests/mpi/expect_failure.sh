#!/usr/bin/env bash
# expect_failure.sh SECONDS PATTERN [-c N PATTERN]... -- COMMAND...
# Passes if COMMAND exits non-zero within SECONDS and its output, lines joined
# by spaces, matches the extended regular expression PATTERN (e.g. the message
# naming the rank); each `-c N PATTERN` needs exactly N lines of the output to
# match PATTERN (0: none may).
set -u
. "$(dirname "$0")/run_bounded.sh"
limit=$1 pattern=$2
shift 2
counts=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  if [ "$1" = "-c" ]; then counts+=("$2" "$3"); shift 3; else echo "expect_failure.sh: unexpected $1"; exit 2; fi
done
shift
run_bounded "$limit" "$@"
if [ $status -eq 0 ]; then echo "FAIL: the command succeeded"; exit 1; fi
if ! echo "$out" | tr "\n" " " | grep -Eq "$pattern"; then echo "FAIL: output does not match: $pattern"; exit 1; fi
for ((i = 0; i < ${#counts[@]}; i += 2)); do
  matches=$(echo "$out" | grep -Ec -- "${counts[i + 1]}")
  if [ "$matches" -ne "${counts[i]}" ]; then echo "FAIL: $matches lines match, expected ${counts[i]}: ${counts[i + 1]}"; exit 1; fi
done
echo PASS
