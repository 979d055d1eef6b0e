"""obsidian_tune.search: the space as samplers see it, Optuna's samplers and Kernel Tuner's
strategies over a recorded sweep (Replay) and over live simulator runs (Measure)."""

import json

import pytest

import obsidian_tune as ot
from obsidian_tune import search

# 7 variants x 6 thread counts over one problem: paper_reduce's shape at one chunk.
SPACE = {"family": "reduce",
         "params": {"type": "u32", "chunk": 4096,
                    "threads": {"from": 32, "to": 1024, "mul": 2},
                    "variant": ["red1", "red2", "red3", "red4", "red5", "red6", "red7"]}}
BEST = ("red6", 256)


def recorded(tmp_path):
    """A sweep's results file with known times: the fastest point is BEST; red1 at 1024
    threads was skipped (no time)."""
    lines = []
    for p in ot.points(SPACE):
        v, t = p["params"]["variant"], p["params"]["threads"]
        line = {"key": p["key"], "mode": "gpu", "family": "reduce", "params": p["params"]}
        if (v, t) == ("red1", 1024):
            line.update(status="skipped", reason="too many resources")
        else:
            ms = 1.0 + 0.1 * abs(int(v[3]) - 6) + 0.05 * abs(t.bit_length() - 9)
            line.update(status="ok", time_ms={"median": ms})
        lines.append(json.dumps(line))
    path = tmp_path / "recorded.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def best_key():
    return ot.point("reduce", {"type": "u32", "chunk": 4096, "variant": BEST[0],
                               "threads": BEST[1]})["key"]


def test_space_axes_and_keys():
    s = search.SearchSpace(SPACE)
    assert len(s) == 42
    assert s.axes == {"threads": [32, 64, 128, 256, 512, 1024],
                      "variant": ["red1", "red2", "red3", "red4", "red5", "red6", "red7"]}
    assert s.fixed["chunk"] == 4096 and s.fixed["n"] == 67108864
    assert s.key({"variant": "red6", "threads": 256}) == best_key()
    assert s.key({"variant": "red6", "threads": 2048}) is None  # not a point of the space
    with pytest.raises(ot.Error, match="one family"):
        search.SearchSpace([SPACE, {"family": "scan", "params": {"threads": 32, "chunk": 64,
                                                                  "variant": "sklansky"}}])


def test_replay_answers_from_the_file_and_refuses_unknown_points(tmp_path):
    r = search.Replay(recorded(tmp_path))
    assert r.time_of(best_key()) == pytest.approx(1.0)
    assert r.best() == pytest.approx(1.0)
    with pytest.raises(ot.Error, match="no line for"):
        r.time_of("reduce {}")


def test_evaluations_to():
    res = search.SearchResult("x", trace=[("a", 3.0), ("b", None), ("c", 1.5), ("d", 1.0)])
    assert search.evaluations_to(res, 1.5) == 3
    assert search.evaluations_to(res, 0.5) is None
    assert res.best == ("d", 1.0) and res.evaluations == 4


@pytest.mark.parametrize("sampler", ["tpe", "cmaes", "random"])
def test_optuna_finds_the_best_with_the_whole_space_as_budget(tmp_path, sampler):
    s, r = search.SearchSpace(SPACE), search.Replay(recorded(tmp_path))
    res = search.optuna_search(s, r, sampler, seed=3)
    keys = [k for k, _ in res.trace]
    assert len(keys) == len(set(keys))  # each point evaluated once
    assert set(keys) <= s.keys
    assert res.best[0] == best_key()
    n = search.evaluations_to(res, 1.0)
    assert 1 <= n <= 42 and res.proposals >= res.evaluations


def test_optuna_budget_and_seed(tmp_path):
    s, r = search.SearchSpace(SPACE), search.Replay(recorded(tmp_path))
    a = search.optuna_search(s, r, "tpe", budget=10, seed=1)
    b = search.optuna_search(s, r, "tpe", budget=10, seed=1)
    assert a.evaluations == 10 and a.trace == b.trace  # a seed repeats a search exactly
    with pytest.raises(ot.Error, match="unknown sampler 'grid'"):
        search.optuna_search(s, r, "grid")


@pytest.mark.parametrize("strategy", ["random_sample", "genetic_algorithm", "greedy_ils"])
def test_kernel_tuner_strategies_over_the_recorded_sweep(tmp_path, strategy):
    s, r = search.SearchSpace(SPACE), search.Replay(recorded(tmp_path))
    res = search.kernel_tuner_search(s, r, strategy, budget=12, seed=2)
    keys = [k for k, _ in res.trace]
    assert 1 <= len(keys) <= 12 and len(keys) == len(set(keys)) and set(keys) <= s.keys
    times = dict(res.trace)
    for k, t in res.trace:  # Kernel Tuner saw the recorded times
        assert t == (None if r.time_of(k) is None else pytest.approx(r.time_of(k)))
    whole = search.kernel_tuner_search(s, r, "random_sample", seed=2)
    assert whole.best[0] == best_key() and times is not None


def test_optuna_over_live_simulator_runs(tmp_path):
    space = {"family": "reduce",
             "params": {"chunk": 2048, "threads": [32, 128], "variant": ["red1", "red5"]}}
    s = search.SearchSpace(space)
    out = tmp_path / "live.jsonl"
    with ot.Tuner(simulate=True, output=out, compile=False) as t:
        m = search.Measure(t, s.family)
        res = search.optuna_search(s, m, "random", seed=0)
    assert res.evaluations == 4 and len(m.lines) == 4
    assert all(l["status"] == "ok" for l in m.lines)
    assert len(out.read_text().splitlines()) == 4  # the same lines as a sweep's
    # the cost model ranks red5 at 128 threads first, as the GPU does
    assert res.best[0] == ot.point("reduce", {"chunk": 2048, "threads": 128,
                                              "variant": "red5"})["key"]
