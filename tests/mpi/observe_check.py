#!/usr/bin/env python3
"""Checks the files AGORA_TRACE / AGORA_PROFILE left (tests/mpi/observe_test.sh).

observe_check.py trace DIR NRANKS      every rank's trace is valid JSON with
                                       every required kind of event
observe_check.py bound DIR NRANKS CAP  the buffer bound: at most CAP events
                                       kept, drops counted, file still valid
observe_check.py profile DIR NRANKS    every rank's profile is valid JSON
Exits 1 naming what is missing."""
import json
import os
import sys


def fail(msg):
    print(f"FAIL: {msg}")
    sys.exit(1)


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, json.JSONDecodeError) as e:
        fail(f"{path}: {e}")


def traces(d, nranks):
    out = []
    for r in range(nranks):
        t = load(os.path.join(d, f"agora-trace.{r}.json"))
        o = t.get("otherData", {})
        if o.get("rank") != r or o.get("nranks") != nranks:
            fail(f"rank {r}: otherData {o}")
        out.append(t)
    return out


def check_trace(d, nranks):
    sends, receives = {}, {}
    wakeups = 0
    for r, t in enumerate(traces(d, nranks)):
        ev = t["traceEvents"]
        meta = [e for e in ev if e["ph"] == "M" and e["name"] == "process_name"]
        if not meta or not meta[0]["args"]["name"].startswith(f"rank {r} on "):
            fail(f"rank {r}: no process_name 'rank {r} on HOST'")
        xs = [e for e in ev if e["ph"] == "X"]
        for e in xs:
            if e["pid"] != r or not isinstance(e["tid"], int) or e["ts"] <= 0 or e["dur"] < 0:
                fail(f"rank {r}: bad event {e}")

        def need(what, pred):
            found = [e for e in xs if pred(e)]
            if not found:
                fail(f"rank {r}: no {what} event")
            return found

        faults = need("fault", lambda e: e["name"] in ("read fault", "write fault"))
        for e in faults:
            a = e["args"]
            if not ({"page", "home", "addr", "access"} <= a.keys()) or a["home"] not in range(nranks):
                fail(f"rank {r}: fault without page/home/addr: {e}")
        need("write fault with a duration", lambda e: e["name"] == "write fault" and e["dur"] > 0)
        need("read fault with a duration", lambda e: e["name"] == "read fault" and e["dur"] > 0)
        need("lock wait", lambda e: e["name"] == "lock wait" and "lock" in e["args"])
        need("barrier", lambda e: e["name"] == "barrier" and e["args"]["call"] == "agora_barrier")
        need("reduce", lambda e: e["name"] == "reduce" and e["args"]["call"] == "agora_reduce")
        need("alloc", lambda e: e["name"] == "alloc" and e["args"]["call"] == "agora_malloc")
        for kind in ("send", "receive"):
            need(f"{kind} of a page (protocol, > 4 KiB) to or from the other rank",
                 lambda e: e["name"] == f"{kind} protocol" and e["args"]["bytes"] > 4096 and e["args"]["peer"] != r)
            msgs = [e for e in xs if e["name"].startswith(kind + " ")]
            for e in msgs:
                a = e["args"]
                if a["peer"] not in range(nranks) or a["bytes"] < 32:
                    fail(f"rank {r}: message without peer/size: {e}")
        for e in ev:
            if e["ph"] in ("s", "f"):
                (sends if e["ph"] == "s" else receives)[e["id"]] = (r, e)
        wakeups += len([e for e in xs if e["name"] == "service wake-up" and e["args"]["messages"] > 0])
        threads = {e["args"]["name"] for e in ev if e["ph"] == "M" and e["name"] == "thread_name"}
        if not {"main", "agora service"} <= threads:
            fail(f"rank {r}: thread names {threads}")
    if wakeups == 0:
        fail("no service wake-up event on any rank")
    if not sends or set(sends) != set(receives):
        fail(f"flows: {len(sends)} starts, {len(receives)} ends, "
             f"{len(set(sends) ^ set(receives))} unmatched")
    for fid, (rs, _) in sends.items():
        if receives[fid][0] == rs:
            fail(f"flow {fid} starts and ends on rank {rs}")
    print(f"trace OK: {nranks} ranks, {len(sends)} messages joined by flows, {wakeups} service wake-ups")


def check_bound(d, nranks, cap):
    for r, t in enumerate(traces(d, nranks)):
        o = t["otherData"]
        kept = len([e for e in t["traceEvents"] if e["ph"] == "X"])
        if o["capacity"] != cap or o["recorded"] != kept or kept > cap:
            fail(f"rank {r}: capacity {o['capacity']}, recorded {o['recorded']}, {kept} events in the file")
        if o["dropped"] <= 0:
            fail(f"rank {r}: nothing dropped with a {cap}-event buffer")
    print(f"bound OK: at most {cap} events per rank, drops counted")


def check_profile(d, nranks):
    for r in range(nranks):
        p = load(os.path.join(d, f"agora-profile.{r}.json"))
        if p.get("rank") != r or not p["pages"] or not p["allocations"]:
            fail(f"rank {r}: empty profile")
    print("profile OK")


if __name__ == "__main__":
    mode, d, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if mode == "trace":
        check_trace(d, n)
    elif mode == "bound":
        check_bound(d, n, int(sys.argv[4]))
    elif mode == "profile":
        check_profile(d, n)
    else:
        fail(f"unknown mode {mode}")
