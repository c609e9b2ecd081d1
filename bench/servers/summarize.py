#!/usr/bin/env python3
"""Markdown tables of bench/servers/run.py results: per program and design,
the median and the minimum time on the dual and the busy core, the busy/dual
ratio of each, the job's median CPU seconds, and the exact counts (fetch).

Usage: summarize.py RESULT.json..."""
import json
import statistics
import sys


def table(path):
    d = json.load(open(path))
    cfg = d["config"]
    designs = cfg.get("designs", "thread,servers").split(",")
    out = [f"### {path.split('/')[-1]}", "",
           f"C={cfg['compute']} compute ranks, M={cfg['servers']} server(s), protocol {cfg['protocol']}, "
           f"EP M={cfg['ep_m']}, fetch {cfg['fetch_pages']} pages x {cfg['fetch_iters']} iterations, "
           f"{cfg['repeats']} interleaved repeats per cell; {d['cpus']} CPUs.",
           f"uptime before: `{d['uptime_before']}`; after: `{d['uptime_after']}`", "",
           "| program | design | dual median s | busy median s | **busy/dual (medians)** | dual min s | busy min s "
           "| **busy/dual (minima)** | job CPU s dual / busy | fetched pages, messages, bytes (compute ranks, one run) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for p in cfg["programs"].split(","):
        for des in designs:
            cells = {}
            for c in ("dual", "busy"):
                runs = [x for x in d["runs"] if (x["design"], x["program"], x["condition"]) == (des, p, c)]
                t = [x["time_s"] for x in runs]
                cpu = [x["job_cpu_s"] for x in runs if "job_cpu_s" in x]
                cells[c] = (statistics.median(t), min(t), statistics.median(cpu) if cpu else float("nan"), runs[0])
            counts = ""
            if "pages_fetched" in cells["dual"][3]:
                r = cells["dual"][3]
                counts = f"{r['pages_fetched']}, {r['messages_sent']}, {r['bytes_sent']}"
            out.append(f"| {p} | {des} | {cells['dual'][0]:.3f} | {cells['busy'][0]:.3f} | "
                       f"**{cells['busy'][0] / cells['dual'][0]:.2f}** | {cells['dual'][1]:.3f} | {cells['busy'][1]:.3f} | "
                       f"**{cells['busy'][1] / cells['dual'][1]:.2f}** | {cells['dual'][2]:.2f} / {cells['busy'][2]:.2f} | "
                       f"{counts} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    print("\n".join(table(p) for p in sys.argv[1:]))
