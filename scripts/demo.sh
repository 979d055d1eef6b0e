#!/usr/bin/env bash
# Builds and runs the obsidian demo; arguments are passed to the demo.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

generator=()
[[ -f build/CMakeCache.txt ]] || generator=(-G Ninja)  # keep whatever build/ already uses
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DOBSIDIAN_BUILD_TESTS=OFF -DOBSIDIAN_BUILD_EXAMPLES=ON
cmake --build build --target obsidian-demo -j"$(nproc)"
exec ./build/examples/obsidian-demo "$@"
