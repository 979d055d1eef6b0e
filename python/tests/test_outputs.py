"""Results files and outputs, from the module and the command: a line without a field is an
error naming the file, the line and the field (merge, resume, tables, read_results); outputs
that cannot be written and inputs that do not exist fail naming the path; a closed Tuner says
so; Ctrl-C stops a sweep between points with its results file whole; a sweep recorded on the
simulator replays through Kernel Tuner and the search study."""

import json
import os
import signal
import subprocess
import sys
import time

import pytest

import obsidian_tune as ot
from obsidian_tune import search
from conftest import run_tune

JUNK = '{"mode":"simulate","key":"junk"}'
# The line lacks "family", the first field a results line must have.
NO_FAMILY = 'no "family" (a string; a results line has family'


def small_sweep(tmp_path, small_space):
    space = tmp_path / "space.json"
    space.write_text(json.dumps(small_space))
    results = tmp_path / "results.jsonl"
    ot.sweep(space, results, simulate=True, compile=False)
    return space, results


def test_a_line_without_a_field_names_the_file_line_and_field(tmp_path, small_space, tune_command):
    space, results = small_sweep(tmp_path, small_space)
    with results.open("a") as f:
        f.write('{"family":"reduce","mode":"simul\n')  # cut short: skipped, as documented
    assert len(ot.read_results(results, "simulate")) == 10
    with results.open("a") as f:
        f.write(JUNK + "\n")
    where = f"{results}:12: {NO_FAMILY}"
    # the module
    with pytest.raises(ot.Error) as e:
        ot.read_results(results)
    assert str(e.value).startswith(where)
    with pytest.raises(ot.Error) as e:
        ot.print_tables(results, simulate=True)
    assert str(e.value).startswith(where)
    with pytest.raises(ot.Error) as e:
        search.Replay(results, "simulate")
    assert str(e.value).startswith(where)
    # the command: --tables-only, resume and --merge, each exit 2 with the message
    for args in (["--tables-only", "-o", results],
                 ["-o", results, "--no-compile", "--no-progress"],
                 ["--merge", results, "-o", tmp_path / "merged.jsonl"]):
        r = run_tune(tune_command, space, "--simulate", *args, check=False)
        assert r.returncode == 2, r.stderr
        assert f"obsidian-tune: {where}" in r.stderr
        assert "type must be" not in r.stderr


def test_outputs_and_inputs_that_cannot_be_used_fail_naming_the_path(tmp_path, small_space,
                                                                      tune_command):
    space = tmp_path / "space.json"
    space.write_text(json.dumps(small_space))
    results = tmp_path / "results.jsonl"
    # --summary into a directory that does not exist: refused before any point runs
    summary = tmp_path / "no" / "summary.json"
    r = run_tune(tune_command, space, "--simulate", "--no-compile", "-o", results, "--summary",
                 summary, check=False)
    assert r.returncode == 2
    assert (f"cannot write the summary file {summary}: the directory {summary.parent} does not "
            "exist") in r.stderr
    assert not results.exists() or results.read_text() == ""
    with pytest.raises(ot.Error, match="cannot write the summary file .*does not exist"):
        ot.sweep(space, results, simulate=True, compile=False, summary=str(summary))
    # --tables-only on a file that does not exist, or with no line of the mode
    missing = tmp_path / "missing.jsonl"
    r = run_tune(tune_command, space, "--tables-only", "-o", missing, check=False)
    assert r.returncode == 2
    assert f"cannot read the results file {missing}: No such file or directory" in r.stderr
    with pytest.raises(ot.Error, match="cannot read the results file"):
        ot.print_tables(missing)
    run_tune(tune_command, space, "--simulate", "--no-compile", "--no-progress", "-o", results)
    r = run_tune(tune_command, space, "--tables-only", "-o", results, check=False)
    assert r.returncode == 2
    assert (f"{results} has no gpu lines (its 10 simulate lines are read with --simulate)"
            in r.stderr)
    r = run_tune(tune_command, space, "--simulate", "--tables-only", "-o", results)
    assert "reduce" in r.stdout
    # --merge into a directory that does not exist; a merge input that does not exist
    out = tmp_path / "none" / "merged.jsonl"
    r = run_tune(tune_command, space, "--simulate", "--merge", results, "-o", out, check=False)
    assert r.returncode == 2 and f"--merge: cannot write {out}" in r.stderr
    r = run_tune(tune_command, space, "--simulate", "--merge", missing, "-o",
                 tmp_path / "m.jsonl", check=False)
    assert r.returncode == 2 and f"cannot read the results file {missing}" in r.stderr
    # the summary, where it can be written, is written
    good = tmp_path / "summary.json"
    run_tune(tune_command, space, "--simulate", "--no-compile", "--no-progress", "-o", results,
             "--summary", good)
    assert json.loads(good.read_text())["interrupted"] is False


def test_a_closed_tuner_says_so():
    t = ot.Tuner(simulate=True, compile=False)
    t.close()
    with pytest.raises(ot.Error, match="the Tuner is closed"):
        t.run("reduce", {"variant": "red5", "threads": 128, "chunk": 2048})
    with pytest.raises(ot.Error, match="the Tuner is closed"):
        t.summary()
    with ot.Tuner(simulate=True, compile=False) as t:
        pass
    with pytest.raises(ot.Error, match="the Tuner is closed"):
        t.run("reduce", {"variant": "red5", "threads": 128, "chunk": 2048})


# 210 points whose kernels all differ: with an empty kernel cache and one compile thread, each
# is an NVRTC compile, so the sweep runs on long after its first line is written (seconds, where
# a stopped one ends after its point): the tests stop it then and check it stopped before its
# last point.
COLD = {"family": "reduce",
        "params": {"chunk": {"from": 256, "to": 4096, "mul": 2},
                   "threads": {"from": 32, "to": 1024, "mul": 2},
                   "variant": ["red1", "red2", "red3", "red4", "red5", "red6", "red7"]}}
COLD_POINTS = 210


def interrupt_after_first_line(command, results, env):
    """Starts `command`, sends SIGINT once `results` has a whole line, and returns the process's
    exit code and stderr."""
    p = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                         text=True)
    try:
        while p.poll() is None:
            if results.exists() and "\n" in results.read_text():
                break
            time.sleep(0.02)
        assert p.poll() is None, "the sweep ended before its first line was seen"
        p.send_signal(signal.SIGINT)
        _, err = p.communicate(timeout=300)  # a hang guard only; nothing here is timed
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, err


def check_whole_and_partial(results):
    lines = results.read_text().splitlines()
    assert 1 <= len(lines) < COLD_POINTS, f"{len(lines)} lines: the sweep was not stopped"
    for line in lines:
        assert json.loads(line)["status"] in ("ok", "skipped")
    return len(lines)


def test_ctrl_c_stops_a_python_sweep_between_points(tmp_path):
    results = tmp_path / "cold.jsonl"
    env = dict(os.environ, OBSIDIAN_CACHE_DIR=str(tmp_path / "cache"))
    code = ("import json, sys, obsidian_tune as ot\n"
            "ot.sweep(json.loads(sys.argv[1]), sys.argv[2], simulate=True, jobs=1)\n")
    rc, err = interrupt_after_first_line(
        [sys.executable, "-c", code, json.dumps(COLD), str(results)], results, env)
    assert rc != 0 and "KeyboardInterrupt" in err, err
    done = check_whole_and_partial(results)
    # the same call resumes: the points done are not run again
    s = ot.sweep(COLD, results, simulate=True, compile=False, max_points=2)
    assert (s["resumed"], s["ran"]) == (done, 2)


def test_ctrl_c_stops_the_command_between_points(tmp_path, tune_command):
    space = tmp_path / "cold.json"
    space.write_text(json.dumps(COLD))
    results = tmp_path / "cold.jsonl"
    env = dict(os.environ, OBSIDIAN_CACHE_DIR=str(tmp_path / "cache"))
    rc, err = interrupt_after_first_line(
        [tune_command, str(space), "--simulate", "--jobs", "1", "--no-progress", "-o",
         str(results)], results, env)
    assert rc == 130, err
    assert "obsidian-tune: interrupted (signal 2)" in err
    assert "run the same sweep again to resume" in err
    check_whole_and_partial(results)


def test_a_simulated_sweep_replays_through_kernel_tuner(tmp_path):
    # Two sizes the simulator caps alike: each point keeps its own line (its key the GPU's).
    space = {"family": "reduce",
             "params": {"n": [16777216, 67108864], "chunk": 2048, "threads": [32, 128, 512],
                        "variant": ["red1", "red5", "red7"]}}
    (tmp_path / "space.json").write_text(json.dumps(space))
    results = tmp_path / "sim.jsonl"
    s = ot.sweep(space, results, simulate=True, compile=False)
    assert s["points"] == 18 and s["wrong"] == 0 and s["ok"] > 0
    lines = ot.read_results(results, "simulate")
    assert {l["key"] for l in lines} == {p["key"] for p in ot.points(space)}
    s_space, replay = search.SearchSpace(space), search.Replay(results, "simulate")
    assert set(replay.times) == s_space.keys
    res = search.kernel_tuner_search(s_space, replay, "random_sample", seed=1)
    assert res.evaluations >= 1 and {k for k, _ in res.trace} <= s_space.keys
    for key, t in res.trace:  # Kernel Tuner saw the predicted times
        want = replay.time_of(key)
        assert t == (None if want is None else pytest.approx(want))
    assert res.best[1] == pytest.approx(replay.best())
    # the larger size is predicted slower: the lines are not one line answering for both
    by = {(l["fullParams"]["n"], l["label"], l["threads"]): l["predicted"]["microseconds"]
          for l in lines}
    assert by[(67108864, "red5", 128)] > by[(16777216, "red5", 128)]
    # and the study script over the recorded sweep
    source = os.environ.get("OBSIDIAN_SOURCE_DIR")
    if source:
        r = subprocess.run([sys.executable, f"{source}/tuning/search_study.py",
                            tmp_path / "space.json", results, "--mode", "simulate", "--seeds",
                            "1", "--optuna", "random", "--kernel-tuner", "random_sample"],
                           capture_output=True, text=True)
        assert r.returncode == 0, r.stderr
        assert "18 points" in r.stdout and "kernel_tuner random_sample" in r.stdout


def test_plot_names_a_line_without_a_field(tmp_path):
    source = os.environ.get("OBSIDIAN_SOURCE_DIR")
    if not source:
        pytest.skip("OBSIDIAN_SOURCE_DIR not set: run through CTest")
    results = tmp_path / "r.jsonl"
    results.write_text('{"mode":"gpu","key":"junk"}\n')
    r = subprocess.run([sys.executable, f"{source}/tuning/plot.py", results, "-o",
                        tmp_path / "plots"], capture_output=True, text=True)
    assert r.returncode != 0
    assert f'plot.py: {results}:1: no "family"' in r.stderr, r.stderr
    assert "Traceback" not in r.stderr
