"""obsidian's design-space exploration for scripts.

The tuning families of ``obsidian-tune`` (tuning/), driven from Python: list the families and
their parameters, enumerate a space's points, generate a point's kernels (CUDA and report), run
a point on the GPU or the simulator with its result checked, sweep a space (whole or one shard),
and merge shards. Results are dicts holding exactly the JSON lines ``obsidian-tune`` writes, so
the command's and the module's results files are interchangeable::

    import obsidian_tune as ot
    with ot.Tuner(simulate=True) as t:
        line = t.run("reduce", {"variant": "red5", "threads": 256, "chunk": 2048})
    line["status"], line["predicted"]["microseconds"]

Searches that sample a space instead of sweeping it (Optuna, Kernel Tuner) are in
``obsidian_tune.search``.
"""

from __future__ import annotations

import json
import os
from typing import Any, Iterable, Mapping, Sequence

from . import _core

Error = _core.Error
"""A user mistake (unknown family or parameter, a value out of range, no GPU): the message
names the construct and the rule, as obsidian's C++ errors do."""

__all__ = [
    "Error",
    "Tuner",
    "families",
    "family",
    "generate",
    "merge",
    "point",
    "points",
    "print_tables",
    "read_results",
    "run",
    "sweep",
]


def _space_text(space: Mapping[str, Any] | Sequence[Mapping[str, Any]] | str | os.PathLike) -> str:
    """A space as JSON text: a dict or a list of dicts as tuning/README.md describes, or the
    path of a space file."""
    if isinstance(space, (str, os.PathLike)):
        with open(space, encoding="utf-8") as f:
            return f.read()
    return json.dumps(space)


def families() -> list[dict]:
    """Every family: name, description, params (each with name, kind "int" or "choice", help,
    default, and min/max or choices), labelParams, threadsParam and sizeParam."""
    return json.loads(_core.families_json())


def family(name: str) -> dict:
    """The family called ``name``; Error naming the known families otherwise."""
    for f in families():
        if f["name"] == name:
            return f
    known = ", ".join(f["name"] for f in families())
    raise Error(f'unknown kernel family "{name}"; known families: {known}')


def points(space, simulate: bool = False) -> list[dict]:
    """The points of a space in sweep order: family, key, params (canonical; capped for the
    simulator when ``simulate``) and full (the point as the GPU runs it)."""
    return json.loads(_core.points_json(_space_text(space), simulate))


def point(family: str, params: Mapping[str, Any], simulate: bool = False) -> dict:
    """The one point that ``params`` names (one value each; the family's defaults fill the
    rest), as :func:`points` describes it."""
    return json.loads(_core.point_json(family, json.dumps(dict(params)), simulate))


def generate(family: str, params: Mapping[str, Any], simulate: bool = False) -> dict:
    """The kernels of a point, generated but not run: family, key, params and kernels, each
    with its name, its CUDA source and its report (resources, barriers, launch geometry)."""
    return json.loads(_core.generate_json(family, json.dumps(dict(params)), simulate))


def _options(**options) -> str:
    return json.dumps({k: v for k, v in options.items() if v is not None})


class Tuner:
    """Runs points one at a time, as a search needs them: each run generates and compiles the
    point's kernels, runs it on the GPU (first checked against the family's reference, then
    timed: CUDA events after warm-up, the median of at least ``runs`` runs and ``min_time_ms``)
    or on the simulator (checked with hazard detection; counted; its GPU time predicted by the
    cost model), and returns its line. Inputs and references are shared between runs. With
    ``output`` every line is also appended there, as ``obsidian-tune -o`` writes it.

    ``simulate=False`` without a GPU raises Error."""

    def __init__(
        self,
        simulate: bool = False,
        output: str | os.PathLike | None = None,
        runs: int | None = None,
        warmup: int | None = None,
        min_time_ms: float | None = None,
        compile: bool | None = None,
    ):
        self.simulate = simulate
        self._session = _core.Session(
            _options(
                simulate=simulate,
                output=None if output is None else os.fspath(output),
                runs=runs,
                warmup=warmup,
                min_time_ms=min_time_ms,
                compile=compile,
            )
        )

    def _open(self):
        if self._session is None:
            raise Error("the Tuner is closed (close() or the end of its with block): "
                        "make a new one")
        return self._session

    def run(self, family: str, params: Mapping[str, Any]) -> dict:
        """One point's line: status ("ok", "wrong", "skipped", "error") and reason, the
        kernels' report, and on the GPU time_ms {median, min, max, runs} and gbps, on the
        simulator counters and predicted {microseconds, bound, ...}."""
        return json.loads(self._open().run(family, json.dumps(dict(params))))

    def summary(self) -> dict:
        """The runs so far, counted as a sweep counts them (ok, wrong, skipped, kernels,
        nvrtcCompiles: the compiles the kernel cache did not serve, seconds)."""
        return json.loads(self._open().summary())

    def close(self) -> None:
        """Releases the session (its inputs, references and device buffers); a closed Tuner
        raises Error when used."""
        self._session = None

    def __enter__(self) -> "Tuner":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def run(family: str, params: Mapping[str, Any], simulate: bool = False, **options) -> dict:
    """One point run on its own (see :class:`Tuner`; ``options`` as Tuner takes them)."""
    with Tuner(simulate=simulate, **options) as t:
        return t.run(family, params)


def sweep(
    space,
    output: str | os.PathLike,
    simulate: bool = False,
    shard: tuple[int, int] = (0, 1),
    **options,
) -> dict:
    """Every point of ``space`` (or of shard ``(i, n)`` of it, as ``--shard i/n``), as
    ``obsidian-tune`` sweeps it: compiled in parallel, run, checked, one line each appended to
    ``output`` (resumed when it exists). ``options``: jobs, runs, warmup, min_time_ms,
    max_points, prune, prune_factor, compile, progress, summary. Returns the sweep's summary.

    Ctrl-C (any signal whose handler raises) stops the sweep after the point it is running:
    every line of ``output`` is whole, and the exception (KeyboardInterrupt) is raised; the
    same call again resumes."""
    text = _options(output=os.fspath(output), simulate=simulate, **options)
    return json.loads(_core.sweep_json(_space_text(space), text, shard[0], shard[1]))


def merge(
    inputs: Iterable[str | os.PathLike], output: str | os.PathLike, space, simulate: bool = False
) -> dict:
    """The results files of a sharded sweep merged into ``output`` in the space's order, as
    ``obsidian-tune --merge`` does: {lines, missing (keys no file holds), foreign (keys not in
    the space)}."""
    files = [os.fspath(p) for p in inputs]
    return json.loads(_core.merge(files, os.fspath(output), _space_text(space), simulate))


def read_results(path: str | os.PathLike, mode: str | None = None) -> list[dict]:
    """The lines of a results file (of ``mode`` "gpu" or "simulate" when given), one per point,
    read as a resumed sweep reads them: the last line of a point wins and a line cut short is
    skipped; a line lacking a field (or holding it with the wrong type) raises Error naming the
    file, the line and the field. ``pandas.json_normalize(read_results(path))`` makes a table
    of them."""
    return json.loads(_core.read_results_json(os.fspath(path), mode or ""))


def print_tables(results: str | os.PathLike, simulate: bool = False, markdown: bool = False):
    """Prints the tables ``obsidian-tune --tables-only`` prints for a results file; Error when
    it cannot be read or holds no line of the mode."""
    _core.print_tables(os.fspath(results), simulate, markdown)
