#!/usr/bin/env python3
"""bench/gptr/run_gptr.py -- run the global-pointer benchmarks and compare the schemes.

One invocation runs, at --ranks ranks (default 2):
  micro   gptr_micro under every scheme (direct, ordernocache, ordercache,
          sequencer, swcc) x pattern (sequential, random, wander) x width
          (8, 16, 32, 64 bits)
  sweep   gptr_micro, ordercache, wander, 32-bit, over AGORA_GPTR_INDEX_BITS
          (cache size), with the time of a barrier after the run (Themis
          figure 5)
  matmul  gptr_matmul under direct, ordercache (default and 1 MiB of lines)
          and swcc with blocks of 8, 64, 512 and 4096 bytes; and the
          page-based bench_matmul --variant naive of the same n under
          --protocol hlrc
  em3d    gptr_em3d likewise, and bench_em3d under hlrc with the same nodes
          per rank, degree, remote probability and span (the same graph)
  em3d-local  the same with no remote dependency: no communication, only
          the cost of an access through the API against a plain load
  em3d-paper  the same at SWCC Split-C figure 11's point (512 nodes per rank,
          degree 40, 24 of 40 dependencies remote)
  cg      gptr_cg under direct, ordercache, swcc; bench_cg under hlrc, same K
Every configuration is run --reps times (separate processes); figures are
medians (gptr_micro also repeats each measurement --micro-reps times inside a
process: its figure is the median of all repetitions).

Writes to --out DIR (default build/bench-results/gptr-YYYYmmdd-HHMMSS, as bench/run):
  results.jsonl  one JSON object per run: the program's own result line
                 (GPTR_RESULT / BENCH_RESULT) plus the command, the exit
                 status, wall time and the load average at its start
  summary.md     the tables (also printed), with the goals:
                   wander: ordercache >= 3x faster than direct
                   matmul, em3d: best swcc within 1.5x of hlrc, >= 5x faster than direct
  logs/          stdout and stderr of every run

--quick: small sizes, one repetition (a smoke test of about a minute).
Standard library only.
"""

import argparse
import datetime
import json
import os
import shutil
import shlex
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

SCHEMES = ["direct", "ordernocache", "ordercache", "sequencer", "swcc"]
PATTERNS = ["sequential", "random", "wander"]
WIDTHS = [8, 16, 32, 64]
SWCC_BLOCKS = [8, 64, 512, 4096]
SWEEP_INDEX_BITS = [0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 14]

# sizes: (full, quick)
SIZES = {
    "micro_reps": (21, 5),
    "sweep_bits": (SWEEP_INDEX_BITS, [0, 2, 4, 6, 10]),
    "sweep_barriers": (256, 64),
    "matmul": ({"n": 128, "iters": 5, "hlrc_iters": 20}, {"n": 64, "iters": 1, "hlrc_iters": 5}),
    "em3d": ({"nodes": 10240, "degree": 20, "remote": 0.1, "span": 1, "iters": 10, "hlrc_iters": 50},
             {"nodes": 2048, "degree": 20, "remote": 0.1, "span": 1, "iters": 3, "hlrc_iters": 10}),
    # no remote dependency: no communication at all, what is left is the cost
    # of an access through the API against a load
    "em3d-local": ({"nodes": 10240, "degree": 20, "remote": 0.0, "span": 1, "iters": 10, "hlrc_iters": 50},
                   {"nodes": 2048, "degree": 20, "remote": 0.0, "span": 1, "iters": 3, "hlrc_iters": 10}),
    "em3d-paper": ({"nodes": 512, "degree": 40, "remote": 0.6, "span": 1, "iters": 10, "hlrc_iters": 50},
                   None),
    "cg": ({"k": 256, "iters": 20, "hlrc_iters": 50}, {"k": 64, "iters": 5, "hlrc_iters": 10}),
}

GOAL_WANDER = 3.0
GOAL_HLRC = 1.5
GOAL_DIRECT = 5.0


def loadavg():
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return None


def runnable_threads():
    """Threads runnable on the machine now (/proc/loadavg's 4th field; counts the reader)."""
    try:
        with open("/proc/loadavg") as f:
            return int(f.read().split()[3].split("/")[0])
    except (OSError, ValueError, IndexError):
        return None


def wait_quiet(limit_s):
    """Waits (up to limit_s) until no process of another job has been running
    for a second: the machine is shared, and a run beside another job
    measures the job. Returns (seconds waited, runnable threads at the end)."""
    t0 = time.monotonic()
    calm = 0
    while limit_s > 0 and time.monotonic() - t0 < limit_s:
        calm = calm + 1 if foreign_busy(-1) == 0 else 0
        if calm >= 5:
            break
        time.sleep(0.2)
    return round(time.monotonic() - t0, 1), runnable_threads()


def foreign_busy(own_session):
    """Processes of other jobs running on a CPU now (state R, another session
    than the run's and than this script's)."""
    n = 0
    me = os.getpid()
    for d in os.listdir("/proc"):
        if not d.isdigit() or int(d) == me:
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rfind(")") + 2:].split()
        # (session 0: kernel threads, runnable for a moment all the time)
        if len(fields) > 3 and fields[0] == "R" and int(fields[3]) not in (own_session, 0):
            n += 1
    return n


class BusyWatch(threading.Thread):
    """Samples, while a run goes, how often another job was running beside it."""

    def __init__(self, session):
        super().__init__(daemon=True)
        self.session, self.samples, self.busy = session, 0, 0
        self.stop = threading.Event()

    def run(self):
        while not self.stop.wait(0.25):
            self.samples += 1
            self.busy += foreign_busy(self.session) > 0

    def fraction(self):
        self.stop.set()
        self.join()
        return round(self.busy / self.samples, 3) if self.samples else 0.0


def git_commit():
    try:
        out = subprocess.run(["git", "-C", REPO, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                             timeout=10)
        dirty = subprocess.run(["git", "-C", REPO, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=10)
        return out.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def kill_tree(proc):
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


class Runner:
    def __init__(self, args):
        self.args = args
        self.bin = os.path.join(os.path.abspath(args.build), "bin")
        self.out = args.out
        self.logs = os.path.join(self.out, "logs")
        os.makedirs(self.logs, exist_ok=True)
        self.results = open(os.path.join(self.out, "results.jsonl"), "a")
        self.records = []
        self.prog_dir = self.bin
        self.current = None  # the run going on (ended if the runner is stopped)
        self.count = 0
        self.failures = []
        self.meta = {"commit": git_commit(), "host": socket.gethostname(), "ranks": args.ranks,
                     "quick": args.quick}

    def snapshot(self, programs):
        """Copies the programs into a temporary directory (removed at the end)
        and runs them from there: the build directory is shared, and a rebuild
        during the runs would change them."""
        snap = tempfile.mkdtemp(prefix="run_gptr-bin-")
        for p in programs:
            shutil.copy2(os.path.join(self.bin, p), os.path.join(snap, p))
        self.prog_dir = snap

    def shown(self, cmd):
        """cmd as the command to type: the programs from the build (of which
        the runs used copies), paths under the repository relative to it."""
        out = []
        for a in cmd:
            if a.startswith(self.prog_dir + os.sep):
                a = os.path.join(self.bin, os.path.basename(a))
            if a.startswith(REPO + os.sep):
                a = os.path.relpath(a, REPO)
            out.append(shlex.quote(a))
        return " ".join(out)

    def agorarun(self, flags, program, prog_args):
        return ([os.path.join(self.bin, "agorarun"), "-n", str(self.args.ranks), "--timeout",
                 str(self.args.timeout)] + flags + ["--", os.path.join(self.prog_dir, program)] + prog_args)

    def run(self, experiment, label, cmd, tag):
        """Runs cmd once; returns the result objects it printed (GPTR_RESULT or BENCH_RESULT lines)."""
        self.count += 1
        base = os.path.join(self.logs, "%04d-%s" % (self.count, label.replace("/", "_").replace(" ", "_")))
        waited, runnable = wait_quiet(self.args.quiet_wait)
        load = loadavg()
        t0 = time.monotonic()
        sys.stderr.write("[%4d] %-58s" % (self.count, label[:58]))
        sys.stderr.flush()
        with open(base + ".out", "w+") as out, open(base + ".err", "w+") as err:
            proc = subprocess.Popen(cmd, stdout=out, stderr=err, start_new_session=True)
            self.current = proc
            watch = BusyWatch(proc.pid)
            watch.start()
            timed_out = False
            try:
                proc.wait(timeout=self.args.timeout + 30)
            except subprocess.TimeoutExpired:
                timed_out = True
                kill_tree(proc)
            try:
                os.killpg(proc.pid, signal.SIGKILL)  # ranks left behind would skew later runs
            except (ProcessLookupError, PermissionError):
                pass
            busy = watch.fraction()
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
        wall = time.monotonic() - t0
        rc = proc.returncode
        results = []
        for line in stdout.splitlines():
            for prefix in ("GPTR_RESULT ", "BENCH_RESULT "):
                if line.startswith(prefix):
                    try:
                        results.append(json.loads(line[len(prefix):]))
                    except ValueError:
                        pass
        ok = rc == 0 and not timed_out and results and all(r.get("valid", True) for r in results)
        sys.stderr.write(" %6.1fs%s%s %s\n" % (wall, " (waited %.0fs for quiet)" % waited if waited >= 1.5 else "",
                                                " (another job ran %.0f%% of it)" % (100 * busy) if busy else "",
                                               "ok" if ok else "FAILED (rc %s%s)" % (rc, ", timed out" if timed_out else "")))
        if not ok:
            errl = [l for l in stderr.splitlines() if l.strip()][-4:]
            self.failures.append({"label": label, "command": self.shown(cmd), "rc": rc,
                                  "timed_out": timed_out, "stderr_tail": errl, "log": base})
        rec_base = {"experiment": experiment, "label": label, "tag": tag, "command": self.shown(cmd),
                    "rc": rc, "timed_out": timed_out, "wall_s": round(wall, 3), "loadavg": load, "quiet_wait_s": waited,
                    "runnable_at_start": runnable, "busy_fraction": busy, "ok": bool(ok)}
        rec_base.update(self.meta)
        if not results:
            results = [{}]
        for r in results:
            rec = dict(rec_base)
            rec["result"] = r
            self.results.write(json.dumps(rec) + "\n")
            self.records.append(rec)
        self.results.flush()
        return results if ok else []


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


# ----------------------------------------------------------------- experiments --

def run_micro(R, reps, micro_reps):
    for rep in range(reps):
        for s in SCHEMES:
            cmd = R.agorarun(["--gptr", s], "gptr_micro",
                             ["--pattern", "all", "--width", "all", "--reps", str(micro_reps), "--seed", str(1 + rep)])
            R.run("micro", "micro %s rep %d" % (s, rep), cmd, {"scheme": s})


def run_sweep(R, reps, bits_list, barriers, micro_reps):
    for rep in range(reps):
        for bits in bits_list:
            cmd = R.agorarun(["--gptr", "ordercache", "--gptr-index-bits", str(bits)], "gptr_micro",
                             ["--pattern", "wander", "--width", "32", "--reps", str(micro_reps), "--seed",
                              str(1 + rep), "--barriers", str(barriers)])
            R.run("sweep", "sweep index_bits=%d rep %d" % (bits, rep), cmd, {"index_bits": bits})


def gptr_configs():
    """(tag, agorarun flags) of the schemes matmul/em3d/cg run under."""
    # ordercache at its defaults (2^(2+10) lines of 64 bytes; with 2 ranks only
    # half the lines are used) and with 1 MiB of lines (what the remote
    # arrays need: fewer conflict misses)
    out = [("direct", ["--gptr", "direct"]), ("ordercache", ["--gptr", "ordercache"]),
           ("ordercache_1MiB", ["--gptr", "ordercache", "--gptr-rank-bits", "1", "--gptr-index-bits", "13"])]
    for b in SWCC_BLOCKS:
        out.append(("swcc_%d" % b, ["--gptr", "swcc", "--gptr-block", str(b)]))
    return out


def run_matmul(R, reps, sz):
    for rep in range(reps):
        for tag, flags in gptr_configs():
            cmd = R.agorarun(flags, "gptr_matmul", ["-n", str(sz["n"]), "-i", str(sz["iters"])])
            R.run("matmul", "matmul %s n=%d rep %d" % (tag, sz["n"], rep), cmd, {"config": tag})
        cmd = R.agorarun(["--protocol", "hlrc"], "bench_matmul",
                         ["--variant", "naive", "-n", str(sz["n"]), "-i", str(sz["hlrc_iters"])])
        R.run("matmul", "matmul hlrc n=%d rep %d" % (sz["n"], rep), cmd, {"config": "hlrc"})


def em3d_args(sz, page_based):
    a = ["-n", str(sz["nodes"]), "-d", str(sz["degree"]), "-r", str(sz["remote"]), "-s", str(sz["span"]),
         "-i", str(sz["hlrc_iters"] if page_based else sz["iters"])]
    return a


def run_em3d(R, reps, sz, experiment, configs=None):
    for rep in range(reps):
        for tag, flags in configs or gptr_configs():
            cmd = R.agorarun(flags, "gptr_em3d", em3d_args(sz, False))
            R.run(experiment, "%s %s rep %d" % (experiment, tag, rep), cmd, {"config": tag})
        cmd = R.agorarun(["--protocol", "hlrc"], "bench_em3d", em3d_args(sz, True))
        R.run(experiment, "%s hlrc rep %d" % (experiment, rep), cmd, {"config": "hlrc"})


def run_cg(R, reps, sz):
    for rep in range(reps):
        for tag, flags in [("direct", ["--gptr", "direct"]), ("ordercache", ["--gptr", "ordercache"]),
                           ("swcc_64", ["--gptr", "swcc", "--gptr-block", "64"])]:
            cmd = R.agorarun(flags, "gptr_cg", ["-n", str(sz["k"]), "-i", str(sz["iters"])])
            R.run("cg", "cg %s K=%d rep %d" % (tag, sz["k"], rep), cmd, {"config": tag})
        cmd = R.agorarun(["--protocol", "hlrc"], "bench_cg", ["-n", str(sz["k"]), "-i", str(sz["hlrc_iters"])])
        R.run("cg", "cg hlrc K=%d rep %d" % (sz["k"], rep), cmd, {"config": "hlrc"})


# --------------------------------------------------------------------- summary --

def fmt(x, f="%.3f"):
    return "-" if x is None else f % x


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(str(c) for c in r) + " |")
    return "\n".join(lines)


CLEAN = 0.1  # a run is clean if another job ran beside it at most this fraction of its time


def ok_records(records, experiment, key):
    """The good runs of an experiment; of each configuration (key(record))
    only the clean ones if it has any. Also returns the configurations that
    had none (their figures are marked)."""
    groups = {}
    for r in records:
        if r["experiment"] == experiment and r["ok"]:
            groups.setdefault(key(r), []).append(r)
    out, noisy = [], set()
    for k, rs in groups.items():
        clean = [r for r in rs if (r.get("busy_fraction") or 0) <= CLEAN]
        if clean:
            out += clean
        else:
            out += rs
            noisy.add(k)
    return out, noisy


def summarize_micro(records):
    """Per scheme, pattern, width: median time per access over all repetitions, messages, hit rate."""
    cells = {}
    recs, noisy = ok_records(records, "micro", lambda r: r["tag"]["scheme"])
    for r in recs:
        res = r["result"]
        key = (res["scheme"], res["pattern"], res["width"])
        c = cells.setdefault(key, {"times": [], "req": [], "msg": [], "hit": [], "stalls": []})
        c["times"] += res["time_per_access_us_reps"]
        c["req"].append(res["requests_per_access"])
        c["msg"].append(res["messages_per_access"])
        c["hit"].append(res["hit_rate"])
        c["stalls"].append(res["stalls_per_rep"])
    out = []
    rows = []
    for pat in PATTERNS:
        for w in WIDTHS:
            row = [pat, w]
            for s in SCHEMES:
                c = cells.get((s, pat, w))
                row.append(fmt(med(c["times"]) if c else None) + ("*" if s in noisy else ""))
            d, oc = cells.get(("direct", pat, w)), cells.get(("ordercache", pat, w))
            row.append(fmt(med(d["times"]) / med(oc["times"]) if d and oc else None, "%.2fx"))
            rows.append(row)
    out.append("### Microbenchmark: time per access (us, median over all repetitions)\n")
    if noisy:
        out.append("(* every run of the scheme had another job running beside it)\n")
    out.append(table(["pattern", "bits"] + SCHEMES + ["direct/ordercache"], rows))
    rows = []
    for pat in PATTERNS:
        for w in WIDTHS:
            row = [pat, w]
            for s in SCHEMES:
                c = cells.get((s, pat, w))
                if not c:
                    row.append("-")
                    continue
                txt = "%.3f / %.3f" % (med(c["req"]), med(c["msg"]))
                if s in ("ordercache", "swcc"):
                    txt += " / %.3f" % med(c["hit"])
                if s in ("ordernocache", "swcc", "ordercache"):
                    txt += " / %.0f" % med(c["stalls"])
                row.append(txt)
            rows.append(row)
    out.append("\n### Microbenchmark: requests / messages per access (all ranks), hit rate, stalls per repetition\n")
    out.append("(direct, sequencer: requests / messages; ordernocache: + stalls; ordercache, swcc: + hit rate + stalls)\n")
    out.append(table(["pattern", "bits"] + SCHEMES, rows))
    goals = []
    for w in WIDTHS:
        d, oc = cells.get(("direct", "wander", w)), cells.get(("ordercache", "wander", w))
        if d and oc:
            ratio = med(d["times"]) / med(oc["times"])
            goals.append(("wander %d-bit: ordercache vs direct" % w, ratio, ">= %.1fx faster" % GOAL_WANDER,
                          ratio >= GOAL_WANDER))
    return "\n".join(out), goals


def summarize_sweep(records):
    cells = {}
    recs, noisy = ok_records(records, "sweep", lambda r: r["tag"]["index_bits"])
    for r in recs:
        res = r["result"]
        key = res["cache"]["index_bits"]
        c = cells.setdefault(key, {"times": [], "hit": [], "req": [], "bar": [], "lines": res["cache"]["lines"],
                                   "bytes": res["cache"]["cache_bytes"]})
        c["times"] += res["time_per_access_us_reps"]
        c["hit"].append(res["hit_rate"])
        c["req"].append(res["requests_per_access"])
        c["bar"].append(res.get("barrier_us"))
    if not cells:
        return ""
    rows = []
    for bits in sorted(cells):
        c = cells[bits]
        rows.append([bits, c["lines"], c["bytes"], fmt(med(c["times"])) + ("*" if bits in noisy else ""),
                     fmt(med(c["hit"]), "%.4f"),
                     fmt(med(c["req"]), "%.4f"), fmt(med(c["bar"]), "%.1f")])
    return ("### Cache-size sweep: ordercache, wander, 32-bit (rank bits 2)\n\n" +
            table(["index bits", "lines", "cache bytes", "us/access", "hit rate", "requests/access",
                   "barrier us"], rows))


def app_time(res):
    """(seconds per iteration, hit rate, misses per iteration) of an application result."""
    prog = res.get("program")
    if prog == "gptr_matmul":
        c = res["counters_timed"]
        return res["time_per_iter_s"], res["hit_rate"], res["misses_per_iter"], c, res.get("first_iter_s")
    if prog in ("gptr_em3d", "gptr_cg"):
        c = res["counters_timed"]
        return (res["time_per_iter_ms"] / 1e3, res["hit_rate"], res["misses_per_iter"], c,
                res["first_iter_ms"] / 1e3)
    if prog in ("matmul", "em3d", "cg"):  # bench_<program> BENCH_RESULT
        return res["time_s"] / res["iterations"], None, None, res.get("kernel_stats"), None
    return None, None, None, None, None


def summarize_app(records, experiment, title):
    cells = {}
    recs, noisy = ok_records(records, experiment, lambda r: r["tag"]["config"])
    for r in recs:
        t, hit, miss, counters, first = app_time(r["result"])
        if t is None:
            continue
        c = cells.setdefault(r["tag"]["config"], {"t": [], "hit": [], "miss": [], "first": [], "counters": [],
                                                  "iters": r["result"].get("iterations") or 1})
        c["t"].append(t)
        c["hit"].append(hit)
        c["miss"].append(miss)
        c["first"].append(first)
        c["counters"].append(counters)
    if not cells:
        return "", []
    hl = med(cells["hlrc"]["t"]) if "hlrc" in cells else None
    dr = med(cells["direct"]["t"]) if "direct" in cells else None
    rows = []
    order = ["direct", "ordercache", "ordercache_1MiB"] + ["swcc_%d" % b for b in SWCC_BLOCKS] + ["hlrc"]
    for tag in order:
        if tag not in cells:
            continue
        c = cells[tag]
        t = med(c["t"])
        cnt = c["counters"][0] or {}
        it = float(c["iters"])
        extra = ""
        if tag != "hlrc" and cnt:
            extra = "req %.0f, msgs %.0f, inv %.0f, nacks %.0f, stalls %.0f" % (
                cnt.get("requests", 0) / it, cnt.get("messages_sent", 0) / it, cnt.get("invalidations", 0) / it,
                cnt.get("nacks", 0) / it, cnt.get("stalls", 0) / it)
        elif tag == "hlrc" and cnt:
            extra = "msgs %.0f, faults %.0f" % (cnt.get("messages_sent", 0) / it,
                                                (cnt.get("read_faults", 0) + cnt.get("write_faults", 0)) / it)
        rows.append([tag + ("*" if tag in noisy else ""), fmt(t * 1e3, "%.3f"),
                     fmt(med(c["first"]) * 1e3 if med(c["first"]) is not None else None, "%.3f"),
                     fmt(med(c["hit"]), "%.5f"), fmt(med(c["miss"]), "%.0f"),
                     fmt(t / hl if hl else None, "%.2f"), fmt(dr / t if dr else None, "%.2f"), len(c["t"]), extra])
    text = ("### %s\n\n" % title +
            table(["config", "ms/iter (median)", "first iter ms", "hit rate", "misses/iter", "time / hlrc",
                   "direct / time", "runs", "per timed iteration, all ranks (one run)"], rows) +
            ("\n\n(* every run of the configuration had another job running beside it)" if noisy else ""))
    goals = []
    swcc = [(med(cells[t]["t"]), t) for t in cells if t.startswith("swcc_")]
    if swcc:
        best_t, best = min(swcc)
        if hl:
            goals.append(("%s: best swcc (%s) vs hlrc" % (experiment, best), best_t / hl,
                          "<= %.1fx hlrc's time" % GOAL_HLRC, best_t / hl <= GOAL_HLRC))
        if dr:
            goals.append(("%s: best swcc (%s) vs direct" % (experiment, best), dr / best_t,
                          ">= %.1fx faster" % GOAL_DIRECT, dr / best_t >= GOAL_DIRECT))
    return text, goals


def summarize(records, sizes_note):
    parts = ["# Global-pointer benchmarks", "", sizes_note, ""]
    goals = []
    t, g = summarize_micro(records)
    if t:
        parts += [t, ""]
    goals += g
    t = summarize_sweep(records)
    if t:
        parts += [t, ""]
    for exp, title in (("matmul", "Naive matrix multiply (gptr_matmul; hlrc: bench_matmul --variant naive)"),
                       ("em3d", "EM3D (gptr_em3d; hlrc: bench_em3d, the same graph)"),
                       ("em3d-local", "EM3D with no remote dependency (the cost of the API's accesses: no communication)"),
                       ("em3d-paper", "EM3D at SWCC Split-C figure 11's point (512 nodes/rank, degree 40, 60% remote)"),
                       ("cg", "CG (gptr_cg, naive v0; hlrc: bench_cg)")):
        t, g = summarize_app(records, exp, title)
        if t:
            parts += [t, ""]
        if exp in ("matmul", "em3d"):  # the goals; the other tables are for reading
            goals += g
    if goals:
        parts.append("### Goals\n")
        parts.append(table(["comparison", "ratio", "goal", "met"],
                           [[n, "%.2f" % r, goal, "yes" if m else "NO"] for n, r, goal, m in goals]))
    return "\n".join(parts) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    ap.add_argument("--build", default=os.path.join(REPO, "build"), help="build directory (default build/)")
    ap.add_argument("--out", help="output directory (default BUILD/bench-results/gptr-<timestamp>)")
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--reps", type=int, help="process repetitions of every configuration (default 3; quick 1)")
    ap.add_argument("--micro-reps", type=int, help="repetitions inside each gptr_micro process (default 21; quick 5)")
    ap.add_argument("--only", default="micro,sweep,matmul,em3d,em3d-local,em3d-paper,cg",
                    help="comma-separated experiments (micro,sweep,matmul,em3d,em3d-local,em3d-paper,cg)")
    ap.add_argument("--quick", action="store_true", help="small sizes, one repetition (smoke test, about a minute)")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per run (agorarun --timeout)")
    ap.add_argument("--quiet-wait", type=float, default=60,
                    help="before each run, wait up to this many seconds until no other job is runnable (default 60)")
    ap.add_argument("--summary-only", metavar="RESULTS_JSONL", nargs="+",
                    help="only print the tables of earlier runs (several files: their runs together)")
    args = ap.parse_args()
    q = 1 if args.quick else 0
    reps = args.reps or (1 if args.quick else 3)
    micro_reps = args.micro_reps or SIZES["micro_reps"][q]

    def size(name):
        return SIZES[name][q]

    note = ("ranks %d; %s; process repetitions %d, gptr_micro repetitions %d per process; matmul n=%d; "
            "em3d %d nodes/rank degree %d remote %g; cg K=%d" %
            (args.ranks, "quick" if args.quick else "full", reps, micro_reps, size("matmul")["n"],
             size("em3d")["nodes"], size("em3d")["degree"], size("em3d")["remote"], size("cg")["k"]))
    if args.summary_only:
        records = []
        for path in args.summary_only:
            with open(path) as f:
                records += [json.loads(l) for l in f if l.strip()]
        print(summarize(records, "(from %s)" % ", ".join(args.summary_only)))
        return 0

    if not args.out:
        args.out = os.path.join(os.path.abspath(args.build), "bench-results",
                                "gptr-" + datetime.datetime.now().strftime("%Y%m%d-%H%M%S"))
    R = Runner(args)
    programs = ("gptr_micro", "gptr_matmul", "gptr_em3d", "gptr_cg", "bench_matmul", "bench_em3d", "bench_cg")
    for p in ("agorarun",) + programs:
        if not os.access(os.path.join(R.bin, p), os.X_OK):
            sys.exit("run_gptr.py: %s/%s is missing: build first (cmake --build %s)" % (R.bin, p, args.build))
    R.snapshot(programs)
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))  # the finally below removes the copies
    try:
        return run_all(R, args, reps, micro_reps, size, note)
    finally:
        if R.current is not None and R.current.poll() is None:
            kill_tree(R.current)
        shutil.rmtree(R.prog_dir, ignore_errors=True)


def run_all(R, args, reps, micro_reps, size, note):
    only = set(x.strip() for x in args.only.split(",") if x.strip())
    t0 = time.monotonic()
    sys.stderr.write("run_gptr.py: %s -> %s (load %s)\n" % (note, args.out, loadavg()))
    if "micro" in only:
        run_micro(R, reps, micro_reps)
    if "sweep" in only:
        run_sweep(R, reps, size("sweep_bits"), size("sweep_barriers"), micro_reps)
    if "matmul" in only:
        run_matmul(R, reps, size("matmul"))
    if "em3d" in only:
        run_em3d(R, reps, size("em3d"), "em3d")
    if "em3d-local" in only:
        run_em3d(R, reps, size("em3d-local"), "em3d-local",
                 [("direct", ["--gptr", "direct"]), ("ordercache", ["--gptr", "ordercache"]),
                  ("swcc_64", ["--gptr", "swcc", "--gptr-block", "64"])])
    if "em3d-paper" in only and size("em3d-paper"):
        run_em3d(R, reps, size("em3d-paper"), "em3d-paper")
    if "cg" in only:
        run_cg(R, reps, size("cg"))
    R.results.close()
    text = summarize(R.records, note)
    text += "\nTotal %.0f s, %d runs, %d failed. Results: %s\n" % (time.monotonic() - t0, R.count, len(R.failures),
                                                                 os.path.join(args.out, "results.jsonl"))
    if R.failures:
        text += "\n### Failed runs\n\n"
        for f in R.failures:
            text += "- %s: rc %s%s: `%s`\n  %s\n" % (f["label"], f["rc"], " (timed out)" if f["timed_out"] else "",
                                                    f["command"], " | ".join(f["stderr_tail"]))
    with open(os.path.join(args.out, "summary.md"), "w") as f:
        f.write(text)
    print(text)
    return 1 if R.failures else 0


if __name__ == "__main__":
    sys.exit(main())
