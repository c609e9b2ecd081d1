#!/usr/bin/env bash
# launchers_check.sh AGORARUN
#   agorarun's choice of launcher (Open MPI's mpirun, MPICH's Hydra mpiexec,
#   Slurm's srun) and the command it builds for each, with fake launchers on
#   PATH: small scripts named mpirun, mpiexec and srun that print their
#   arguments and the AGORA_* part of their environment. Checks both
#   --dry-run's command and what a real run hands the launcher. AGORARUN is
#   run as configured for each MPI (copies with build_mpi and
#   build_mpi_launcher rewritten), whichever MPI this build uses.
set -u
built_agorarun=$1
for v in $(compgen -e | grep '^AGORA_'); do unset "$v"; done
unset SLURM_JOB_ID MPIEXEC_TIMEOUT SLURM_MPI_TYPE FAKE_MPI_DEFAULT
fake=$(mktemp -d)
trap 'rm -rf "$fake"' EXIT
failures=0
# Absolute paths: some cases take the system directories off PATH.
timeout_bin=$(command -v timeout) bash_bin=$(command -v bash)

# fake NAME VERSION_TEXT: a launcher that answers --version with VERSION_TEXT
# and otherwise prints "NAME", one "arg: X" per argument, then "env: V=X" for
# each AGORA_* and MPIEXEC_TIMEOUT variable it received, and
# "env: OMPI_ALLOW_RUN_AS_ROOT" if that is set.
make_fake() {
  cat >"$fake/$1" <<FAKE
#!/usr/bin/env bash
if [ "\${1:-}" = --version ]; then printf '%s\n' "$2"; exit 0; fi
echo "$1"
for a in "\$@"; do echo "arg: \$a"; done
for v in \$(compgen -e | grep -E '^(AGORA_|MPIEXEC_TIMEOUT)' | LC_ALL=C sort); do echo "env: \$v=\${!v}"; done
[ -n "\${OMPI_ALLOW_RUN_AS_ROOT:-}" ] && echo "env: OMPI_ALLOW_RUN_AS_ROOT"
exit 0
FAKE
  chmod +x "$fake/$1"
}
hydra_version="HYDRA build details:
    Version:                                 4.0.2"
openmpi_version="mpiexec (OpenRTE) 4.1.4"

# dry CASE 'ENV ASSIGNMENTS' 'EXPECTED' ARGS...: `env ASSIGNMENTS agorarun
# --dry-run ARGS` prints EXPECTED (word by word).
dry() {
  local name=$1 assignments=$2 expected=$3; shift 3
  local out status
  # shellcheck disable=SC2086
  out=$(env PATH="$fake:$PATH" $assignments "$timeout_bin" 10 "$bash_bin" "$agorarun" --dry-run "$@" 2>&1)
  status=$?
  local got want ok=1
  eval "got=($out)" 2>/dev/null && eval "want=($expected)" || ok=0
  if [ $ok = 1 ] && [ $status = 0 ] && [ "${got[*]}" = "${want[*]}" ] && [ ${#got[@]} = ${#want[@]} ]; then
    echo "ok: $name: $out"
  else
    echo "FAIL: $name (status $status)"; echo "  got:      $out"; echo "  expected: $expected"
    failures=$((failures + 1))
  fi
}

# run CASE 'ENV ASSIGNMENTS' 'EXPECTED LINES' ARGS...: a real run (of the
# fake launcher) prints exactly EXPECTED LINES.
run() {
  local name=$1 assignments=$2 expected=$3; shift 3
  local out status
  # shellcheck disable=SC2086
  out=$(env PATH="$fake:$PATH" $assignments "$timeout_bin" 10 "$bash_bin" "$agorarun" "$@" 2>&1)
  status=$?
  if [ $status = 0 ] && [ "$out" = "$expected" ]; then
    echo "ok: $name"
  else
    echo "FAIL: $name (status $status)"; echo "--- got:"; echo "$out"; echo "--- expected:"; echo "$expected"
    failures=$((failures + 1))
  fi
}

# fails CASE 'ENV ASSIGNMENTS' STATUS 'PATTERN' ARGS...
fails() {
  local name=$1 assignments=$2 want_status=$3 pattern=$4; shift 4
  local out status
  # shellcheck disable=SC2086
  out=$(env PATH="$fake:$PATH" $assignments "$timeout_bin" 10 "$bash_bin" "$agorarun" --dry-run "$@" 2>&1)
  status=$?
  if [ $status = "$want_status" ] && echo "$out" | grep -Eq -e "$pattern"; then
    echo "ok: $name: $out"
  else
    echo "FAIL: $name: status $status (expected $want_status), output: $out (expected /$pattern/)"
    failures=$((failures + 1))
  fi
}

make_fake mpirun "mpirun (Open MPI) 4.1.4"
make_fake srun "slurm 22.05.8"
# scontrol show config: the site's MpiDefault is FAKE_MPI_DEFAULT (pmix_v4
# unless set; "fail": scontrol cannot reach a controller).
cat >"$fake/scontrol" <<'FAKE'
#!/usr/bin/env bash
[ "${FAKE_MPI_DEFAULT:-}" = fail ] && { echo "scontrol: error: no controller" >&2; exit 1; }
printf 'MpiDefault              = %s\nMpiParams               = (null)\n' "${FAKE_MPI_DEFAULT:-pmix_v4}"
FAKE
chmod +x "$fake/scontrol"

# configured VENDOR LAUNCHER: a copy of agorarun built for VENDOR (openmpi or
# mpich) whose launcher is LAUNCHER (cmake/AgoraMpi.cmake); prints its path.
# agora-info is found beside it.
ln -s "$(dirname "$(readlink -f "$built_agorarun")")/agora-info" "$fake/agora-info"
configured() {
  local copy=$fake/agorarun_$1_${2//\//_}
  sed -e "s|^build_mpi=.*|build_mpi=$1|" -e "s|^build_mpi_launcher=.*|build_mpi_launcher=$2|" "$built_agorarun" >"$copy"
  echo "$copy"
}
openmpi_agorarun=$(configured openmpi "$fake/mpirun")
mpich_agorarun=$(configured mpich "$fake/mpiexec")
agorarun=$openmpi_agorarun
# The plugin agorarun picks for Open MPI when the site has none.
build_plugin=--mpi=pmix

# ---- Slurm: SLURM_JOB_ID and srun on PATH ------------------------------------
make_fake mpiexec "$openmpi_version"
dry srun_detected "SLURM_JOB_ID=7 AGORA_PROTOCOL=hlrc" \
  "AGORA_PROTOCOL=hlrc srun -n 2 --cpu-bind=none --export=ALL prog a" -n 2 prog a
dry srun_flags_become_variables "SLURM_JOB_ID=7" \
  "AGORA_FROM_FLAGS=AGORA_STATS:AGORA_MEMORY AGORA_MEMORY=1G AGORA_STATS=1 srun -n 4 --cpu-bind=none --export=ALL prog" -n 4 --stats --memory 1G prog
dry srun_user_binds "SLURM_JOB_ID=7" \
  "srun -n 2 --cpu-bind=cores --export=ALL prog" -n 2 --cpu-bind=cores prog
dry srun_user_exports "SLURM_JOB_ID=7" \
  "srun -n 2 --export=ALL,FOO=1 --cpu-bind=none prog" -n 2 --export=ALL,FOO=1 prog
dry srun_no_oversubscribe "SLURM_JOB_ID=7" \
  "srun -n 1000 --cpu-bind=none --export=ALL prog" -n 1000 prog
dry srun_timeout "SLURM_JOB_ID=7" \
  "srun -n 2 --time=1:30 --cpu-bind=none --export=ALL prog" -n 2 --timeout 90 prog
# The site's MpiDefault is none (Slurm's default) or unknown: the plugin
# for the MPI Agora was built with; the user's --mpi or SLURM_MPI_TYPE wins.
dry srun_site_mpi_none "SLURM_JOB_ID=7 FAKE_MPI_DEFAULT=none" \
  "srun -n 2 $build_plugin --cpu-bind=none --export=ALL prog" -n 2 prog
dry srun_site_unknown "SLURM_JOB_ID=7 FAKE_MPI_DEFAULT=fail" \
  "srun -n 2 --time=0:20 $build_plugin --cpu-bind=none --export=ALL prog" -n 2 --timeout 20 prog
# An MPICH build of Agora: pmi2 (Debian's MPICH has no pmix support).
agorarun=$mpich_agorarun
dry srun_site_mpi_none_mpich "SLURM_JOB_ID=7 FAKE_MPI_DEFAULT=none" \
  "srun -n 2 --mpi=pmi2 --cpu-bind=none --export=ALL prog" -n 2 prog
agorarun=$openmpi_agorarun
dry srun_user_mpi "SLURM_JOB_ID=7 FAKE_MPI_DEFAULT=none" \
  "srun -n 2 --mpi=pmi2 --cpu-bind=none --export=ALL prog" -n 2 --mpi=pmi2 prog
dry srun_env_mpi "SLURM_JOB_ID=7 FAKE_MPI_DEFAULT=none SLURM_MPI_TYPE=pmix_v4" \
  "srun -n 2 --cpu-bind=none --export=ALL prog" -n 2 prog
run srun_environment "SLURM_JOB_ID=7 AGORA_PROTOCOL=hlrc AGORA_HANG_WARN=5" "srun
arg: -n
arg: 2
arg: --cpu-bind=none
arg: --export=ALL
arg: prog
arg: x y
env: AGORA_FROM_FLAGS=AGORA_STATS
env: AGORA_HANG_WARN=5
env: AGORA_PROTOCOL=hlrc
env: AGORA_STATS=1" -n 2 --stats prog "x y"

# ---- MPICH: an Agora built with MPICH starts ranks with Hydra's mpiexec ------
make_fake mpiexec "$hydra_version"
agorarun=$mpich_agorarun
dry hydra_detected "AGORA_PROTOCOL=hlrc AGORA_STATS=1" \
  "AGORA_PROTOCOL=hlrc AGORA_STATS=1 mpiexec -n 2 -genvlist AGORA_PROTOCOL,AGORA_STATS -bind-to none prog a" -n 2 prog a
dry hydra_nothing_to_forward "" "mpiexec -n 1000 -bind-to none prog" -n 1000 prog
dry hydra_user_binds "" "AGORA_FROM_FLAGS=AGORA_WAIT AGORA_WAIT=spin mpiexec -n 2 -bind-to core -genvlist AGORA_FROM_FLAGS\\,AGORA_WAIT prog" -n 2 --wait spin -bind-to core prog
dry hydra_timeout "" "MPIEXEC_TIMEOUT=30 mpiexec -n 2 -bind-to none prog" -n 2 --timeout 30 prog
run hydra_environment "AGORA_PROTOCOL=sc" "mpiexec
arg: -n
arg: 3
arg: -genvlist
arg: AGORA_PROTOCOL
arg: -bind-to
arg: none
arg: prog
env: AGORA_PROTOCOL=sc
env: MPIEXEC_TIMEOUT=20" -n 3 --timeout 20 prog

# MPICH's launcher by its configured path when PATH's mpiexec is Open MPI's
# (Debian's alternatives with both installed).
mkdir "$fake/mpich"
make_fake mpich/mpiexec.hydra "$hydra_version"
make_fake mpiexec "$openmpi_version"
agorarun=$(configured mpich "$fake/mpich/mpiexec.hydra")
dry hydra_by_path "" "$fake/mpich/mpiexec.hydra -n 2 -bind-to none prog" -n 2 prog
# Gone from there (an installed tree moved to another machine): PATH's
# mpiexec (were it another MPI's, agora_init names the mismatch); none there
# either: what to install.
rm "$fake/mpich/mpiexec.hydra"
dry hydra_gone_path_used "" "mpiexec -n 2 -bind-to none prog" -n 2 prog
fails hydra_gone_none_on_path "PATH=/nonexistent" 127 "this Agora is built with MPICH, whose mpiexec .*/mpich/mpiexec.hydra. is not there. Install MPICH" -n 2 prog
agorarun=$mpich_agorarun
# Another MPI's launcher is refused, naming both (its ranks would each be a
# job of one rank).
fails mpich_refuses_mpirun "AGORA_LAUNCHER=mpirun" 2 "AGORA_LAUNCHER=mpirun is Open MPI's mpirun, but this Agora is built with MPICH: each rank would start as a job of its own" -n 2 prog
agorarun=$openmpi_agorarun
fails openmpi_refuses_mpiexec "AGORA_LAUNCHER=mpiexec" 2 "AGORA_LAUNCHER=mpiexec is MPICH's mpiexec .Hydra., but this Agora is built with Open MPI" -n 2 prog
# An Agora built with Open MPI ignores a Hydra mpiexec on PATH.
make_fake mpiexec "$hydra_version"
dry openmpi_ignores_hydra "" "mpirun -n 1 --bind-to none prog" -n 1 prog

# ---- Open MPI: the default, and what AGORA_LAUNCHER=mpirun forces -----------
make_fake mpiexec "$openmpi_version"
dry openmpi_default "AGORA_PROTOCOL=sc" "AGORA_PROTOCOL=sc mpirun -n 1 --bind-to none -x AGORA_PROTOCOL prog" -n 1 prog
dry forced_mpirun_in_slurm "SLURM_JOB_ID=7 AGORA_LAUNCHER=mpirun" \
  "AGORA_LAUNCHER=mpirun mpirun -n 1 --bind-to none -x AGORA_LAUNCHER prog" -n 1 prog
root_line=""
[ "$(id -u)" = 0 ] && root_line=$'\nenv: OMPI_ALLOW_RUN_AS_ROOT'
run openmpi_environment "AGORA_DEBUG=1" "mpirun
arg: -n
arg: 1
arg: --bind-to
arg: none
arg: -x
arg: AGORA_DEBUG
arg: prog
env: AGORA_DEBUG=1$root_line" -n 1 prog

# ---- forced, and refused ------------------------------------------------------
dry forced_srun_outside_slurm "AGORA_LAUNCHER=srun" \
  "AGORA_LAUNCHER=srun srun -n 2 --cpu-bind=none --export=ALL prog" -n 2 prog
agorarun=$mpich_agorarun
dry forced_mpiexec "AGORA_LAUNCHER=mpiexec" \
  "AGORA_LAUNCHER=mpiexec mpiexec -n 2 -genvlist AGORA_LAUNCHER -bind-to none prog" -n 2 prog
agorarun=$openmpi_agorarun
fails unknown_launcher "AGORA_LAUNCHER=aprun" 2 "AGORA_LAUNCHER=aprun is not a launcher .allowed: srun, mpirun" -n 2 prog
rm "$fake/srun"
fails forced_launcher_missing "AGORA_LAUNCHER=srun PATH=$fake:/nonexistent" 127 "AGORA_LAUNCHER=srun but srun is not on PATH" -n 2 prog
# In an allocation without srun on PATH: the MPI launcher, as before. Slurm
# may be installed here, so PATH gets the system's commands except srun.
no_srun=$(mktemp -d)
find /usr/bin /bin -maxdepth 1 ! -type d ! -name srun -exec ln -sf -t "$no_srun" {} + 2>/dev/null
dry slurm_without_srun "SLURM_JOB_ID=7 PATH=$fake:$no_srun" "mpirun -n 1 --bind-to none prog" -n 1 prog

rm -rf "$no_srun"

if [ $failures -gt 0 ]; then echo "$failures case(s) failed"; exit 1; fi
echo PASS
