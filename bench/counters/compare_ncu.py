#!/usr/bin/env python3
"""The simulator's counters (obsidian-bench-counters' JSON) beside Nsight Compute's for the same
kernels on the same input: one row per kernel and counter, with the ratio simulator / GPU.

  compare_ncu.py --metrics            the ncu metric list to collect (comma-separated)
  compare_ncu.py SIM.json NCU.csv     the table (Markdown), from `ncu --csv --print-units base`
"""
import csv
import json
import sys

# Simulator counter -> Nsight Compute metric.
PAIRS = [
    ("globalLoadRequests", "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"),
    ("globalLoadSectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"),
    ("globalStoreRequests", "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"),
    ("globalStoreSectors", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"),
    ("sharedLoadRequests", "smsp__sass_inst_executed_op_shared_ld.sum"),
    ("sharedLoadWavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"),
    ("sharedLoadConflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"),
    ("sharedStoreRequests", "smsp__sass_inst_executed_op_shared_st.sum"),
    ("sharedStoreWavefronts", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"),
    ("sharedStoreConflicts", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"),
]
EXTRA = ["smsp__inst_executed.sum", "smsp__thread_inst_executed_per_inst_executed.ratio",
         "gpu__time_duration.sum"]


def metrics():
    return ",".join([m for _, m in PAIRS] + EXTRA)


def number(text):
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def main(argv):
    if len(argv) == 2 and argv[1] == "--metrics":
        print(metrics())
        return 0
    if len(argv) != 3:
        print(__doc__)
        return 2
    sim = json.load(open(argv[1]))
    ncu = {}  # kernel -> metric -> value (the last launch of each kernel)
    lines = [l for l in open(argv[2]) if l.startswith('"')]  # ncu prints other text too
    for row in csv.DictReader(lines):
        name = row["Kernel Name"].split("(")[0]
        ncu.setdefault(name, {})[row["Metric Name"]] = number(row["Metric Value"])
    print("| kernel | counter | simulator | Nsight Compute | sim / ncu |")
    print("| --- | --- | ---: | ---: | ---: |")
    exact = total = 0
    for kernel, counters in sim.items():
        got = ncu.get(kernel)
        if got is None:
            print(f"| {kernel} | (not in the ncu output) | | | |")
            continue
        for ours, theirs in PAIRS:
            s = counters["total"].get(ours)
            g = got.get(theirs)
            if s is None or g is None:
                continue
            ratio = "-" if g == 0 else f"{s / g:.3f}"
            total += 1
            exact += s == g
            print(f"| {kernel} | {ours} | {s:.0f} | {g:.0f} | {ratio} |")
        t = got.get("gpu__time_duration.sum")
        if t is not None:
            print(f"| {kernel} | time (ns): predicted / measured | "
                  f"{counters['predicted']['microseconds'] * 1e3:.0f} | {t:.0f} | "
                  f"{counters['predicted']['microseconds'] * 1e3 / t:.3f} |")
        i = got.get("smsp__inst_executed.sum")
        if i is not None:
            ops = (counters["total"]["warpStatements"] + counters["total"]["arithmeticInstructions"])
            print(f"| {kernel} | SASS instructions / counted statements+operations | {ops:.0f} | "
                  f"{i:.0f} | {ops / i:.3f} |")
    print(f"\n{exact} of {total} counter pairs equal exactly.")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
