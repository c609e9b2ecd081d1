#!/usr/bin/env bash
# slurm_test.sh BUILD_DIR -- Agora jobs under a real single-node Slurm.
#
# Starts munged, slurmctld and slurmd (Debian's slurm-wlm and munge) on this
# machine, as root, with every file in a temporary directory and ports of
# their own (a second copy of this test, or a site's Slurm, is left alone);
# the node is this host with 8 CPUs (more than it has: the ranks mostly
# wait). Then, with MpiDefault=none (Slurm's default, so agorarun must pick
# srun's MPI plugin itself):
#   salloc   agorarun inside `salloc -n 2`: srun is the launcher, jacobi and
#            a program-mode program give the right results, and the AGORA_*
#            variables set before salloc reach every rank; so does jacobi
#            with AGORA_LAUNCHER=mpirun (Open MPI reads the allocation)
#   sbatch   a batch script with 4 tasks on the node (--ntasks-per-node=4):
#            the same checks on 4 ranks, in the job's output file
#   time     a job that outlives its --time=1 is ended (TIMEOUT), every rank
#            gone
#   scancel  a running job cancelled: CANCELLED, every rank gone
# and always tears it all down (trap), every step bounded in time. Exits 77
# (ctest SKIP_RETURN_CODE) when not root or Slurm or munge is not installed.
set -u
[ $# -eq 1 ] || {
  echo "usage: slurm_test.sh BUILD_DIR" >&2
  exit 2
}
bin=$(cd "$1" && pwd)/bin

skip() {
  echo "SKIP: $*"
  exit 77
}
fail() {
  echo "FAIL: $*"
  if [ -n "${tmp:-}" ] && [ -d "$tmp/log" ]; then
    for log in "$tmp"/log/*; do
      echo "---- last lines of $log"
      tail -n 15 "$log"
    done
  fi
  exit 1
}
say() { echo "== $(date +%T) $*"; }

[ "$(id -u)" = 0 ] || skip "needs root (it starts munged, slurmctld and slurmd)"
for tool in munged munge unmunge slurmctld slurmd srun salloc sbatch scancel scontrol sinfo python3 timeout; do
  command -v "$tool" >/dev/null || skip "$tool not found (install slurm-wlm and munge: apt-get install slurm-wlm munge)"
done
for prog in agorarun agora-info jacobi program_shared test_misbehave; do
  [ -x "$bin/$prog" ] || fail "$bin/$prog is not built"
done

# Every process of a run carries its mark (daemons, jobs, ranks): what is
# left at the end is found by it, and only that run's is touched.
mark_pids() { # DIR: the processes carrying DIR's mark (not this shell)
  local p
  for p in /proc/[0-9]*; do
    p=${p#/proc/}
    [ "$p" = $$ ] && continue
    grep -qzx "AGORA_SLURM_TEST_MARK=$1" "/proc/$p/environ" 2>/dev/null && echo "$p"
  done
}
# step_daemon_pids DIR: Slurm's step daemons of that run, which start with
# an empty environment but keep slurmd's log, in DIR, open.
step_daemon_pids() {
  find /proc/[0-9]*/fd -maxdepth 1 -lname "$1/*" 2>/dev/null | cut -d/ -f3 | sort -u
}
# leftover_pids DIR: every process of that run (mark_pids alone first: a
# command running beside it, as in a pipeline, carries the mark too).
leftover_pids() {
  local marked daemons
  marked=$(mark_pids "$1")
  daemons=$(step_daemon_pids "$1")
  printf '%s\n' "$marked" "$daemons" | sed '/^$/d' | sort -u
}
# joined COMMAND...: its output, lines joined by spaces (no process of
# its own that would carry the mark, as xargs would).
joined() {
  local out
  out=$("$@")
  printf '%s' "${out//$'\n'/ }"
}
# alive PID: the process runs (a zombie does not).
alive() { [ -d "/proc/$1" ] && [ "$(awk '{print $3}' "/proc/$1/stat" 2>/dev/null)" != Z ]; }
# Runs killed before their teardown (SIGKILL): their daemons and files.
for stale in /tmp/agora-slurm.*; do
  [ -f "$stale/test.pid" ] || continue
  alive "$(cat "$stale/test.pid")" && continue
  left=$(joined leftover_pids "$stale")
  # shellcheck disable=SC2086
  [ -n "$left" ] && kill -9 $left 2>/dev/null
  rm -rf "$stale"
done

tmp=$(mktemp -d /tmp/agora-slurm.XXXXXX)
chmod 711 "$tmp" # munged wants its socket's directory searchable by all
echo $$ >"$tmp/test.pid"
export AGORA_SLURM_TEST_MARK=$tmp
job_pids() { # JOBID: the processes of that job (ranks, job script, srun)
  local p
  for p in $(mark_pids "$tmp"); do
    grep -qzx "SLURM_JOB_ID=$1" "/proc/$p/environ" 2>/dev/null && echo "$p"
  done
}

daemons=()
teardown() {
  trap - EXIT INT TERM HUP
  if [ -n "${SLURM_CONF:-}" ] && [ ${#daemons[@]} -gt 0 ]; then
    timeout 10 scancel --full --quiet --user=root 2>/dev/null
    for _ in $(seq 50); do
      [ -z "$(timeout 5 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.2
    done
  fi
  local pid
  for pid in "${daemons[@]}"; do kill "$pid" 2>/dev/null; done
  for pid in "${daemons[@]}"; do
    for _ in $(seq 50); do
      alive "$pid" || break
      sleep 0.2
    done
    kill -9 "$pid" 2>/dev/null
  done
  # What survived (a step daemon, a rank) is this run's.
  local left
  left=$(joined leftover_pids "$tmp")
  if [ -n "$left" ]; then
    echo "teardown: ending processes left behind:"
    # shellcheck disable=SC2086
    ps -o pid=,stat=,args= -p ${left// /,}
    # shellcheck disable=SC2086
    kill -9 $left 2>/dev/null
  fi
  rm -rf "$tmp"
}
trap teardown EXIT
trap 'echo "slurm_test: interrupted"; exit 1' INT TERM HUP

# wait_for SECONDS WHAT COMMAND...: until COMMAND succeeds, else fail.
wait_for() {
  local seconds=$1 what=$2 end
  shift 2
  end=$(($(date +%s) + seconds))
  until "$@"; do
    [ "$(date +%s)" -lt "$end" ] || fail "$what: not within $seconds s"
    sleep 0.2
  done
}

# ---- munge, slurmctld, slurmd --------------------------------------------------
say "munged"
mkdir -p "$tmp/munge" "$tmp/state" "$tmp/spool" "$tmp/log" "$tmp/jobs" "$tmp/tmpfs"
chmod 711 "$tmp/munge" # the socket must be reachable by all users
head -c 1024 /dev/urandom >"$tmp/munge/munge.key"
chmod 600 "$tmp/munge/munge.key"
socket=$tmp/munge/socket
munged -F --key-file="$tmp/munge/munge.key" --socket="$socket" --pid-file="$tmp/munge/pid" \
  --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/seed" >"$tmp/log/munged.out" 2>&1 &
daemons+=($!)
munge_works() { munge -S "$socket" -n 2>/dev/null | unmunge -S "$socket" >/dev/null 2>&1; }
wait_for 15 "munged answering on $socket" munge_works

# Two free TCP ports on this machine.
read -r ctld_port slurmd_port < <(python3 -c '
import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("", 0))
print(*[x.getsockname()[1] for x in s])')
host=$(hostname -s)
export SLURM_CONF=$tmp/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=agoratest
SlurmctldHost=$host
SlurmUser=root
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$socket
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
# srun's PMIx plugin keeps a directory per step under TmpFS, named by job
# and step id: here, not in /tmp where another cluster's job 1 may have one.
TmpFS=$tmp/tmpfs
FirstJobId=$((RANDOM * 10 + 1))
# No cgroups (a container): processes are tracked by parentage, and tasks
# bound by sched_setaffinity as on most clusters (agorarun unbinds them).
ProctrackType=proctrack/linuxproc
TaskPlugin=task/affinity
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
# Slurm's default: agorarun must choose srun's MPI plugin.
MpiDefault=none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# The node's CPUs are the configured 8, not the machine's count.
SlurmdParameters=config_overrides
ReturnToService=2
# SIGTERM to SIGKILL at a time limit or scancel; finished jobs stay visible.
KillWait=5
MinJobAge=600
InactiveLimit=0
NodeName=$host NodeAddr=127.0.0.1 CPUs=8 State=UNKNOWN
PartitionName=agoratest Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
say "slurmctld and slurmd (ports $ctld_port, $slurmd_port)"
slurmctld -D -i -f "$SLURM_CONF" >"$tmp/log/slurmctld.out" 2>&1 &
daemons+=($!)
slurmd -D -f "$SLURM_CONF" >"$tmp/log/slurmd.out" 2>&1 &
daemons+=($!)
node_idle() { [ "$(timeout 5 sinfo -h -n "$host" -o %T 2>/dev/null)" = idle ]; }
if ! (wait_for 30 "node $host idle" node_idle); then
  tail -n 20 "$tmp"/log/*
  fail "Slurm did not come up"
fi
[ "$(timeout 5 scontrol show config | sed -n 's/^MpiDefault *= *//p')" = none ] || fail "MpiDefault is not none"
timeout 10 srun --mpi=list 2>&1 | grep -qw pmix || skip "this Slurm has no PMIx plugin (srun --mpi=list), which Open MPI's ranks need under srun"

# ---- checks ------------------------------------------------------------------
# job_state JOBID: JobState (RUNNING, COMPLETED, TIMEOUT, CANCELLED, ...).
job_state() { timeout 5 scontrol show job "$1" -o 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p'; }
job_ended() { case "$(job_state "$1")" in PENDING | RUNNING | CONFIGURING | COMPLETING | SUSPENDED | '') return 1 ;; esac; }
# submit NAME SBATCH_ARGS... -- SCRIPT_LINES: submits a batch script, its
# output in $tmp/jobs/NAME.out; sets `job` to its id.
submit() {
  local name=$1 args=()
  shift
  while [ "$1" != -- ]; do
    args+=("$1")
    shift
  done
  shift
  printf '#!/bin/bash\n%s\n' "$@" >"$tmp/jobs/$name.sh"
  job=$(cd "$tmp/jobs" && timeout 10 sbatch --parsable --job-name="$name" --output="$tmp/jobs/$name.out" \
    "${args[@]}" "$tmp/jobs/$name.sh") || fail "sbatch $name"
  job=${job%%;*}
}
# expect FILE PATTERN WHAT: a line of FILE matches PATTERN (grep -E).
expect() {
  grep -Eq -- "$2" "$1" || {
    cat "$1"
    fail "$3 (no line matches: $2)"
  }
}
# expect_started FILE RANKS PROTOCOL BYTES: every rank started with them.
expect_started() {
  local r
  for r in $(seq 0 $(($2 - 1))); do
    expect "$1" "^agora\[rank $r\]: started: protocol $3, $4 bytes " "rank $r did not start with protocol $3 and $4 bytes"
  done
  [ "$(grep -c ': started: protocol' "$1")" = "$2" ] || fail "not exactly $2 ranks started in $1"
}
# expect_jacobi FILE RANKS PROTOCOL: jacobi ran on RANKS and matched the serial loop.
expect_jacobi() {
  expect "$1" "^jacobi [0-9]+x[0-9]+, [0-9]+ iterations on $2 ranks \($3\): residual ([0-9.e+-]+) \(serial \1\)" \
    "jacobi on $2 ranks ($3) did not match the serial residual"
}
# rank_pids JOBID PROGRAM: the job's processes running PROGRAM.
rank_pids() {
  local p
  for p in $(job_pids "$1"); do
    [ "$(readlink "/proc/$p/exe" 2>/dev/null)" = "$bin/$2" ] && echo "$p"
  done
}
# expect_gone JOBID PIDS...: every one of PIDS, and every process of the job, ends.
all_gone() {
  local p
  for p in "${@:2}"; do
    alive "$p" && return 1
  done
  [ -z "$(job_pids "$1")" ]
}
expect_gone() {
  wait_for 20 "every process of job $1 ended (ranks ${*:2})" all_gone "$@"
}
# Two ranks of test_misbehave waiting (rank 1 sleeps 600 s outside Agora,
# rank 0 waits in a barrier, blocked): a job that would run for 10 minutes.
long_job_lines=("export AGORA_WAIT=block AGORA_DEBUG=1" "$bin/agorarun -n 2 $bin/test_misbehave outside 600")

# The time limit first: Slurm ends it 60-90 s from now, while the rest runs.
say "time: a 1-minute job that would run for 10"
submit time --ntasks=2 --time=1 -- "${long_job_lines[@]}"
time_job=$job time_start=$(date +%s)

say "salloc: agorarun inside salloc -n 2, AGORA_* set before salloc"
out=$tmp/jobs/salloc.out
env AGORA_PROTOCOL=hlrc AGORA_MEMORY=1G AGORA_DEBUG=1 \
  timeout -k 5 120 salloc -n 2 bash -c "$bin/agorarun -n 2 --dry-run $bin/jacobi 64 5 && \
    $bin/agorarun -n 2 --timeout 60 $bin/jacobi 64 5 && \
    $bin/agorarun -n 2 --timeout 60 --threads-per-rank 3 $bin/program_shared hello-argv && \
    AGORA_LAUNCHER=mpirun $bin/agorarun -n 2 --timeout 60 $bin/jacobi 64 6" >"$out" 2>&1
status=$?
[ $status = 0 ] || {
  cat "$out"
  fail "salloc exited with status $status"
}
expect "$out" "^(AGORA_[A-Z_]+=[^ ]+ )+srun -n 2 --mpi=pmix --cpu-bind=none --export=ALL $bin/jacobi 64 5$" \
  "agorarun inside salloc did not choose srun --mpi=pmix"
expect_jacobi "$out" 2 hlrc
expect "$out" "^PASS program shared: 5 threads on 2 ranks \(hlrc\)" "program mode on 2 ranks failed"
# Open MPI's mpirun reads the allocation too (the way round a Slurm without PMIx).
expect "$out" "^jacobi 64x64, 6 iterations on 2 ranks \(hlrc\): residual ([0-9.e+-]+) \(serial \1\)" \
  "AGORA_LAUNCHER=mpirun inside salloc failed"
# Each rank says so three times (jacobi, the program, jacobi under mpirun).
for r in 0 1; do
  [ "$(grep -c "^agora\[rank $r\]: started: protocol hlrc, 1073741824 bytes " "$out")" = 3 ] ||
    {
      cat "$out"
      fail "rank $r did not start 3 times with AGORA_PROTOCOL=hlrc and AGORA_MEMORY=1G from before salloc"
    }
done
echo "ok: salloc"

say "sbatch: 4 tasks on the node, AGORA_* set before sbatch"
AGORA_PROTOCOL=regc AGORA_MEMORY=2G AGORA_DEBUG=1 submit batch --nodes=1 --ntasks-per-node=4 -- \
  "$bin/agorarun -n \$SLURM_NTASKS --timeout 60 $bin/jacobi 128 10 || exit 1" \
  "$bin/agorarun -n \$SLURM_NTASKS --timeout 60 --threads-per-rank 2 $bin/program_shared hello-argv 7"
batch_job=$job
wait_for 120 "batch job $batch_job ended" job_ended "$batch_job"
out=$tmp/jobs/batch.out
[ "$(job_state "$batch_job")" = COMPLETED ] || {
  cat "$out"
  fail "batch job $batch_job ended $(job_state "$batch_job")"
}
expect_jacobi "$out" 4 regc
expect "$out" "^PASS program shared: 7 threads on 4 ranks \(regc\)" "program mode on 4 ranks failed"
for r in 0 1 2 3; do
  [ "$(grep -c "^agora\[rank $r\]: started: protocol regc, 2147483648 bytes " "$out")" = 2 ] ||
    {
      cat "$out"
      fail "rank $r did not start twice with AGORA_PROTOCOL=regc and AGORA_MEMORY=2G from before sbatch"
    }
done
echo "ok: sbatch"

say "scancel: a running job cancelled"
submit cancel --ntasks=2 -- "${long_job_lines[@]}"
cancel_job=$job
out=$tmp/jobs/cancel.out
ranks_started() { [ "$(grep -c ': started: protocol' "$out" 2>/dev/null)" = 2 ]; }
wait_for 60 "both ranks of job $cancel_job started" ranks_started
ranks=$(joined rank_pids "$cancel_job" test_misbehave)
[ "$(echo "$ranks" | wc -w)" = 2 ] || fail "job $cancel_job: not 2 rank processes: $ranks"
timeout 10 scancel "$cancel_job" || fail "scancel $cancel_job"
wait_for 30 "job $cancel_job ended" job_ended "$cancel_job"
[ "$(job_state "$cancel_job")" = CANCELLED ] || fail "job $cancel_job ended $(job_state "$cancel_job"), not CANCELLED"
# shellcheck disable=SC2086
expect_gone "$cancel_job" $ranks
echo "ok: scancel (ranks $ranks gone)"

say "time: waiting for job $time_job's time limit"
out=$tmp/jobs/time.out
ranks=$(joined rank_pids "$time_job" test_misbehave)
[ "$(echo "$ranks" | wc -w)" = 2 ] || {
  cat "$out"
  fail "job $time_job: not 2 rank processes: $ranks"
}
wait_for 150 "job $time_job ended by its time limit" job_ended "$time_job"
took=$(($(date +%s) - time_start))
[ "$(job_state "$time_job")" = TIMEOUT ] || fail "job $time_job ended $(job_state "$time_job"), not TIMEOUT"
expect "$out" "CANCELLED AT .* DUE TO TIME LIMIT" "job $time_job's output does not say it reached its time limit"
# shellcheck disable=SC2086
expect_gone "$time_job" $ranks
echo "ok: time limit (ended after $took s, ranks $ranks gone)"
echo PASS
