"""torch's times for the rows of obsidian-bench-rowwise (softmax, layer_norm, rms_norm over the
rows of f32, f16 and bf16 matrices of 16384 x 4096 and 65536 x 1024), measured as that benchmark
measures: CUDA events after warm-up, the median of 30 runs, random normal data. Writes JSON rows
{"kind", "type", "torch_us"} that the RESULTS table joins with the benchmark's.

Usage: python3 bench/rowwise/torch_rowwise.py [--json FILE]
"""
import argparse
import json
import statistics

import torch
import torch.nn.functional as F


def median_us(fn, runs=30, warmup=3):
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(runs):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    rows = []
    dtypes = [("f32", torch.float32), ("f16", torch.float16), ("bf16", torch.bfloat16)]
    for op in ("softmax", "layerNorm", "rmsNorm"):
        for rows_, cols in ((16384, 4096), (65536, 1024)):
            for tname, dtype in dtypes:
                x = torch.randn(rows_, cols, device="cuda", dtype=dtype) * 2
                w = torch.randn(cols, device="cuda", dtype=dtype)
                b = torch.randn(cols, device="cuda", dtype=dtype)
                if op == "softmax":
                    fn = lambda: torch.softmax(x, dim=-1)
                elif op == "layerNorm":
                    fn = lambda: F.layer_norm(x, (cols,), w, b, 1e-5)
                else:
                    fn = lambda: F.rms_norm(x, (cols,), w, 1e-6)
                us = median_us(fn, args.runs)
                kind = f"{op} {rows_} x {cols}"
                rows.append({"kind": kind, "type": tname, "torch_us": us})
                print(f"{kind:24s} {tname:9s} torch {us:9.2f} us", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                       "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()
