#!/usr/bin/env python3
"""How many evaluations a search strategy needs to come within 2% of the brute-force best.

Replays a finished brute-force sweep (its results file) for Optuna's samplers and Kernel
Tuner's strategies (obsidian_tune.search), each with several seeds, and prints per strategy
the median number of distinct points it evaluated before it held a point within --within of
the sweep's best time, and how many seeds got there at all within the budget (the whole space).

    PYTHONPATH=build/python python3 tuning/search_study.py tuning/spaces/paper_reduce.json \\
        tuning/results/paper_reduce.jsonl --seeds 10 --markdown

With --mode simulate it replays a sweep recorded with obsidian-tune --simulate (the cost model's
predicted times), so a study needs no GPU.
"""

import argparse
import json
import statistics
import sys
import time

from obsidian_tune import search

OPTUNA = ["tpe", "cmaes", "random"]
KERNEL_TUNER = ["genetic_algorithm", "simulated_annealing", "greedy_ils", "pso", "random_sample"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("space", help="the space file the sweep ran")
    ap.add_argument("results", help="the sweep's results file (JSON lines)")
    ap.add_argument("--mode", default="gpu", choices=["gpu", "simulate"])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--within", type=float, default=0.02, help="target: best x (1 + within)")
    ap.add_argument("--optuna", nargs="*", default=OPTUNA, help="Optuna samplers")
    ap.add_argument("--kernel-tuner", nargs="*", default=KERNEL_TUNER, help="KT strategies")
    ap.add_argument("--group-by", metavar="PARAM",
                    help="also study each value of PARAM on its own (a problem parameter, such as "
                         "reduce's chunk: its points compute different outputs)")
    ap.add_argument("--markdown", action="store_true")
    a = ap.parse_args()

    with open(a.space, encoding="utf-8") as f:
        space_json = json.load(f)
    replay = search.Replay(a.results, a.mode)
    runs = [("optuna", s) for s in a.optuna] + [("kernel_tuner", s) for s in a.kernel_tuner]
    studies = [("the whole space", space_json)]
    if a.group_by:
        values = search.SearchSpace(space_json).axes.get(a.group_by)
        if values is None:
            print(f"--group-by {a.group_by}: not an axis of the space", file=sys.stderr)
            return 2
        studies = [(f"{a.group_by}={v}", {**space_json, "params": {**space_json["params"],
                                                                   a.group_by: v}})
                   for v in values]
    counts = {r: [] for r in runs}
    times = {r: 0.0 for r in runs}
    size = 0
    brute = []
    for title, sub in studies:
        space = search.SearchSpace(sub)
        size = max(size, len(space))
        missing = [p["key"] for p in space.points if p["key"] not in replay.times]
        if missing:
            print(f"the results file lacks {len(missing)} of the space's points, e.g. "
                  f"{missing[0]}", file=sys.stderr)
            return 2
        best = min(replay.times[k] for k in space.keys if replay.times[k] is not None)
        target = best * (1 + a.within)
        within = sum(1 for k in space.keys if (replay.times[k] or float("inf")) <= target)
        print(f"{space.family}, {title}: {len(space)} points, axes "
              + ", ".join(f"{n} ({len(v)})" for n, v in space.axes.items())
              + f"; best {best * 1e3:.2f} us; {within} within {a.within * 100:g}% "
              f"({target * 1e3:.2f} us)")
        for lib, strategy in runs:
            t0 = time.perf_counter()
            for seed in range(a.seeds):
                if lib == "optuna":
                    r = search.optuna_search(space, replay, strategy, seed=seed, stop_at=target)
                else:
                    r = search.kernel_tuner_search(space, replay, strategy, seed=seed)
                counts[(lib, strategy)].append((search.evaluations_to(r, target), len(space)))
            times[(lib, strategy)] += time.perf_counter() - t0
        # brute force in the sweep's order: where its first point within target is
        order = [p["key"] for p in space.points]
        brute.append(next(i for i, k in enumerate(order, 1)
                          if (replay.times[k] or float("inf")) <= target))
    print()
    rows = []
    for r in runs:
        c = counts[r]
        reached = [n for n, _ in c if n is not None]
        # a search that never got there counts as more than its space: the median may be ">N"
        ranked = sorted(n if n is not None else size + 1 for n, _ in c)
        med = statistics.median(ranked)
        rows.append((f"{r[0]} {r[1]}", f">{size}" if med > size else f"{med:g}",
                     f"{len(reached)}/{len(c)}",
                     f"{min(reached)}-{max(reached)}" if reached else "-",
                     f"{times[r] / len(c):.2f}"))
    rows.append(("brute force (sweep order)", f"{statistics.median(brute):g}", "-",
                 f"{min(brute)}-{max(brute)}", "-"))

    head = ("strategy", "median evaluations", "searches within target", "range", "s per search")
    if a.markdown:
        print("| " + " | ".join(head) + " |")
        print("|" + "---|" * len(head))
        for r in rows:
            print("| " + " | ".join(r) + " |")
    else:
        w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(head)]
        print("  ".join(h.ljust(w[i]) for i, h in enumerate(head)))
        for r in rows:
            print("  ".join(c.ljust(w[i]) for i, c in enumerate(r)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
