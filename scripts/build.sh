#!/usr/bin/env bash
# Configures and builds Agora in build/ (Release).
set -eu
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build
