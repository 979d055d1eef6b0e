"""obsidian_tune on the simulator: families, points, generated kernels, one-point runs, sweeps
whose lines equal the command's, shards and merges, and errors by message."""

import json

import pytest

import obsidian_tune as ot
from conftest import run_tune

# Fields that differ between two runs of the same point (wall-clock times of the host).
VOLATILE = {"captureMs", "compileMs"}


def stable(line):
    return {k: v for k, v in line.items() if k not in VOLATILE}


def test_families_describe_their_parameters():
    fams = {f["name"]: f for f in ot.families()}
    assert {"reduce", "scan", "mandelbrot", "device_reduce"} <= set(fams)
    assert "test_wrong_reference" not in fams  # test-only families stay hidden
    params = {p["name"]: p for p in fams["reduce"]["params"]}
    assert params["variant"]["kind"] == "choice" and "red5p" in params["variant"]["choices"]
    assert params["threads"]["kind"] == "int" and params["threads"]["max"] >= 1024
    assert params["n"]["default"] == 67108864
    assert ot.family("scan")["sizeParam"] == "chunk"
    with pytest.raises(ot.Error, match='unknown kernel family "nope"; known families: reduce, '):
        ot.family("nope")


def test_points_are_the_commands_points(small_space):
    pts = ot.points(small_space, simulate=True)
    assert len(pts) == 10
    keys = [p["key"] for p in pts]
    assert len(set(keys)) == 10
    # canonical: seq only where it applies; the simulator's sizes capped, the full size kept
    assert all(("seq" in p["params"]) == (p["params"]["variant"] == "red5p") for p in pts)
    assert all(p["params"]["n"] < p["full"]["n"] == 67108864 for p in pts)
    one = ot.point("reduce", {"variant": "red5", "threads": 128, "chunk": 2048, "seq": 16})
    assert "seq" not in one["params"] and one["params"]["n"] == 67108864


def test_generate_gives_cuda_and_report():
    g = ot.generate("reduce", {"variant": "red5", "threads": 128, "chunk": 2048})
    (k,) = g["kernels"]
    assert k["name"] == "red5"
    assert "__global__" in k["cuda"] and "__syncthreads" in k["cuda"]
    assert k["report"]["threadsPerBlock"] == 128


def test_run_checks_and_predicts_on_the_simulator():
    with ot.Tuner(simulate=True) as t:
        fast = t.run("reduce", {"variant": "red5", "threads": 128, "chunk": 2048})
        slow = t.run("reduce", {"variant": "red1", "threads": 32, "chunk": 2048})
        bad = t.run("reduce", {"variant": "red7", "threads": 32, "chunk": 16})
        s = t.summary()
    assert fast["status"] == "ok" and fast["mode"] == "simulate"
    assert fast["predicted"]["microseconds"] > 0 and fast["counters"]["globalLoadRequests"] > 0
    # the paper's point: red1 (32 threads, virtualized, divergent) is slower than red5
    assert slow["predicted"]["microseconds"] > fast["predicted"]["microseconds"]
    assert bad["status"] == "skipped" and "got 16" in bad["reason"]
    assert (s["ran"], s["ok"], s["skipped"]) == (3, 2, 1)


def test_module_and_command_write_the_same_lines(tmp_path, small_space, tune_command):
    space = tmp_path / "space.json"
    space.write_text(json.dumps(small_space))
    ours, theirs = tmp_path / "module.jsonl", tmp_path / "command.jsonl"
    summary = ot.sweep(space, ours, simulate=True, compile=False)
    assert (summary["ok"], summary["skipped"], summary["wrong"]) == (9, 1, 0)
    run_tune(tune_command, space, "--simulate", "--no-compile", "--no-progress", "-o", theirs)
    a = [stable(json.loads(l)) for l in ours.read_text().splitlines()]
    b = [stable(json.loads(l)) for l in theirs.read_text().splitlines()]
    assert a == b
    # a Tuner with an output appends the same line
    single = tmp_path / "single.jsonl"
    with ot.Tuner(simulate=True, output=single, compile=False) as t:
        t.run("reduce", {"variant": "red5p", "threads": 64, "chunk": 1024, "seq": 4})
    (line,) = [stable(json.loads(l)) for l in single.read_text().splitlines()]
    assert line in a
    assert ot.read_results(ours, "simulate")[0]["key"] == a[0]["key"]


def test_shards_cover_the_space_once_and_merge(tmp_path, small_space, tune_command):
    space = tmp_path / "space.json"
    space.write_text(json.dumps(small_space))
    whole = tmp_path / "whole.jsonl"
    ot.sweep(space, whole, simulate=True, compile=False)
    shards = []
    for i in range(3):
        out = tmp_path / f"shard{i}.jsonl"
        s = ot.sweep(space, out, simulate=True, compile=False, shard=(i, 3))
        assert s["points"] in (3, 4)  # 10 points: slices of 3, 3 and 4
        shards.append(out)
    keys = [json.loads(l)["key"] for f in shards for l in f.read_text().splitlines()]
    assert len(keys) == len(set(keys)) == 10
    # the command merges them in the space's order: the unsharded sweep's lines
    merged = tmp_path / "merged.jsonl"
    r = run_tune(tune_command, space, "--simulate", "--merge", *shards, "-o", merged)
    assert "10 lines, 0 of 10 points missing" in r.stdout
    assert [stable(json.loads(l)) for l in merged.read_text().splitlines()] == [
        stable(json.loads(l)) for l in whole.read_text().splitlines()]
    # a missing shard fails the merge and names the points it lacks
    r = run_tune(tune_command, space, "--simulate", "--merge", shards[0], shards[2], "-o",
                 tmp_path / "partial.jsonl", check=False)
    assert r.returncode == 1 and "3 of 10 points missing" in r.stdout and "missing: reduce" in r.stdout
    m = ot.merge(shards[:2], tmp_path / "m.jsonl", space, simulate=True)
    assert m["lines"] == 6 and len(m["missing"]) == 4 and m["foreign"] == []
    # the command's own --shard runs the same slice
    cmd_shard = tmp_path / "cmd_shard1.jsonl"
    run_tune(tune_command, space, "--simulate", "--no-compile", "--no-progress", "--shard", "1/3",
             "-o", cmd_shard)
    assert [json.loads(l)["key"] for l in cmd_shard.read_text().splitlines()] == [
        json.loads(l)["key"] for l in shards[1].read_text().splitlines()]


def test_bad_shards_are_refused(tmp_path, small_space, tune_command):
    space = tmp_path / "space.json"
    space.write_text(json.dumps(small_space))
    for bad in ["3/3", "1", "a/2", "0/0"]:
        r = run_tune(tune_command, space, "--simulate", "--shard", bad, check=False)
        assert r.returncode == 2 and f"--shard {bad}" in r.stderr
    with pytest.raises(ot.Error, match="needs 0 <= i < N"):
        ot.sweep(space, tmp_path / "x.jsonl", simulate=True, shard=(2, 2))


def test_user_errors_name_the_rule(tmp_path):
    with pytest.raises(ot.Error, match='unknown parameter "thread"; reduce has'):
        ot.point("reduce", {"thread": 32})
    with pytest.raises(ot.Error, match='parameter "threads" needs one value'):
        ot.point("reduce", {"threads": [32, 64]})
    with pytest.raises(ot.Error, match='unknown value "red9"'):
        ot.generate("reduce", {"variant": "red9", "chunk": 1024, "threads": 32})
    with pytest.raises(ot.Error, match='parameter "chunk" .* has no default; give it'):
        ot.generate("reduce", {"variant": "red5", "threads": 32})
    with pytest.raises(ot.Error, match='unknown kernel family "gemm"'):
        ot.run("gemm", {}, simulate=True)
    with pytest.raises(ot.Error, match='unknown option "run"'):
        ot.sweep([], tmp_path / "x.jsonl", simulate=True, run=3)
    with pytest.raises(ot.Error, match="needs an output file"):
        ot.sweep([], "", simulate=True)


def test_gpu_run_or_visible_skip():
    try:
        t = ot.Tuner(simulate=False, runs=5, min_time_ms=1)
    except ot.Error as e:
        assert "no CUDA device" in str(e) and "--simulate" in str(e)
        pytest.skip("SKIPPED: no CUDA device: " + str(e))
    with t:
        line = t.run("reduce", {"variant": "red5", "threads": 256, "chunk": 4096})
    assert line["status"] == "ok" and line["mode"] == "gpu"
    assert line["time_ms"]["runs"] >= 5 and line["time_ms"]["median"] > 0 and line["gbps"] > 0


FAKE_SBATCH = r'''#!/usr/bin/env bash
# sbatch as the job-array script uses it: --array=a-b runs the --wrap command once per task
# with SLURM_ARRAY_TASK_ID set; a job with --dependency runs after (here: at once, in order).
array="" wrap=""
for a in "$@"; do
  case $a in --array=*) array=${a#--array=} ;; --wrap=*) wrap=${a#--wrap=} ;; esac
done
if [[ -n $array ]]; then
  for ((i = ${array%-*}; i <= ${array#*-}; ++i)); do SLURM_ARRAY_TASK_ID=$i bash -c "$wrap" >/dev/null; done
  echo 1001
else
  bash -c "$wrap" > "$FAKE_SLURM_LOG"
  echo 1002
fi
'''


def test_slurm_job_array_script_shards_and_merges(tmp_path, small_space, tune_command):
    import os
    import subprocess

    source = os.environ["OBSIDIAN_SOURCE_DIR"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "sbatch").write_text(FAKE_SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    space = tmp_path / "small.json"
    space.write_text(json.dumps(small_space))
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", OBSIDIAN_TUNE=tune_command,
               OBSIDIAN_TUNE_ARGS="--simulate --no-compile",
               FAKE_SLURM_LOG=str(tmp_path / "merge.log"))
    r = subprocess.run(["bash", f"{source}/tuning/slurm_sweep.sh", space, tmp_path / "out", "3"],
                       env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "submitted array 1001 (3 shards)" in r.stdout
    assert "10 lines, 0 of 10 points missing" in (tmp_path / "merge.log").read_text()
    merged = (tmp_path / "out" / "small.jsonl").read_text().splitlines()
    assert [json.loads(l)["key"] for l in merged] == [p["key"] for p in ot.points(small_space, True)]
