#!/usr/bin/env bash
# Runs clang-tidy (the checks in .clang-tidy: bugprone-*, performance-* and
# concurrency-*, less the few it names with a reason) over the C++ sources
# of src/ and tools/ and the project headers they include (src/,
# include/agora/). Every finding fails the check; fix it, or silence one
# deliberate site with `// NOLINT(check-name): reason`.
#
#   scripts/check-tidy.sh [BUILD_DIR] [FILE...]
#       BUILD_DIR: a build directory with compile_commands.json (default
#       build-tidy; configured here, without building, when missing).
#       FILE...: check only these sources (default: every tracked
#       src/**/*.cpp and tools/*.cpp the compilation database compiles).
#   AGORA_TIDY_JOBS=N   clang-tidy processes in parallel (default 2)
#
# Prints each finding once (a header's finding is reported by every source
# that includes it), a count per check and the wall time; exits 1 on any
# finding, 2 when clang-tidy or the build directory is missing. About 5
# minutes on 2 idle cores.
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
build=${1:-build-tidy}
[ $# -gt 0 ] && shift
jobs=${AGORA_TIDY_JOBS:-2}
tidy=$(command -v clang-tidy || command -v clang-tidy-14 || true)
[ -n "$tidy" ] || { echo "clang-tidy is not installed (apt-get install clang-tidy)" >&2; exit 2; }

if [ ! -f "$build/compile_commands.json" ]; then
  echo "check-tidy: configuring $build for its compilation database"
  launcher=()
  command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_EXPORT_COMPILE_COMMANDS=ON \
    "${launcher[@]}" >"$build.configure.log" 2>&1 || {
    cat "$build.configure.log" >&2
    echo "check-tidy: cmake failed" >&2
    exit 2
  }
fi
db=$build/compile_commands.json

# The sources: those given, or every tracked one the database compiles (the
# other architecture's sources, e.g. *_aarch64.cpp on x86-64, are not in it).
files=()
if [ $# -gt 0 ]; then
  files=("$@")
else
  mapfile -t files < <(git ls-files 'src/*.cpp' 'tools/*.cpp' |
    python3 -c '
import json, os, sys
db = {os.path.realpath(e["file"]) for e in json.load(open(sys.argv[1]))}
for f in sys.stdin:
    f = f.strip()
    if os.path.realpath(f) in db:
        print(f)
    else:
        print("check-tidy: not in the compilation database, skipped: " + f, file=sys.stderr)
' "$db")
fi
[ ${#files[@]} -gt 0 ] || { echo "check-tidy: no sources to check" >&2; exit 2; }

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
echo "check-tidy: $("$tidy" --version | grep -o 'version [0-9.]*'), ${#files[@]} sources, $jobs jobs"
t0=$(date +%s)
# One log per source; a source's status is clang-tidy's (findings are errors:
# WarningsAsErrors in .clang-tidy).
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -I{} sh -c '
  log="$2/$(printf %s "$3" | tr / _).log"
  "$0" -p "$1" --quiet "$3" >"$log" 2>&1 || echo "$3" >>"$2/failed.$$"
' "$tidy" "$build" "$out" {}
took=$(($(date +%s) - t0))

# Findings, each once, with paths relative to the checkout.
cat "$out"/*.log | grep -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): ' | sed "s|^$root/||" | sort -u >"$out/findings" || true
failed=$(cat "$out"/failed.* 2>/dev/null | sort -u || true)
if [ -s "$out/findings" ] || [ -n "$failed" ]; then
  cat "$out/findings"
  echo "---- findings per check ----"
  grep -oE '\[[a-zA-Z0-9.,_-]+\]$' "$out/findings" | sort | uniq -c | sort -rn || true
  if [ -n "$failed" ] && [ ! -s "$out/findings" ]; then
    # clang-tidy failed without a finding (e.g. a source does not compile): show why.
    for f in $failed; do
      echo "---- $f ----"
      cat "$out/$(printf %s "$f" | tr / _).log"
    done
  fi
  echo "check-tidy: FAILED: $(wc -l <"$out/findings") findings; clang-tidy failed on $(echo "$failed" | grep -c . || true) of ${#files[@]} sources (${took} s)"
  exit 1
fi
echo "check-tidy: clean: ${#files[@]} sources, no findings (${took} s)"
