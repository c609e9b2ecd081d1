#!/usr/bin/env bash
# agorarun_flags_test.sh AGORA_INFO AGORARUN: every flag of the options table
# (agora-info --flags, not a list written here) is in agorarun --help, sets
# its variable (named in AGORA_FROM_FLAGS) and rejects a bad use.
set -u
agora_info=$1 agorarun=$2
fail() { echo "FAIL: $*"; exit 1; }
for v in $(compgen -e | grep '^AGORA_'); do unset "$v"; done
help=$("$agorarun" --help) || fail "agorarun --help exited $?"
flags=$("$agora_info" --flags) || fail "agora-info --flags"
count=0
while read -r flag variable kind what; do
  count=$((count + 1))
  echo "$help" | grep -Eq -- "^  $flag( |$)" || fail "agorarun --help has no line for $flag"
  echo "$help" | grep -q -- "$variable" || fail "agorarun --help does not name $variable"
  case $kind in
    switch) args=("$flag") value=1 ;;
    number) args=("$flag" 7) value=7 ;;
    value) args=("$flag" some-value) value=some-value ;;
    *) fail "agora-info --flags: unknown kind '$kind' for $flag" ;;
  esac
  out=$("$agorarun" --dry-run -n 1 "${args[@]}" prog 2>&1) || fail "agorarun --dry-run ${args[*]}: $out"
  case " $out " in *" $variable=$value "*) ;; *) fail "${args[*]} did not set $variable=$value: $out" ;; esac
  case " $out " in *" AGORA_FROM_FLAGS=$variable "*) ;; *) fail "${args[*]}: AGORA_FROM_FLAGS is not $variable: $out" ;; esac
  case " $out " in *" -x $variable "*) ;; *) fail "${args[*]}: $variable not forwarded: $out" ;; esac
  # Bad uses: usage errors (status 2) naming the flag.
  case $kind in
    switch) bad=("$flag=1") message="$flag takes no value" ;;
    number) bad=("$flag" x1) message="$flag x1 is not $what" ;;
    value) bad=("$flag") message="$flag needs a value" ;;
  esac
  out=$("$agorarun" --dry-run -n 1 "${bad[@]}" 2>&1); status=$?
  [ $status = 2 ] || fail "agorarun ${bad[*]}: status $status, expected 2: $out"
  case "$out" in *"$message"*) ;; *) fail "agorarun ${bad[*]}: '$out' does not say '$message'" ;; esac
  if [ "$kind" != switch ]; then  # --flag=value too
    out=$("$agorarun" --dry-run -n 1 "$flag=$value" prog 2>&1) || fail "$flag=$value: $out"
    case " $out " in *" $variable=$value "*) ;; *) fail "$flag=$value did not set $variable: $out" ;; esac
  fi
done <<< "$flags"
[ $count -ge 15 ] || fail "only $count flags in agora-info --flags"
echo "PASS: $count flags"
