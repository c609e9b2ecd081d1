#!/usr/bin/env bash
# update-readme-options.sh [--check] [AGORA_INFO [README]]
#   Rewrites README.md's options table (the lines between <!-- options:begin
#   and <!-- options:end -->) with `agora-info --markdown`, the rendering of
#   src/common/options.def. With --check, changes nothing and fails (status 1,
#   with the difference) when the README's table is not that output: the ctest
#   readme_options_in_sync.
#   AGORA_INFO defaults to build/bin/agora-info, README to README.md (both
#   relative to the repository).
set -eu
check=0
if [ "${1:-}" = --check ]; then check=1; shift; fi
root=$(cd "$(dirname "$0")/.." && pwd)
agora_info=${1:-$root/build/bin/agora-info}
readme=${2:-$root/README.md}
[ -x "$agora_info" ] || { echo "update-readme-options.sh: $agora_info not found; build first (scripts/build.sh)" >&2; exit 2; }
begin='^<!-- options:begin'
end='^<!-- options:end'
[ "$(grep -c "$begin" "$readme")" = 1 ] && [ "$(grep -c "$end" "$readme")" = 1 ] ||
  { echo "update-readme-options.sh: $readme needs one '<!-- options:begin' line and one '<!-- options:end' line" >&2; exit 2; }
table=$(mktemp)
updated=$(mktemp)
trap 'rm -f "$table" "$updated"' EXIT
"$agora_info" --markdown > "$table"
# The lines up to the begin marker, the table, the end marker and after.
awk -v table="$table" -v begin="$begin" -v end="$end" '
  $0 ~ begin { print; while ((getline line < table) > 0) print line; skipping = 1; next }
  $0 ~ end { skipping = 0 }
  !skipping { print }' "$readme" > "$updated"
if [ $check = 1 ]; then
  if ! diff -u "$readme" "$updated"; then
    echo "FAIL: README's options table differs from agora-info --markdown (src/common/options.def); run scripts/update-readme-options.sh"
    exit 1
  fi
  echo "README options table in sync ($(grep -c '^| `AGORA_' "$table") variables)"
  exit 0
fi
cp "$updated" "$readme"
echo "updated $readme ($(grep -c '^| `AGORA_' "$table") variables)"
