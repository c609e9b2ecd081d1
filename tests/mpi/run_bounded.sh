# Sourced by expect_failure.sh and expect_output.sh.
# run_bounded LIMIT COMMAND...: runs COMMAND (killed LIMIT + 20 s in), shows
# the end of its output, and sets out, status and elapsed_ms; fails the test
# if it took more than LIMIT seconds.
run_bounded() {
  local limit=$1
  shift
  local start
  start=$(date +%s%N)
  out=$(timeout -k 5 $((limit + 20)) "$@" 2>&1)
  status=$?
  elapsed_ms=$((($(date +%s%N) - start) / 1000000))
  echo "$out" | tail -40
  echo "exit status $status after ${elapsed_ms} ms"
  if [ $elapsed_ms -gt $((limit * 1000)) ]; then echo "FAIL: took more than ${limit} s (hang?)"; exit 1; fi
}
