"""Searches that sample a tuning space instead of sweeping all of it, by the libraries people
use: Optuna (TPE, CMA-ES, random) and Kernel Tuner (its strategies).

A search needs a space (a family with several values for some parameters, as tuning/README.md
describes) and an objective, which evaluates one point and returns its time in milliseconds,
or None when the point cannot run (skipped: it cannot be generated or launched):

- :class:`Measure` runs points with a :class:`obsidian_tune.Tuner`: on the GPU the measured
  median, on the simulator the cost model's predicted time; every result is checked first
  (a wrong point raises, it is a bug).
- :class:`Replay` answers from the lines of a finished sweep: a strategy is studied against
  brute force without running anything again (as Kernel Tuner's simulation mode does).

Every search counts *evaluations*: distinct points evaluated. A sampler that proposes a point
again is answered from the search's memory at no cost; a point outside the space (possible
when a space is a list of objects) is refused without an evaluation. ``evaluations_to(result,
target_ms)`` is the number of evaluations the search needed to find a point at least as fast
as ``target_ms``.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import tempfile
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from . import Error, Tuner, point, points

Objective = Callable[[Mapping[str, Any]], "float | None"]

__all__ = [
    "Measure",
    "Replay",
    "SearchResult",
    "SearchSpace",
    "evaluations_to",
    "kernel_tuner_search",
    "optuna_search",
]


class SearchSpace:
    """A space as a sampler sees it: its family, its axes (the parameters with more than one
    value among the space's points, each with its values in order: numbers ascending, choices
    as the space lists them) and the fixed parameters. ``key(params)`` is the point's key, as
    in a results file, or None when the parameters name no point of the space."""

    def __init__(self, space):
        self.points = points(space, simulate=False)
        if not self.points:
            raise Error("the space has no points")
        families = {p["family"] for p in self.points}
        if len(families) != 1:
            raise Error(f"a search runs over one family; the space has {sorted(families)}")
        self.family = families.pop()
        self._params = {p["key"]: p["params"] for p in self.points}
        self.keys = set(self._params)
        values: dict[str, list] = {}
        for p in self.points:
            for name, v in p["params"].items():
                seen = values.setdefault(name, [])
                if v not in seen:
                    seen.append(v)
        self.axes = {}
        self.fixed = {}
        for name, vs in values.items():
            if len(vs) == 1:
                self.fixed[name] = vs[0]
            else:
                numeric = all(isinstance(v, (int, float)) for v in vs)
                self.axes[name] = sorted(vs) if numeric else vs
        self._keys: dict[str, str | None] = {}

    def key(self, params: Mapping[str, Any]) -> str | None:
        merged = {**self.fixed, **params}
        memo = json.dumps(merged, sort_keys=True)
        if memo not in self._keys:
            try:
                k = point(self.family, merged)["key"]
            except Error:
                k = None
            self._keys[memo] = k if k in self.keys else None
        return self._keys[memo]

    def params_of(self, key: str) -> dict:
        return self._params[key]

    def __len__(self) -> int:
        return len(self.points)


class Measure:
    """Evaluates points by running them with ``tuner``: the GPU's median in ms, or on the
    simulator the predicted time. Skipped points give None; a wrong result raises Error. Every
    line is kept in ``lines`` (and written to the tuner's output, when it has one)."""

    def __init__(self, tuner: Tuner, family: str):
        self.tuner = tuner
        self.family = family
        self.lines: list[dict] = []

    def __call__(self, params: Mapping[str, Any]) -> float | None:
        line = self.tuner.run(self.family, params)
        self.lines.append(line)
        if line["status"] == "ok":
            if "time_ms" in line:
                return line["time_ms"]["median"]
            return line["predicted"]["microseconds"] / 1e3
        if line["status"] in ("wrong", "error"):
            raise Error(f"{line['key']}: {line['status']}: {line.get('reason', '')}")
        return None


class Replay:
    """Evaluates points from a finished sweep's results file (lines of ``mode``): the recorded
    median (GPU) or predicted time (simulate); None for points that were not ok. A point the
    file does not hold raises Error: the study would be wrong.

    Points are the space's, at their full sizes: a simulated line is keyed by the point it
    stands for (``read_results`` takes an older file's ``fullKey``, where its ``key`` held the
    capped size), so a sweep recorded with ``--simulate`` replays over the same space."""

    def __init__(self, results: str | os.PathLike, mode: str = "gpu"):
        from . import read_results

        self.times: dict[str, float | None] = {}
        for line in read_results(results, mode):
            key = line["key"]  # read_results gives the full point's key (fullKey)
            ok = line["status"] == "ok"
            if ok and "time_ms" in line:
                self.times[key] = line["time_ms"]["median"]
            elif ok and "predicted" in line:
                self.times[key] = line["predicted"]["microseconds"] / 1e3
            else:
                self.times[key] = None
        if not self.times:
            raise Error(f"{os.fspath(results)}: no {mode} lines to replay")
        self.family = None

    def time_of(self, key: str) -> float | None:
        if key not in self.times:
            raise Error(f"the recorded sweep has no line for {key} (a sweep of another space, "
                        "or one that did not finish: run it again to complete it)")
        return self.times[key]

    def best(self) -> float:
        return min(t for t in self.times.values() if t is not None)


@dataclass
class SearchResult:
    """What a search found and in what order: ``trace`` holds every evaluation as (key, ms or
    None), in the order they were made."""

    strategy: str
    trace: list[tuple[str, float | None]] = field(default_factory=list)
    proposals: int = 0  # what the sampler proposed, repeats and points outside the space too

    @property
    def evaluations(self) -> int:
        return len(self.trace)

    @property
    def best(self) -> tuple[str, float] | None:
        valid = [(k, t) for k, t in self.trace if t is not None]
        return min(valid, key=lambda kt: kt[1]) if valid else None


def evaluations_to(result: SearchResult, target_ms: float) -> int | None:
    """How many evaluations ``result`` made until it had a point of at most ``target_ms``;
    None if it never did."""
    for i, (_, t) in enumerate(result.trace, start=1):
        if t is not None and t <= target_ms:
            return i
    return None


class _Evaluator:
    """The search's memory: each distinct point evaluated once, in order, up to a budget."""

    def __init__(self, space: SearchSpace, objective, strategy: str, budget: int | None):
        self.space = space
        self.objective = objective
        self.result = SearchResult(strategy)
        self.seen: dict[str, float | None] = {}
        self.budget = len(space) if budget is None else min(budget, len(space))

    def done(self) -> bool:
        return len(self.seen) >= self.budget

    def evaluate(self, params: Mapping[str, Any]) -> tuple[str | None, float | None]:
        self.result.proposals += 1
        key = self.space.key(params)
        if key is None or key in self.seen:
            return key, (None if key is None else self.seen[key])
        if isinstance(self.objective, Replay):
            t = self.objective.time_of(key)
        else:
            t = self.objective(self.space.params_of(key))
        self.seen[key] = t
        self.result.trace.append((key, t))
        return key, t


def optuna_search(
    space: SearchSpace,
    objective: Objective | Replay,
    sampler: str = "tpe",
    budget: int | None = None,
    seed: int = 0,
    max_proposals: int | None = None,
    stop_at: float | None = None,
) -> SearchResult:
    """Minimizes the objective over ``space`` with an Optuna sampler: "tpe", "cmaes" or
    "random", until ``budget`` distinct points are evaluated (default: the whole space) or the
    sampler has proposed ``max_proposals`` points (default: 20 x the space). Numeric axes are
    ordinal integers (indices into their ordered values) so TPE and CMA-ES see their order;
    choices are categorical for TPE and random, and ordinal for CMA-ES (which has no
    categorical distribution: in the space's order, red1 .. red7). Points that cannot run are
    failed trials. With ``stop_at`` the search also stops at the first point of at most that
    many ms (a study of how fast a sampler gets there need not go on)."""
    import optuna

    if sampler == "tpe":
        made = optuna.samplers.TPESampler(seed=seed)
    elif sampler == "cmaes":
        made = optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    elif sampler == "random":
        made = optuna.samplers.RandomSampler(seed=seed)
    else:
        raise Error(f"unknown sampler {sampler!r}; expected tpe, cmaes or random")
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize", sampler=made)
    ev = _Evaluator(space, objective, f"optuna-{sampler}", budget)
    limit = max_proposals if max_proposals is not None else 20 * len(space)
    ordinal_choices = sampler == "cmaes"
    while not ev.done() and ev.result.proposals < limit:
        if stop_at is not None and ev.result.best is not None and ev.result.best[1] <= stop_at:
            break
        trial = study.ask()
        params = {}
        for name, values in space.axes.items():
            numeric = all(isinstance(v, (int, float)) for v in values)
            if numeric or ordinal_choices:
                params[name] = values[trial.suggest_int(name, 0, len(values) - 1)]
            else:
                params[name] = trial.suggest_categorical(name, values)
        key, t = ev.evaluate(params)
        if t is None:
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
        else:
            study.tell(trial, t)
    return ev.result


def _kernel_tuner_cache(space: SearchSpace, replay: Replay, path: str) -> dict:
    """Writes Kernel Tuner's cache file for ``space`` from a recorded sweep: one entry per
    combination of the axes' values (a combination that names no point of the space, or a
    point that was not ok, is an InvalidConfig)."""
    names = list(space.axes)
    entries = {}
    for combo in itertools.product(*space.axes.values()):
        params = dict(zip(names, combo))
        key = space.key(params)
        t = replay.time_of(key) if key is not None else None
        entry = {**params}
        if t is None:
            entry["time"] = "InvalidConfig"
        else:
            entry.update(time=t, times=[t], compile_time=0.0, verification_time=0.0,
                         benchmark_time=t)
        entries[",".join(str(v) for v in combo)] = entry
    cache = {
        "device_name": "obsidian-replay",
        "kernel_name": space.family,
        "problem_size": [1, 1, 1],
        "tune_params_keys": names,
        "tune_params": space.axes,
        "objective": "time",
        "cache": entries,
    }
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cache, f)
    return cache


def kernel_tuner_search(
    space: SearchSpace,
    replay: Replay,
    strategy: str = "genetic_algorithm",
    budget: int | None = None,
    seed: int = 0,
) -> SearchResult:
    """Runs a Kernel Tuner strategy (its names: "genetic_algorithm", "simulated_annealing",
    "greedy_ils", "pso", "random_sample", "diff_evo", ...) over ``space`` in Kernel Tuner's
    simulation mode, on the times of a recorded sweep (``replay``), until ``budget`` distinct
    points (default: the whole space). The trace is the order in which Kernel Tuner evaluated
    the points; configurations that name no point of the space are invalid to it, as Kernel
    Tuner's restrictions are, and are not counted."""
    import kernel_tuner

    budget = len(space) if budget is None else min(budget, len(space))
    with tempfile.TemporaryDirectory() as tmp:
        cachefile = os.path.join(tmp, "cache.json")
        _kernel_tuner_cache(space, replay, cachefile)
        valid = {
            ",".join(str(v) for v in combo)
            for combo in itertools.product(*space.axes.values())
            if space.key(dict(zip(space.axes, combo))) is not None
        }
        names = list(space.axes)

        def restrict(p):
            return ",".join(str(p[n]) for n in names) in valid

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            results, _ = kernel_tuner.tune_kernel(
                space.family,
                "/* replayed: obsidian generates the kernels */",
                (1, 1, 1),
                [],
                dict(space.axes),
                restrictions=restrict,
                strategy=strategy,
                strategy_options={"max_fevals": budget},
                cache=cachefile,
                simulation_mode=True,
                quiet=True,
                seed=seed,
            )
    out = SearchResult(f"kernel_tuner-{strategy}")
    seen = set()
    for r in results:
        params = {n: r[n] for n in names}
        key = space.key(params)
        out.proposals += 1
        if key is None or key in seen:
            continue
        seen.add(key)
        t = r.get("time")
        out.trace.append((key, t if isinstance(t, (int, float)) and math.isfinite(t) else None))
    return out
