#!/usr/bin/env bash
# Builds obsidian with its tests and runs them all through CTest.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

bash scripts/install-deps.sh

generator=()
[[ -f build/CMakeCache.txt ]] || generator=(-G Ninja)  # keep whatever build/ already uses
cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DOBSIDIAN_BUILD_TESTS=ON -DOBSIDIAN_BUILD_EXAMPLES=ON
cmake --build build -j"$(nproc)"
ctest --test-dir build --output-on-failure -j"$(nproc)"
