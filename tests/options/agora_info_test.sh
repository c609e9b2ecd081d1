#!/usr/bin/env bash
# agora_info_test.sh AGORA_INFO AGORARUN: agora-info's listing.
set -u
agora_info=$1 agorarun=$2
fail() { echo "FAIL: $*"; exit 1; }
for v in $(compgen -e | grep '^AGORA_'); do unset "$v"; done

# The variables, from another rendering of the table (README's).
variables=$("$agora_info" --markdown | sed -n 's/^| `\(AGORA_[A-Z_]*\)`.*/\1/p')
[ "$(echo "$variables" | wc -l)" -ge 20 ] || fail "agora-info --markdown lists too few variables: $variables"

out=$("$agora_info") || fail "agora-info exited $?"
echo "$out" | grep -q "^Agora [0-9]*\.[0-9]*\.[0-9]*$" || fail "no version line"
echo "$out" | grep -Eq "^  protocols +sc, hlrc" || fail "no protocols line"
echo "$out" | grep -Eq "^  MPI \(build\) +(Open MPI|MPICH)" || fail "no MPI line"
echo "$out" | grep -Eq "^  build type +[A-Za-z]" || fail "no build type"
# The MPI library itself (MPI_Get_library_version) is the MPI of mpi.h, and
# the launcher recorded is that MPI's (docs/mpi.md).
build_mpi=$(echo "$out" | sed -n 's/^  MPI (build) *\(Open MPI\|MPICH\) .*/\1/p')
echo "$out" | grep -Eq "^  MPI library +$build_mpi v?[0-9.]+ \(/.*\)$" || fail "no MPI library line of $build_mpi: $out"
launcher=$(echo "$out" | sed -n 's/^  MPI launcher *//p')
case $build_mpi in MPICH) says=HYDRA ;; *) says="Open MPI|OpenRTE" ;; esac
"$launcher" --version 2>/dev/null | grep -Eq "$says" || fail "MPI launcher $launcher is not $build_mpi's"
for v in $variables; do
  echo "$out" | grep -Eq "^  $v +\[default\]" || fail "$v is not listed as [default]:
$out"
done

# A value from the environment, and one agorarun's flags set.
AGORA_MEMORY=2G "$agora_info" | grep -Eq "^  AGORA_MEMORY +\[environment\] +--memory +2G$" || fail "AGORA_MEMORY=2G not shown from the environment"
AGORA_MEMORY=2G AGORA_FROM_FLAGS=AGORA_WAIT:AGORA_MEMORY "$agora_info" | grep -Eq "^  AGORA_MEMORY +\[flag\] +--memory +2G$" \
  || fail "AGORA_MEMORY not shown from a flag"
# Listed in AGORA_FROM_FLAGS but unset: the default.
AGORA_FROM_FLAGS=AGORA_MEMORY "$agora_info" | grep -Eq "^  AGORA_MEMORY +\[default\] +--memory +\(unset\)$" || fail "unset AGORA_MEMORY not [default]"

# Bad values are reported with the runtime's message; the listing goes on.
out=$(AGORA_MEMORY=12Q AGORA_WAIT=never "$agora_info") || fail "a bad value made agora-info fail"
echo "$out" | grep -q "bad value: AGORA_MEMORY=12Q is not a size between 1M and 40T" || fail "bad AGORA_MEMORY not reported: $out"
echo "$out" | grep -q "bad value: AGORA_WAIT=never is not a wait mode; allowed: auto, spin, block" || fail "bad AGORA_WAIT not reported"
echo "$out" | grep -Eq "^  AGORA_SIM_POLICY " || fail "listing stopped at a bad value"
AGORA_PROTOCL=x "$agora_info" | grep -q "unknown variable AGORA_PROTOCL (did you mean AGORA_PROTOCOL?)" || fail "unknown variable not reported"

# JSON: every variable, with value, source and error.
AGORA_STACK=16M AGORA_HEAP=nowhere "$agora_info" --json | python3 -c '
import json, sys
d = json.load(sys.stdin)
want = sys.argv[1].split()
got = {o["variable"]: o for o in d["options"]}
assert [o["variable"] for o in d["options"]] == want, (list(got), want)
assert got["AGORA_STACK"]["value"] == "16M" and got["AGORA_STACK"]["source"] == "environment", got["AGORA_STACK"]
assert got["AGORA_HEAP"]["error"].startswith("AGORA_HEAP=nowhere is not a heap placement"), got["AGORA_HEAP"]
assert got["AGORA_PROTOCOL"]["source"] == "default" and got["AGORA_PROTOCOL"]["error"] is None
assert "sc" in d["protocols"] and d["version"], d
assert d["build"]["mpi_vendor"] in ("openmpi", "mpich") and d["build"]["mpi_library"] and d["build"]["mpi_launcher"], d["build"]
print("json ok:", len(want), "variables")' "$variables" || fail "agora-info --json"

# Through a real agorarun job (1 rank): the flag's value, marked [flag].
out=$("$agorarun" -n 1 --timeout 30 --memory 2G --wait block "$agora_info" 2>&1) || fail "agorarun ... agora-info: $out"
echo "$out" | grep -Eq "^  AGORA_MEMORY +\[flag\] +--memory +2G$" || fail "agorarun --memory 2G not shown as [flag]: $out"
echo "$out" | grep -Eq "^  AGORA_WAIT +\[flag\] +--wait +block$" || fail "agorarun --wait block not shown as [flag]"
out=$(AGORA_MEMORY=2G "$agorarun" -n 1 --timeout 30 "$agora_info" 2>&1) || fail "agorarun agora-info: $out"
echo "$out" | grep -Eq "^  AGORA_MEMORY +\[environment\] +--memory +2G$" || fail "AGORA_MEMORY through agorarun not [environment]: $out"
echo "$out" | grep -Eq "^  AGORA_FROM_FLAGS +\[default\]" || fail "agorarun with no flag set AGORA_FROM_FLAGS"
echo PASS
