#!/usr/bin/env python3
"""Every ctest test carries exactly one of the labels sim, unit, mpi, bench
(cmake/AgoraTestLabels.cmake), so `ctest -L <label>` slices the suite and the
slices add up to the whole. Usage: check_labels.py BUILD_DIR [CTEST]."""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SLICES = {"sim", "unit", "mpi", "bench"}


def main():
    build = sys.argv[1]
    ctest = sys.argv[2] if len(sys.argv) > 2 else "ctest"
    # ctest rewrites Testing/Temporary/LastTest.log even for --show-only:
    # list from a copy of the build's CTestTestfile.cmake tree, so that the
    # log of the run this test is part of survives.
    with tempfile.TemporaryDirectory() as copy:
        for folder, _, files in os.walk(build):
            if "CTestTestfile.cmake" in files:
                target = os.path.join(copy, os.path.relpath(folder, build))
                os.makedirs(target, exist_ok=True)
                shutil.copy(os.path.join(folder, "CTestTestfile.cmake"), target)
        listing = subprocess.run([ctest, "--show-only=json-v1"], cwd=copy, check=True,
                                 capture_output=True, text=True).stdout
    bad = []
    counts = {label: 0 for label in SLICES}
    tests = json.loads(listing)["tests"]
    for test in tests:
        labels = []
        for prop in test.get("properties", []):
            if prop["name"] == "LABELS":
                labels = prop["value"]
        slices = [label for label in labels if label in SLICES]
        if len(slices) != 1:
            bad.append(f"{test['name']}: labels {labels or 'none'}")
        else:
            counts[slices[0]] += 1
    if bad:
        print("tests without exactly one of the labels " + ", ".join(sorted(SLICES)) +
              " (label them with agora_label_tests, cmake/AgoraTestLabels.cmake):")
        print("\n".join("  " + b for b in bad))
        return 1
    full_only = sum(1 for test in tests for prop in test.get("properties", [])
                    if prop["name"] == "LABELS" and "full" in prop["value"])
    print(f"{len(tests)} tests, each with one label: " +
          ", ".join(f"{label} {counts[label]}" for label in sorted(SLICES)) +
          f"; fast tier {len(tests) - full_only}, full tier only {full_only}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
