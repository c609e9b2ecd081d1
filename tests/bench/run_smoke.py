#!/usr/bin/env python3
"""run_smoke.py BENCH_RUN BUILD OUT -- a tiny bench/run matrix (ep, sc and
pthreads, 1 and 2 workers, 2 repetitions): every results.jsonl row records
where it was measured (agora_version, commit, host, loadavg_start), the
summary header says it too, and speedup/breakdown are written as PNG and SVG
when matplotlib is available (to bench/run's python or /usr/bin/python3).
Then the figures of a results.jsonl from before those keys are redrawn."""
import json
import os
import re
import shutil
import subprocess
import sys

bench_run, build, out = sys.argv[1:4]
shutil.rmtree(out, ignore_errors=True)
r = subprocess.run([bench_run, "--programs", "ep", "--protocols", "sc", "--ranks", "1,2", "--reps", "2",
                    "--build", build, "--out", out, "--timeout", "40", "--args", "-m 18"],
                   stdout=subprocess.PIPE, universal_newlines=True)
print(r.stdout[-3000:])
assert r.returncode == 0, "bench/run failed: %d" % r.returncode

recs = [json.loads(l) for l in open(os.path.join(out, "results.jsonl"))]
assert len(recs) == 8, len(recs)  # (pthreads 1,2 + sc 1,2) x 2 reps
version = subprocess.run([os.path.join(build, "bin", "agorarun"), "--version"], stdout=subprocess.PIPE,
                         universal_newlines=True).stdout.split()[-1]
for rec in recs:
    assert rec["valid"], rec
    assert rec["agora_version"] == version, (rec["agora_version"], version)
    c = rec["commit"]
    assert c == "unknown" or (len(c.split("-")[0]) >= 4 and all(ch in "0123456789abcdef" for ch in c.split("-")[0])
                              and c[len(c.split("-")[0]):] in ("", "-dirty")), c
    assert rec["host"] and isinstance(rec["host"], str), rec["host"]
    la = rec["loadavg_start"]
    assert la is None or (len(la) == 3 and all(x >= 0 for x in la)), la
summary = open(os.path.join(out, "summary.md")).read()
assert "Agora %s, commit %s, host %s" % (version, recs[0]["commit"], recs[0]["host"]) in summary, summary[:400]


def have_matplotlib():
    for py in (sys.executable, "/usr/bin/python3"):
        if os.access(py, os.X_OK) and subprocess.run([py, "-c", "import matplotlib"], stderr=subprocess.DEVNULL).returncode == 0:
            return True
    return False


def check_figures(d):
    for name in ("speedup", "breakdown"):
        png, svg = os.path.join(d, name + ".png"), os.path.join(d, name + ".svg")
        assert open(png, "rb").read(8) == b"\x89PNG\r\n\x1a\n", png
        text = open(svg).read()
        assert "<svg" in text and "error bars:" in text and "min..max" in text, svg
    # the speedup panel's x ticks (the SVG's texts before the x label) are
    # the worker counts measured, as integers
    texts = re.findall(r"<text[^>]*>([^<]*)</text>", open(os.path.join(d, "speedup.svg")).read())
    ticks = texts[:texts.index("workers (ranks x T / threads)")]
    assert ticks == ["1", "2"], ticks


if have_matplotlib():
    check_figures(out)
    # rows written before the metadata keys existed still plot
    old = os.path.join(out, "old")
    os.makedirs(old)
    with open(os.path.join(old, "results.jsonl"), "w") as f:
        for rec in recs:
            for k in ("agora_version", "commit", "host", "loadavg_start", "total_s", "launcher_args"):
                rec.pop(k, None)
            f.write(json.dumps(rec) + "\n")
    r = subprocess.run([bench_run, "--figures-only", old], stdout=subprocess.PIPE, universal_newlines=True)
    assert r.returncode == 0 and r.stdout.count("figure: ") == 4, r.stdout
    check_figures(old)
    print("ok: figures (PNG and SVG), also from rows without the metadata keys")
else:
    print("note: matplotlib not available, figures not checked")
print("PASS")
