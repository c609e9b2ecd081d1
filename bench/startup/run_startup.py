#!/usr/bin/env python3
"""bench/startup/run_startup.py -- start-up time of an empty program vs raw MPI.

Runs, --reps times each, interleaved (every repetition runs every
configuration, in a rotated order), each in its own job of --ranks ranks:
  mpi            mpirun of an empty MPI program (MPI_Init, MPI_Finalize):
                 the baseline
  agorarun-mpi   agorarun of the same program: the launcher script's cost
  spmd           agorarun of an SPMD program (agora_init, agora_finalize)
  main           agorarun of a program-mode empty main
  main-aslr-keep the same with AGORA_ASLR=keep (no re-exec at start)
Then --reps runs of spmd and main with AGORA_DEBUG=1, whose phase times
(runtime_start.cpp: "start-up total ...", "finalize total ...") give the
breakdown, medians per phase over runs and ranks.

Writes to --out DIR (default build/bench-results/startup-YYYYmmdd-HHMMSS):
  results.jsonl  one JSON object per run: configuration, wall seconds,
                 exit status, load average, phases (debug runs)
  summary.json   medians per configuration and their ratio to the baseline,
                 the phase medians, uptime before and after
  summary.md     the same as tables (also printed)
Standard library only.
"""

import argparse
import datetime
import json
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def loadavg():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


PHASE_LINE = re.compile(r"agora\[rank (\d+)\]: (start-up|finalize) total ([0-9.]+) ms: (.*)$")


def phases_of(output):
    """{("start-up"|"finalize", phase): [ms per rank]} from AGORA_DEBUG output."""
    out = {}
    for line in output.splitlines():
        m = PHASE_LINE.search(line)
        if not m:
            continue
        what = m.group(2)
        out.setdefault((what, "total"), []).append(float(m.group(3)))
        for part in m.group(4).split(", "):
            name, _, ms = part.rpartition(" ")
            out.setdefault((what, name), []).append(float(ms))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--reps", type=int, default=11)
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--out")
    args = ap.parse_args()
    bin_dir = os.path.join(args.build, "bin")
    out = args.out or os.path.join(
        args.build, "bench-results", "startup-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    os.makedirs(out, exist_ok=True)
    env = dict(os.environ)
    if os.geteuid() == 0:
        env.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    agorarun = os.path.join(bin_dir, "agorarun")
    n = str(args.ranks)
    prog = {p: os.path.join(bin_dir, "startup_empty_" + p) for p in ("mpi", "spmd", "main")}
    configs = {
        "mpi": (["mpirun", "-n", n, "--bind-to", "none", prog["mpi"]], {}),
        "agorarun-mpi": ([agorarun, "-n", n, prog["mpi"]], {}),
        "spmd": ([agorarun, "-n", n, prog["spmd"]], {}),
        "main": ([agorarun, "-n", n, prog["main"]], {}),
        "main-aslr-keep": ([agorarun, "-n", n, prog["main"]], {"AGORA_ASLR": "keep"}),
    }
    debug = {"spmd": configs["spmd"], "main": configs["main"]}
    before = uptime()
    print(before)
    rows = []
    names = list(configs)
    with open(os.path.join(out, "results.jsonl"), "w") as jl:
        for rep in range(args.reps):
            order = names[rep % len(names):] + names[:rep % len(names)]
            for name in order:
                cmd, extra = configs[name]
                load = loadavg()
                t0 = time.monotonic()
                r = subprocess.run(cmd, env={**env, **extra}, capture_output=True, text=True)
                wall = time.monotonic() - t0
                row = {"config": name, "rep": rep, "wall_s": wall, "status": r.returncode, "load": load,
                       "command": cmd, "env": extra}
                rows.append(row)
                jl.write(json.dumps(row) + "\n")
                jl.flush()
                if r.returncode != 0:
                    print(f"{name}: exit {r.returncode}\n{r.stderr[-2000:]}", file=sys.stderr)
        phase_runs = {}
        for rep in range(args.reps):
            for name, (cmd, extra) in debug.items():
                r = subprocess.run(cmd, env={**env, **extra, "AGORA_DEBUG": "1"}, capture_output=True, text=True)
                ph = phases_of(r.stdout + r.stderr)
                jl.write(json.dumps({"config": name + " (AGORA_DEBUG=1)", "rep": rep, "status": r.returncode,
                                     "phases": {f"{w}: {p}": v for (w, p), v in ph.items()}}) + "\n")
                for key, values in ph.items():
                    phase_runs.setdefault(name, {}).setdefault(key, []).extend(values)
    after = uptime()
    print(after)
    ok = [r for r in rows if r["status"] == 0]
    med = {c: statistics.median([r["wall_s"] for r in ok if r["config"] == c]) for c in configs
           if any(r["config"] == c for r in ok)}
    base = med.get("mpi")
    summary = {
        "uptime_before": before, "uptime_after": after, "reps": args.reps, "ranks": args.ranks,
        "median_wall_s": med,
        "ratio_to_mpi": {c: (v / base if base else None) for c, v in med.items()},
        "over_mpi_s": {c: (v - base if base else None) for c, v in med.items()},
        "failed_runs": len(rows) - len(ok),
        "phases_ms": {name: {f"{w}: {p}": statistics.median(v) for (w, p), v in ph.items()}
                      for name, ph in phase_runs.items()},
    }
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=2)
    lines = [f"`{before}` / `{after}`", "",
             f"| configuration ({args.ranks} ranks, median of {args.reps}) | wall s | / mpirun | over mpirun s |",
             "|---|---|---|---|"]
    for c, v in med.items():
        lines.append(f"| {c} | {v:.3f} | {summary['ratio_to_mpi'][c]:.2f} | {summary['over_mpi_s'][c]:+.3f} |")
    for name, ph in summary["phases_ms"].items():
        lines += ["", f"| {name}: phase (AGORA_DEBUG=1, median over runs and ranks) | ms |", "|---|---|"]
        lines += [f"| {k} | {v:.1f} |" for k, v in ph.items()]
    text = "\n".join(lines) + "\n"
    with open(os.path.join(out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    print("wrote", out)
    return 1 if summary["failed_runs"] else 0


if __name__ == "__main__":
    sys.exit(main())
