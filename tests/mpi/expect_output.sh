#!/usr/bin/env bash
# expect_output.sh SECONDS PATTERN... -- COMMAND...
# Passes if COMMAND exits 0 within SECONDS and its output (stdout and
# stderr) matches every extended regular expression PATTERN.
set -u
limit=$1
shift
patterns=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do patterns+=("$1"); shift; done
shift
out=$(timeout -k 5 "$limit" "$@" 2>&1)
status=$?
echo "$out" | tail -40
if [ $status -ne 0 ]; then echo "FAIL: exit status $status"; exit 1; fi
for p in "${patterns[@]}"; do
  if ! echo "$out" | grep -Eq -- "$p"; then echo "FAIL: output does not match: $p"; exit 1; fi
done
echo PASS
