"""torch's times for the rows of obsidian-bench-topk: torch.topk(x, k, sorted=True) (the k
largest, in order, with their indices) of random f32 CUDA tensors of random sign and magnitude
in [1e-3, 1e3), for the same (n, k), measured as that benchmark measures: CUDA events after
warm-up, the median of 30 runs, inputs below 2^24 elements rotated over up to 16 tensors (64 MiB
in all, above the L2). Each result is checked first against a sort of the tensor. Writes JSON
rows {"kind", "type", "n", "k", "torch_us"} that the RESULTS table joins with the benchmark's
(scripts/results.py, render_topk).

Usage: python3 bench/topk/torch_topk.py [--only N] [--k K] [--runs N] [--json FILE]
"""
import argparse
import json
import statistics

import torch

CASES = [(1 << 20, 16), (1 << 24, 16), (1 << 24, 100), (1 << 26, 16), (1 << 26, 100),
         (1 << 28, 100)]


def median_us(fn, runs=30, warmup=3):
    for r in range(warmup):
        fn(r)
    times = []
    for r in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn(r)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def random_floats(n, generator):
    """obsidian-bench-topk's data: magnitude uniform in [1e-3, 1e3), random sign; never zero."""
    x = torch.empty(n, device="cuda", dtype=torch.float32).uniform_(1e-3, 1e3,
                                                                     generator=generator)
    sign = torch.randint(0, 2, (n,), device="cuda", generator=generator) * 2 - 1
    return x * sign


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--runs", type=int, default=30)
    parser.add_argument("--only", type=int, help="this n alone")
    parser.add_argument("--k", type=int, help="this k alone")
    args = parser.parse_args()
    cases = [(n, k) for n, k in CASES
             if (args.only is None or n == args.only) and (args.k is None or k == args.k)]
    if not cases and (args.only or args.k):
        cases = sorted({(args.only or n, args.k or k) for n, k in CASES})
    generator = torch.Generator(device="cuda")
    generator.manual_seed(1)
    rows = []
    print(f"{'n':>11s} {'k':>6s} {'torch us':>10s}", flush=True)
    for n, k in cases:
        count = 1 if n >= 1 << 24 else min(16, (1 << 26) // n)
        xs = [random_floats(n, generator) for _ in range(count)]
        for x in xs:
            values, indices = torch.topk(x, k, sorted=True)
            want = torch.sort(x, descending=True).values[:k]
            if not (torch.equal(values, want) and torch.equal(x[indices], values)):
                raise SystemExit(f"torch.topk's result for n {n}, k {k} is not the sort's")
        us = median_us(lambda r: torch.topk(xs[r % count], k, sorted=True), args.runs)
        rows.append({"kind": "topk", "type": "f32", "n": n, "k": k, "torch_us": us})
        print(f"{n:11d} {k:6d} {us:10.2f}", flush=True)
        del xs
        torch.cuda.empty_cache()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
