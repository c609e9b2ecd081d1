#!/usr/bin/env python3
"""bench/micro/run_trylock_spin.py -- a trylock-spin barrier vs pthread_barrier_wait.

Runs build/bin/agora-trylock-spin (tests/program/trylock_spin.c: 2 ranks x 2
threads, R rounds of a hand-written barrier that busy-waits on
pthread_mutex_trylock, then R rounds of pthread_barrier_wait in the same
run) under each protocol, --reps interleaved rounds, plus the same source
built with plain `cc -pthread` on this machine. Every run's TRYLOCK_RESULT
line, command and load average go to --out FILE (JSON), with the medians
of the trylock time, the barrier time and their ratio per configuration.

  bench/micro/run_trylock_spin.py [--rounds 300] [--reps 3]
      [--protocols sc,hlrc,regc] [--out build/bench-results/trylock_spin.json]
Standard library only.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(cmd, timeout):
    load = loadavg()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        out, status = p.stdout, p.returncode
    except subprocess.TimeoutExpired:
        out, status = "", "timeout"
    m = re.search(r"TRYLOCK_RESULT (\{.*\})", out)
    ok = status == 0 and "PASS program trylock_spin" in out and m is not None
    return {"cmd": cmd, "status": status, "ok": ok, "load": load, "result": json.loads(m.group(1)) if m else None}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--protocols", default="sc,hlrc,regc")
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    out = a.out or os.path.join(a.build, "bench-results", "trylock_spin.json")
    os.makedirs(os.path.dirname(out), exist_ok=True)

    native = os.path.join(tempfile.mkdtemp(), "trylock_spin_pthreads")
    subprocess.run(["cc", "-O2", "-pthread", "-o", native, os.path.join(REPO, "tests", "program", "trylock_spin.c")],
                   check=True)
    configs = {"pthreads": [native, str(a.rounds), "4"]}
    for p in a.protocols.split(","):
        configs[p] = [os.path.join(a.build, "bin", "agorarun"), "-n", "2", "--timeout", str(a.timeout), "--protocol",
                      p, "--threads-per-rank", "2", os.path.join(a.build, "bin", "agora-trylock-spin"),
                      str(a.rounds), "4"]
    runs = []
    for rep in range(a.reps):
        for name, cmd in configs.items():
            r = run(cmd, a.timeout + 30)
            r["config"], r["rep"] = name, rep
            runs.append(r)
            res = r["result"] or {}
            print(f"{name:9s} rep {rep}: ok={r['ok']} trylock {res.get('trylock_s', float('nan')):.3f} s, "
                  f"pthread_barrier_wait {res.get('barrier_s', float('nan')):.3f} s (load {r['load']})", flush=True)
    summary = {}
    for name in configs:
        good = [r["result"] for r in runs if r["config"] == name and r["ok"]]
        if not good:
            summary[name] = {"ok_runs": 0}
            continue
        t = statistics.median(g["trylock_s"] for g in good)
        b = statistics.median(g["barrier_s"] for g in good)
        summary[name] = {"ok_runs": len(good), "trylock_s": t, "barrier_s": b,
                         "ratio": statistics.median(g["trylock_s"] / g["barrier_s"] for g in good)}
    with open(out, "w") as f:
        json.dump({"rounds": a.rounds, "reps": a.reps, "summary": summary, "runs": runs}, f, indent=1)
    print(json.dumps(summary, indent=1))
    print("wrote", out)
    return 0 if all(s.get("ok_runs") for s in summary.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
