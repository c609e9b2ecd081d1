#!/usr/bin/env python3
"""bench/micro/run_lock_handoff.py -- lock costs per protocol against MPI's floor.

Runs build/bin/agora-microbench on 2 ranks under each protocol, --reps
interleaved rounds. Each run measures, in the same MPI job:
  * floor_mpi_roundtrip_us: an 8-byte MPI_Send/MPI_Recv round trip (no Agora);
  * lock_roundtrip_us: rank 0 takes and releases a lock managed by rank 1,
    nobody else asking;
  * lock_handoff: both ranks take one lock in a loop, updating words homed
    on rank 0 inside it, so every hand-off carries the holder's writes.
Writes every run (command, load average, figures) and the medians per
protocol, with the ratios to the MPI round trip, to --out FILE (JSON).

  bench/micro/run_lock_handoff.py [--reps 5] [--iterations 2000]
      [--protocols sc,hlrc,regc,regc-page] [--out build/bench-results/lock_handoff.json]
Standard library only.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(cmd, timeout):
    load = loadavg()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        status, out = p.returncode, p.stdout
    except subprocess.TimeoutExpired:
        status, out = "timeout", ""
    result = None
    if status == 0:
        start = out.find("{")
        result = json.JSONDecoder().raw_decode(out[start:])[0] if start >= 0 else None
    return {"cmd": cmd, "status": status, "ok": result is not None, "load": load, "result": result}


def summarize(runs):
    good = [r["result"] for r in runs if r["ok"]]
    if not good:
        return {"ok_runs": 0}
    floor = statistics.median(g["floor_mpi_roundtrip_us"]["median"] for g in good)
    lock = statistics.median(g["lock_roundtrip_us"]["median"] for g in good)
    handoff = statistics.median(g["lock_handoff"]["us_per_handoff"] for g in good)
    return {"ok_runs": len(good), "floor_mpi_roundtrip_us": floor, "lock_roundtrip_us": lock,
            "lock_roundtrip_vs_mpi": lock / floor, "us_per_handoff": handoff,
            "handoffs_per_s": statistics.median(g["lock_handoff"]["handoffs_per_s"] for g in good),
            "handoff_vs_mpi": handoff / floor}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--iterations", type=int, default=2000)
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--protocols", default="sc,hlrc,regc,regc-page")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    out = a.out or os.path.join(a.build, "bench-results", "lock_handoff.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)
    runs = []
    protocols = a.protocols.split(",")
    for rep in range(a.reps):
        for p in protocols:
            cmd = [os.path.join(a.build, "bin", "agorarun"), "-n", "2", "--timeout", str(a.timeout), "--protocol", p,
                   os.path.join(a.build, "bin", "agora-microbench"), "--reps", str(a.iterations)]
            r = run(cmd, a.timeout + 30)
            r["protocol"], r["rep"] = p, rep
            runs.append(r)
            res = r["result"] or {}
            print(f"{p:9s} rep {rep}: ok={r['ok']} lock {res.get('lock_roundtrip_us', {}).get('median')} us, "
                  f"hand-off {res.get('lock_handoff', {}).get('us_per_handoff')} us, "
                  f"MPI round trip {res.get('floor_mpi_roundtrip_us', {}).get('median')} us (load {r['load']})",
                  flush=True)
    summary = {p: summarize([r for r in runs if r["protocol"] == p]) for p in protocols}
    with open(out, "w") as f:
        json.dump({"iterations": a.iterations, "reps": a.reps, "summary": summary, "runs": runs}, f, indent=1)
    print(json.dumps(summary, indent=1))
    print("wrote", out)
    return 0 if all(s["ok_runs"] for s in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
