#!/usr/bin/env python3
"""Memory servers vs the service thread under light and heavy DSM load, on a
dual and a busy core (Wong & Rendell §IV, table II and III).

Designs:
  thread   today's default: C ranks, each homing its share of global memory
           and served by its service thread (agorarun -n C); misses read
           pages one-sided (AGORA_FETCH=auto: MPI RMA, no home CPU)
  thread-msg  the same with AGORA_FETCH=messages: every miss is served by the
           home's service thread (or its waiting thread), as Wong & Rendell's
           polling DSM served them
  servers  C compute ranks plus M memory servers that home all global memory
           and are driven by messages only (agorarun -n C+M --memory-servers M)
  servers-block  the same with AGORA_WAIT=block: a compute rank waiting for a
           page sleeps instead of polling, leaving its CPU to the server
Programs:
  ep       bench_ep (NAS EP): light load, only a final all-reduce
  fetch    bench_servers_fetch: heavy load, every rank re-reads every page of
           a cyclically placed array each iteration ((C-1)/C fetched)
Conditions (this machine has 2 CPUs; Wong & Rendell's node had 2 cores):
  dual     the workers (each rank's program thread) pinned to CPU 0
           (BENCH_PIN_CPU=0); service threads and servers may use any CPU,
           so CPU 1 is spare
  busy     the same, plus a core filler (an infinite loop) pinned to CPU 1
Every (design, program, condition) is run REPEATS times, interleaved (one of
each per round, in an order that rotates), and the median time is reported
with the busy/dual ratio per design and program, and the median CPU seconds
of the whole job (RUSAGE_CHILDREN: every rank and server, mpirun): the work
is the same in every design, so differences are what each design's service
costs. `uptime` is recorded with every run. Output: one JSON file (--out).

Usage: run.py --build BUILD [--repeats 5] [--compute 2] [--servers 1]
              [--protocol hlrc] [--ep-m 25] [--fetch-pages 1024]
              [--fetch-iters 40] [--designs thread,thread-msg,servers]
              [--programs ep,fetch] [--out FILE]"""
import argparse
import json
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import time


def uptime():
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def start_filler(cpu):
    # A "small group of instructions in an infinite loop" (Wong & Rendell), pinned.
    return subprocess.Popen(["taskset", "-c", str(cpu), "sh", "-c", "while :; do :; done"])


def run_once(args, design, program, condition):
    agorarun = os.path.join(args.build, "bin", "agorarun")
    n = args.compute + (args.servers if design.startswith("servers") else 0)
    cmd = [agorarun, "-n", str(n), "--timeout", str(args.timeout), "--protocol", args.protocol]
    if design.startswith("servers"):
        cmd += ["--memory-servers", str(args.servers)]
    if design == "servers-block":
        cmd += ["--wait", "block"]
    if design == "thread-msg":
        cmd += ["--fetch", "messages"]
    if program == "ep":
        cmd += [os.path.join(args.build, "bin", "bench_ep"), "-m", str(args.ep_m)]
    else:
        cmd += [os.path.join(args.build, "bin", "bench_servers_fetch"), str(args.fetch_pages),
                str(args.fetch_iters)]
    env = dict(os.environ, BENCH_PIN_CPU="0")
    filler = start_filler(1) if condition == "busy" else None
    try:
        t0 = time.monotonic()
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.timeout + 30)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        wall = time.monotonic() - t0
    finally:
        if filler:
            filler.kill()
            filler.wait()
    if out.returncode != 0:
        sys.exit(f"failed ({out.returncode}): {' '.join(cmd)}\n{out.stdout}\n{out.stderr}")
    # CPU of the whole job (every rank and server, mpirun, the launcher; the
    # filler is not waited for until after): the same work in every design,
    # so the differences are what each design's service costs.
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    rec = {"design": design, "program": program, "condition": condition, "ranks": n, "wall_s": wall,
           "job_cpu_s": cpu}
    if program == "ep":
        m = re.search(r"time=([0-9.]+) s", out.stdout)
        if not m or "VALIDATION FAILED" in out.stdout + out.stderr:
            sys.exit(f"ep output not understood or invalid:\n{out.stdout}\n{out.stderr}")
        rec["time_s"] = float(m.group(1))
    else:
        line = next(l for l in out.stdout.splitlines() if l.startswith("{"))
        d = json.loads(line)
        if not d["valid"]:
            sys.exit(f"fetch invalid:\n{out.stdout}\n{out.stderr}")
        rec.update(time_s=d["time_s"], pages_fetched=d["pages_fetched"], messages_sent=d["messages_sent"],
                   bytes_sent=d["bytes_sent"])
    return rec


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", required=True)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--compute", type=int, default=2)
    ap.add_argument("--servers", type=int, default=1)
    ap.add_argument("--protocol", default="hlrc")
    ap.add_argument("--ep-m", type=int, default=25)
    ap.add_argument("--fetch-pages", type=int, default=1024)
    ap.add_argument("--fetch-iters", type=int, default=40)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--programs", default="ep,fetch")
    ap.add_argument("--designs", default="thread,thread-msg,servers")
    ap.add_argument("--out", default="servers.json")
    args = ap.parse_args()
    # Killed (SIGTERM): leave no core filler behind (the finally in run_once).
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("run.py: terminated"))

    designs = args.designs.split(",")
    variants = [(d, p, c) for p in args.programs.split(",") for d in designs for c in ("dual", "busy")]
    result = {"config": vars(args), "cpus": os.cpu_count(), "uptime_before": uptime(), "runs": []}
    for r in range(args.repeats):
        k = r % len(variants)
        for v in variants[k:] + variants[:k]:  # rotate the order each round
            rec = run_once(args, *v)
            rec["round"] = r
            rec["uptime"] = uptime()
            result["runs"].append(rec)
            print(json.dumps(rec), flush=True)
    result["uptime_after"] = uptime()
    summary = []
    for p in args.programs.split(","):
        for d in designs:
            med = {}
            for c in ("dual", "busy"):
                runs = [x for x in result["runs"] if (x["design"], x["program"], x["condition"]) == (d, p, c)]
                med[c] = statistics.median(x["time_s"] for x in runs)
                med["cpu_" + c] = statistics.median(x["job_cpu_s"] for x in runs)
                counts = {k: runs[0][k] for k in ("pages_fetched", "messages_sent", "bytes_sent") if k in runs[0]}
            summary.append({"program": p, "design": d, "dual_s": med["dual"], "busy_s": med["busy"],
                            "busy_over_dual": med["busy"] / med["dual"], "job_cpu_dual_s": med["cpu_dual"],
                            "job_cpu_busy_s": med["cpu_busy"], "runs_per_cell": len(runs), **counts})
    result["summary"] = summary
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)
    print(f"{'program':8} {'design':10} {'dual s':>9} {'busy s':>9} {'busy/dual':>9} {'cpu dual':>9} {'cpu busy':>9}")
    for s in summary:
        print(f"{s['program']:8} {s['design']:10} {s['dual_s']:9.3f} {s['busy_s']:9.3f} {s['busy_over_dual']:9.3f}"
              f" {s['job_cpu_dual_s']:9.3f} {s['job_cpu_busy_s']:9.3f}")


if __name__ == "__main__":
    main()
