#!/usr/bin/env bash
# Reproduces the paper's sweeps on a GPU machine: builds obsidian-tune (build-gpu/), runs the
# sweeps of tuning/spaces/paper_*.json, then the tool's own measurements (a 100-point sweep with
# an empty kernel cache, then again with a warm one), and plots everything.
#
#   bash tuning/run_paper_sweeps.sh OUT_DIR
#
# SIMULATE=1 runs every sweep on the CPU simulator instead (a dry run on any machine: every point
# verified, nothing timed; files named <space>.sim.jsonl). BUILD_DIR (default build-gpu) is the
# build directory. The CUDA toolkit (NVRTC) must be at
# /usr/local/cuda; scripts/install-deps.sh installs the Debian packages if any are missing.
#
# OUT_DIR receives ci.jsonl (a quick check of every family first), <space>.jsonl (one line per point; a re-run resumes them), <space>.txt (the
# tool's output: tables of best and worst points), <space>.summary.json, perf100_{cold,warm}.*,
# device.txt and plots/*.png. Exits non-zero if any point was wrong or failed.
set -uo pipefail
out=${1:?usage: $0 OUT_DIR}
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
mkdir -p "$out"
out=$(cd "$out" && pwd)
start=$(date +%s)

build=${BUILD_DIR:-$root/build-gpu}
bash "$root/scripts/install-deps.sh" || echo "install-deps failed: building with what is there"
generator=()
[[ -f "$build/CMakeCache.txt" ]] || generator=(-G Ninja)
cmake -S "$root" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
  -DOBSIDIAN_BUILD_TESTS=OFF -DOBSIDIAN_BUILD_BENCH=OFF -DOBSIDIAN_BUILD_EXAMPLES=ON \
  -DOBSIDIAN_BUILD_TUNING=ON > "$out/cmake.log" || { cat "$out/cmake.log"; exit 2; }
cmake --build "$build" --target obsidian-tune -j"$(nproc)" || exit 2
tune="$build/tuning/obsidian-tune"
echo "built in $(( $(date +%s) - start )) s"

{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1
  echo "cores: $(nproc)"; git -C "$root" rev-parse HEAD; } > "$out/device.txt"

status=0
mode=() suffix=""
if [[ ${SIMULATE:-0} == 1 ]]; then mode=(--simulate); suffix=".sim"; fi
# The paper's sweeps, with the build's kernel cache (a re-run of this script resumes them).
export OBSIDIAN_CACHE_DIR="$build/kernel-cache"
# First the CI space, quickly (1 ms of runs per point): every family, every variant, checked.
echo "== ci (a quick check of every family)"
rm -f "$out/ci$suffix.jsonl"
"$tune" "$root/tuning/spaces/ci.json" "${mode[@]}" -o "$out/ci$suffix.jsonl" --min-time-ms 1 \
  --no-progress > "$out/ci$suffix.txt" 2>&1 || { status=1; tail -20 "$out/ci$suffix.txt"; }
grep -E "^  ok [0-9]" "$out/ci$suffix.txt"
for space in paper_reduce paper_reduce_whole paper_scan paper_mandelbrot; do
  echo "== $space"
  "$tune" "$root/tuning/spaces/$space.json" "${mode[@]}" -o "$out/$space$suffix.jsonl" \
    --summary "$out/$space$suffix.summary.json" 2>&1 | tee "$out/$space$suffix.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done

# The tool itself: 100 points with an empty kernel cache (every kernel through NVRTC, on every
# core), then the same points again (every kernel from the cache: the warm sweep).
perf_cache=$(mktemp -d)
for run in cold warm; do
  echo "== perf100 ($run kernel cache)"
  rm -f "$out/perf100_$run$suffix.jsonl"
  OBSIDIAN_CACHE_DIR="$perf_cache" "$tune" "$root/tuning/spaces/perf100.json" "${mode[@]}" \
    -o "$out/perf100_$run$suffix.jsonl" --summary "$out/perf100_$run$suffix.summary.json" \
    --no-progress 2>&1 | tee "$out/perf100_$run$suffix.txt"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
done
rm -rf "$perf_cache"

echo "== plots"
if [[ -n $suffix ]] || ! compgen -G "$out/paper_*.jsonl" > /dev/null; then
  echo "no GPU results to plot"
elif python3 -c "import matplotlib, pandas" 2>/dev/null; then
  python3 "$root/tuning/plot.py" "$out"/paper_*.jsonl -o "$out/plots" || status=1
else
  echo "no matplotlib/pandas: pip install matplotlib pandas, then" \
       "python3 tuning/plot.py $out/paper_*.jsonl -o $out/plots"
fi
echo "done in $(( $(date +%s) - start )) s; status $status"
exit $status
