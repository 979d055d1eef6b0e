#!/usr/bin/env bash
# Differential fuzzing on the GPU: every generated kernel runs on the simulator (checked
# against the C++ reference) and on the device (checked against the simulator).
#   scripts/fuzz-gpu.sh [build-dir] [seeds] [programs-per-seed]
# Builds obsidian-fuzz if needed; stops at the first failure (printed, shrunk, as C++ source).
# Exit 77 where there is no CUDA device.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
seeds=${2:-4}
count=${3:-1000}
if [[ ! -x $build/fuzz/obsidian-fuzz ]]; then
  generator=()
  [[ -f $build/CMakeCache.txt ]] || generator=(-G Ninja)
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release
  cmake --build "$build" -j"$(nproc)" --target obsidian-fuzz
fi
total=0
for ((seed = 1; seed <= seeds; ++seed)); do
  start=$SECONDS
  "$build/fuzz/obsidian-fuzz" --gpu --seed "$seed" --count "$count"
  total=$((total + count))
  echo "seed $seed: $count programs in $((SECONDS - start)) s (total $total clean on the GPU)"
done
