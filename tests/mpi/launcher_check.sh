#!/usr/bin/env bash
# launcher_check.sh AGORARUN command 'EXPECTED' ARGS...
#   `agorarun --dry-run ARGS` must print exactly the command EXPECTED
#   (compared word by word after shell parsing, so quoting style is free).
# launcher_check.sh AGORARUN usage 'PATTERN' ARGS...
#   `agorarun --dry-run ARGS` must be a usage error: exit status 2, a message
#   matching the extended regular expression PATTERN, no shell error.
# Runs with no AGORA_* variable in the environment, so the output is exact,
# and outside any Slurm allocation, so the launcher is Open MPI's mpirun
# (the other launchers: launchers_check.sh).
set -u
agorarun=$1 mode=$2 expected=$3
shift 3
for v in $(compgen -e | grep '^AGORA_'); do unset "$v"; done
unset SLURM_JOB_ID
out=$(timeout 10 "$agorarun" --dry-run "$@" 2>&1)
status=$?
echo "agorarun --dry-run $*"
echo "output:   $out"
echo "status:   $status"
case $mode in
  command)
    echo "expected: $expected"
    [ $status -eq 0 ] || { echo "FAIL: exit status $status"; exit 1; }
    eval "got=($out)" && eval "want=($expected)" || { echo "FAIL: not a shell command line"; exit 1; }
    if [ ${#got[@]} -ne ${#want[@]} ]; then echo "FAIL: ${#got[@]} words, expected ${#want[@]}"; exit 1; fi
    for i in "${!want[@]}"; do
      [ "${got[$i]}" = "${want[$i]}" ] || { echo "FAIL: word $i is '${got[$i]}', expected '${want[$i]}'"; exit 1; }
    done ;;
  usage)
    echo "expected: exit status 2 and /$expected/"
    [ $status -eq 2 ] || { echo "FAIL: exit status $status, expected 2"; exit 1; }
    echo "$out" | grep -Eq -e "$expected" || { echo "FAIL: message does not match"; exit 1; }
    if echo "$out" | grep -Eq -e 'line [0-9]+:|unbound variable|command not found|syntax error'; then
      echo "FAIL: a shell error, not a usage message"; exit 1
    fi ;;
  *) echo "launcher_check.sh: unknown mode $mode"; exit 1 ;;
esac
echo PASS
