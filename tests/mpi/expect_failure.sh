#!/usr/bin/env bash
# expect_failure.sh SECONDS PATTERN -- COMMAND...
# Passes if COMMAND exits non-zero within SECONDS and its output, lines joined
# by spaces, matches the extended regular expression PATTERN (e.g. the message
# naming the rank).
set -u
limit=$1 pattern=$2
shift 3
start=$(date +%s%N)
out=$(timeout -k 5 $((limit + 20)) "$@" 2>&1)
status=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "$out" | tail -25
echo "exit status $status after ${elapsed_ms} ms"
if [ $status -eq 0 ]; then echo "FAIL: the command succeeded"; exit 1; fi
if [ $elapsed_ms -gt $((limit * 1000)) ]; then echo "FAIL: took more than ${limit} s (hang?)"; exit 1; fi
if ! echo "$out" | tr "\n" " " | grep -Eq "$pattern"; then echo "FAIL: output does not match: $pattern"; exit 1; fi
echo PASS
