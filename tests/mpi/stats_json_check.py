#!/usr/bin/env python3
"""Checks an AGORA_STATS_JSON report against docs/stats.md and agora.h:
   stats_json_check.py REPORT.json agora.h NRANKS PROTOCOL
The schema, version and fields come from the header (AGORA_STATS_SCHEMA,
AGORA_VERSION_STRING, AGORA_STATS_FIELDS); totals must combine the ranks
(counters and seconds summed, peaks the maximum), and the ranks' peaks must
differ (the test program makes them), so a sum would be caught."""
import json
import re
import sys


def main():
    report, header, nranks, protocol = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    h = open(header).read()
    schema = int(re.search(r"#define AGORA_STATS_SCHEMA (\d+)", h).group(1))
    version = re.search(r'#define AGORA_VERSION_STRING "([^"]+)"', h).group(1)
    fields = re.findall(r"X\((COUNTER|PEAK|SECONDS), (\w+),[\s\\]*\"", h)  # the text may wrap
    assert fields, "no AGORA_STATS_FIELDS entries found in " + header

    d = json.load(open(report))
    assert d["schema"] == schema, ("schema", d["schema"], schema)
    assert d["agora_version"] == version, ("agora_version", d["agora_version"], version)
    assert d["protocol"] == protocol, ("protocol", d["protocol"])
    assert d["nranks"] == nranks and len(d["ranks"]) == nranks, ("nranks", d["nranks"], len(d["ranks"]))
    assert len(d["hosts"]) == nranks and all(isinstance(x, str) and x for x in d["hosts"]), d["hosts"]
    assert [(f["kind"].upper(), f["name"]) for f in d["fields"]] == fields, d["fields"]
    assert all(f["doc"] for f in d["fields"])
    names = [n for _, n in fields]
    for r, row in enumerate(d["ranks"]):
        assert row["rank"] == r and [k for k in row if k != "rank"] == names, row
    assert list(d["totals"]) == names, d["totals"]
    peaks_differ = False
    for kind, name in fields:
        values = [row[name] for row in d["ranks"]]
        total = d["totals"][name]
        if kind == "PEAK":
            assert total == max(values), (name, total, values)
            if min(values) < max(values) and max(values) < sum(values):
                peaks_differ = True
        elif kind == "COUNTER":
            assert total == sum(values), (name, total, values)
        else:
            assert abs(total - sum(values)) < 1e-5, (name, total, values)
    assert peaks_differ, "no peak differs between ranks: the max-vs-sum check proved nothing"
    print("ok: schema %d, %d ranks on %s, peaks %s" % (schema, nranks, d["hosts"],
          {n: [row[n] for row in d["ranks"]] for k, n in fields if k == "PEAK"}))


if __name__ == "__main__":
    main()
