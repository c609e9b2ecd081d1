#!/usr/bin/env bash
# expect_output.sh SECONDS PATTERN COUNT -- COMMAND...
# Passes if COMMAND exits 0 within SECONDS and exactly COUNT lines of its
# output match the extended regular expression PATTERN (COUNT 0: none may).
set -u
limit=$1 pattern=$2 count=$3
shift 4
start=$(date +%s%N)
out=$(timeout -k 5 $((limit + 20)) "$@" 2>&1)
status=$?
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
echo "$out" | tail -25
echo "exit status $status after ${elapsed_ms} ms"
if [ $status -ne 0 ]; then echo "FAIL: the command failed"; exit 1; fi
if [ $elapsed_ms -gt $((limit * 1000)) ]; then echo "FAIL: took more than ${limit} s (hang?)"; exit 1; fi
matches=$(echo "$out" | grep -Ec "$pattern")
if [ "$matches" -ne "$count" ]; then echo "FAIL: $matches lines match, expected $count: $pattern"; exit 1; fi
echo PASS
