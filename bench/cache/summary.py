#!/usr/bin/env python3
"""Markdown tables from bench/cache/fig4.py's JSON: per protocol and ranks,
bandwidth (medians) with the data fitting the cache, with twice the data,
and unbounded; their ratio; and the exact counts per rank and iteration.

Usage: bench/cache/summary.py FIG4.json [MORE.json ...]"""
import json
import sys


def table(doc):
    rs = doc["results"]
    out = ["stream_triad --remote 1, %d rounds, %d iterations each; cache %d MiB per rank, data per rank %d MiB (fits) "
           "or %d MiB (2x); load average (1/5/15 min) before each round and at the end: %s" % (
               doc["rounds"], rs[0]["iterations"], doc["cache_bytes"] >> 20, doc["data_per_rank_fits"] >> 20,
               2 * doc["data_per_rank_fits"] >> 20, "; ".join("/".join(u) for u in doc["loadavg"])), "",
           "| protocol | ranks | policy | frames | fits GB/s | 2x GB/s | fits / 2x | 2x unbounded GB/s | 2x: faults per rank-iteration (read+write) | pages fetched | prefetched | evictions | write-backs | bytes moved per rank-iteration (messages + one-sided) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rs:  # before the frame pool: frames given back at eviction
        r.setdefault("frames", "-" if r["cache"] == 0 else "discard")
    keys = []
    for r in rs:
        k = (r["protocol"], r["ranks"], r["policy"], r["frames"])
        if r["policy"] != "-" and k not in keys:
            keys.append(k)
    for protocol, ranks, policy, frames in keys:
        f = [r for r in rs if (r["protocol"], r["ranks"], r["policy"], r["frames"]) == (protocol, ranks, policy, frames)]
        fits = [r for r in f if r["size"] == "fits"][0]
        spill = [r for r in f if r["size"] == "2x"][0]
        unb = [r for r in rs if r["protocol"] == protocol and r["ranks"] == ranks and r["cache"] == 0][0]
        per = ranks * spill["iterations"]
        k = spill["kernel_stats"]
        out.append("| %s | %d%s | %s | %s | %.3f | %.3f | %.2f | %.3f | %.0f | %.0f | %.0f | %.0f | %.0f | %.1f MiB |" % (
            protocol, ranks, " (oversubscribed)" if ranks > 2 else "", policy, frames, fits["gbs_median"],
            spill["gbs_median"], fits["gbs_median"] / spill["gbs_median"], unb["gbs_median"],
            (k["read_faults"] + k["write_faults"]) / per, k["pages_fetched"] / per, k["pages_prefetched"] / per,
            k["cache_evictions"] / per, k["cache_writebacks"] / per,
            (k["bytes_sent"] + k["one_sided_bytes"]) / per / 2**20))
    if "frame_cost" in doc:
        c = doc["frame_cost"]["us_per_page"]
        extra = c["install_populated"] + c["evict"] - c["install_resident"]
        out += ["", "Kernel floor (bench_frame_cost, no MPI): with frames given back, a spilled page costs %.2f us more than a cached one "
                "(install into a given-back frame %.2f us, populated first, + evict %.2f us, against %.2f us into a "
                "resident frame). The least fits/2x this allows, per protocol and ranks, from the fits time per page "
                "of data t: (t + %.2f) / t:" % (extra, c["install_populated"], c["evict"], c["install_resident"], extra)]
        if "install_pooled" in c:
            out.append("With the frame pool (AGORA_CACHE_FRAMES=pool: frames that stay allocated, mapped per run; "
                       "%.2f + %.2f us) a spilled page costs %.2f us more (the floors of the pool rows below)." % (
                           c["install_pooled"], c["evict_pooled"],
                           c["install_pooled"] + c["evict_pooled"] - c["install_resident"]))
        pooled = c["install_pooled"] + c["evict_pooled"] - c["install_resident"] if "install_pooled" in c else None
        for protocol, ranks, policy, frames in keys:
            fits = [r for r in rs if (r["protocol"], r["ranks"], r["policy"], r["frames"], r["size"]) ==
                    (protocol, ranks, policy, frames, "fits")][0]
            if ranks < 2:
                continue
            pages = doc["data_per_rank_fits"] / 4096
            t = fits["time_s_median"] / fits["iterations"] / pages * 1e6
            charge = pooled if frames == "pool" and pooled is not None else extra
            out.append("- %s %d ranks, frames %s: t = %.2f us, floor %.2f" % (protocol, ranks, frames, t,
                                                                               (t + charge) / t))
    return "\n".join(out)


for path in sys.argv[1:]:
    print(table(json.load(open(path))))
    print()
