#!/usr/bin/env bash
# On a machine with a GPU: builds everything, runs the GPU tests (plainly, then under
# compute-sanitizer memcheck and racecheck unless --no-sanitize) and the CUB benchmarks, and
# leaves logs and JSON in the folder given ($1, default /tmp/obsidian-device). Extra arguments
# after the folder go to each benchmark; BENCHES="reduce" picks which run (default: reduce scan).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
out=${1:-/tmp/obsidian-device}
shift || true
sanitize=1
if [[ "${1:-}" == --no-sanitize ]]; then sanitize=0; shift; fi
mkdir -p "$out"
status=0
step() { echo "== $*"; }

step build
logs=$(mktemp -d)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release >"$logs/cmake.log" 2>&1 &&
  cmake --build build-gpu >"$logs/build.log" 2>&1 || { tail -n 40 "$logs/cmake.log" "$logs/build.log"; exit 1; }

step "GPU tests"
ctest --test-dir build-gpu -L gpu --output-on-failure >"$out/ctest-gpu.log" 2>&1 || status=1
tail -4 "$out/ctest-gpu.log"

if ((sanitize)); then
  for tool in memcheck racecheck; do
    step "compute-sanitizer $tool"
    compute-sanitizer --tool "$tool" --error-exitcode 9 build-gpu/tests/obsidian_gpu_tests \
      >"$out/sanitize-$tool.log" 2>&1 || status=1
    grep -E "ERROR SUMMARY|RACECHECK SUMMARY|test cases:" "$out/sanitize-$tool.log"
  done
fi

for b in ${BENCHES:-reduce scan}; do
  step "$b benchmark"
  build-gpu/bench/obsidian-bench-$b --json "$out/$b.json" "$@" 2>&1 | tee "$out/$b.txt" || status=1
done
exit $status
