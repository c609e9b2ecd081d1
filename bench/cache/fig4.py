#!/usr/bin/env python3
"""Samhita/RegC figure 4 on Agora: STREAM triad weak scaling through a bounded
cache of remote pages (docs/cache.md).

Every worker works on the elements its neighbour homes (stream_triad
--remote 1), so all its data is remote and streams through its cache. Per
rank: DATA_FITS bytes (3 arrays) with AGORA_CACHE=CACHE (fits), twice that
with the same cache (spills: every iteration refetches everything), and the
larger size without AGORA_CACHE (unbounded, for reference). 1 rank has no
remote page (its data is its own); 4 ranks on this 2-core machine are
oversubscribed. Runs are interleaved (every variant once per round) and
each figure is the median of ROUNDS rounds; the counts are exact.

Usage: bench/cache/fig4.py BUILD_DIR OUT.json [--rounds 3] [--iterations 10]
       [--ranks 1,2,4] [--protocols regc,hlrc] [--policies clock] [--frames pool]

--frames pool,discard runs the bounded variants both ways (AGORA_CACHE_FRAMES):
the frame pool, and frames given back at eviction (the design before it).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

CACHE = 16 << 20
DATA_FITS = 15 << 20  # 3 arrays of doubles per rank, a little under the cache
STATS = ["read_faults", "write_faults", "pages_fetched", "pages_prefetched", "bytes_sent", "one_sided_bytes",
         "cache_evictions", "cache_writebacks", "cache_writeback_bytes", "diff_bytes", "cache_frames_pooled",
         "cache_frames_unpooled"]


def run(build, ranks, protocol, n, iterations, cache, policy, frames):
    cmd = [os.path.join(build, "bin", "agorarun"), "-n", str(ranks), "--timeout", "600", "--protocol", protocol]
    if cache:
        cmd += ["--cache", str(cache), "--cache-policy", policy, "--cache-frames", frames]
    cmd += ["--", os.path.join(build, "bin", "bench_stream_triad"), "-n", str(n), "-i", str(iterations),
            "--remote", "1"]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=700)
    for line in out.stdout.splitlines():
        if line.startswith("BENCH_RESULT "):
            r = json.loads(line[len("BENCH_RESULT "):])
            if not r["valid"]:
                sys.exit("invalid result: " + line)
            return r
    sys.exit("no result from %s:\n%s\n%s" % (" ".join(cmd), out.stdout, out.stderr))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("build")
    ap.add_argument("out")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--protocols", default="regc,hlrc")
    ap.add_argument("--policies", default="clock")
    ap.add_argument("--frames", default="pool")
    a = ap.parse_args()
    variants = []
    for protocol in a.protocols.split(","):
        for ranks in [int(r) for r in a.ranks.split(",")]:
            n_fits = DATA_FITS // 24 * ranks
            for policy in a.policies.split(","):
                for frames in a.frames.split(","):
                    for size, n in (("fits", n_fits), ("2x", 2 * n_fits)):
                        variants.append(dict(protocol=protocol, ranks=ranks, size=size, n=n, cache=CACHE,
                                             policy=policy, frames=frames))
            variants.append(dict(protocol=protocol, ranks=ranks, size="2x", n=2 * n_fits, cache=0, policy="-",
                                 frames="-"))
    runs = {i: [] for i in range(len(variants))}
    uptimes = [open("/proc/loadavg").read().split()[:3]]
    for rnd in range(a.rounds):
        for i, v in enumerate(variants):
            r = run(a.build, v["ranks"], v["protocol"], v["n"], a.iterations, v["cache"], v["policy"], v["frames"])
            runs[i].append(r)
            print("round %d %s %d ranks %s cache=%s %s %s: %.3f GB/s" % (rnd, v["protocol"], v["ranks"], v["size"],
                  v["cache"] or "unbounded", v["policy"], v["frames"], r["figure"]), flush=True)
        uptimes.append(open("/proc/loadavg").read().split()[:3])
    results = []
    for i, v in enumerate(variants):
        rs = runs[i]
        med = statistics.median(r["figure"] for r in rs)
        counts = {k: rs[0]["kernel_stats"].get(k, 0) for k in STATS}
        results.append(dict(v, gbs_median=med, gbs_runs=[r["figure"] for r in rs],
                            time_s_median=statistics.median(r["time_s"] for r in rs),
                            iterations=a.iterations, kernel_stats=counts))
    # The kernel's charge per page for a frame given back and taken again
    # (bench/cache/frame_cost.c): the floor under every spilled page.
    floor = json.loads(subprocess.run([os.path.join(a.build, "bin", "bench_frame_cost"), "16384", "7"],
                                      capture_output=True, text=True, check=True).stdout)
    doc = dict(benchmark="stream_triad --remote 1 (Samhita/RegC figure 4)", cache_bytes=CACHE,
               data_per_rank_fits=DATA_FITS, rounds=a.rounds, loadavg=uptimes, frame_cost=floor,
               when=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), results=results)
    with open(a.out, "w") as f:
        json.dump(doc, f, indent=1)
    # The summary: per protocol and ranks, fits vs 2x (the paper's ratio).
    print("\nprotocol ranks | fits GB/s | 2x GB/s | fits/2x | 2x unbounded GB/s")
    for protocol in a.protocols.split(","):
        for ranks in [int(r) for r in a.ranks.split(",")]:
            for policy in a.policies.split(","):
                for frames in a.frames.split(","):
                    f = [r for r in results if r["protocol"] == protocol and r["ranks"] == ranks and
                         r["policy"] == policy and r["frames"] == frames]
                    fits = [r for r in f if r["size"] == "fits"][0]["gbs_median"]
                    spill = [r for r in f if r["size"] == "2x"][0]["gbs_median"]
                    unb = [r for r in results if r["protocol"] == protocol and r["ranks"] == ranks and r["cache"] == 0]
                    print("%s %d %s %s | %.3f | %.3f | %.2f | %.3f" % (protocol, ranks, policy, frames, fits, spill,
                                                                      fits / spill, unb[0]["gbs_median"]))


if __name__ == "__main__":
    main()
