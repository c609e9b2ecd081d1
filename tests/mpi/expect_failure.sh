#!/usr/bin/env bash
# expect_failure.sh SECONDS PATTERN -- COMMAND...
# Passes if COMMAND exits non-zero within SECONDS and its output, lines joined
# by spaces, matches the extended regular expression PATTERN (e.g. the message
# naming the rank).
set -u
. "$(dirname "$0")/run_bounded.sh"
limit=$1 pattern=$2
shift 3
run_bounded "$limit" "$@"
if [ $status -eq 0 ]; then echo "FAIL: the command succeeded"; exit 1; fi
if ! echo "$out" | tr "\n" " " | grep -Eq "$pattern"; then echo "FAIL: output does not match: $pattern"; exit 1; fi
echo PASS
