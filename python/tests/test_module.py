"""obsidian_tune on the simulator: families, points, generated kernels, one-point runs, sweeps
whose lines equal the command's, shards and merges, and errors by message."""

import json
import os
import subprocess
import sys

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


# Two runs of one point in a process whose kernel cache is memory only (OBSIDIAN_CACHE_DIR=""):
# the first compiles its kernel with NVRTC, the second finds it in memory. (In a child process:
# this one's cache may hold the kernel already.)
COUNT_COMPILES = """
import json, obsidian_tune as ot
with ot.Tuner(simulate=True) as t:
    for _ in range(2):
        line = t.run("reduce", {"variant": "red5", "threads": 128, "chunk": 2048})
        assert line["status"] == "ok", line
    print(json.dumps(t.summary()))
"""


def test_summary_counts_the_nvrtc_compiles_of_its_runs():
    r = subprocess.run([sys.executable, "-c", COUNT_COMPILES], capture_output=True, text=True,
                       env=dict(os.environ, OBSIDIAN_CACHE_DIR=""))
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout.splitlines()[-1])
    assert (s["ran"], s["ok"], s["kernels"]) == (2, 2, 2)
    assert s["nvrtcCompiles"] == 1  # the first run's; the second found the kernel in memory
    assert s["compileThreads"] == 1


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
# sbatch as the job-array script uses it: records its arguments (one line per call, each argument
# on its own line after it), gives each call the next job id (from $FAKE_SLURM_DIR/next), runs
# the --wrap command at once (with --array=a-b once per task, SLURM_ARRAY_TASK_ID set) into the
# --output file with %x %A %a %j expanded as Slurm does, and prints the id (--parsable).
set -u
id=$(cat "$FAKE_SLURM_DIR/next" 2>/dev/null || echo 1001)
echo $((id + 1)) > "$FAKE_SLURM_DIR/next"
{ echo "sbatch $#"; printf '%s\n' "$@"; } >> "$FAKE_SLURM_DIR/calls"
array="" wrap="" name="" output="slurm-%j.out"
for a in "$@"; do
  case $a in
    --array=*) array=${a#--array=} ;;
    --wrap=*) wrap=${a#--wrap=} ;;
    --job-name=*) name=${a#--job-name=} ;;
    --output=*) output=${a#--output=} ;;
  esac
done
log() { local f=${output//%x/$name}; f=${f//%A/$id}; f=${f//%a/$1}; echo "${f//%j/$2}"; }
if [[ ${FAKE_SLURM_RUN:-1} == 1 ]]; then
  if [[ -n $array ]]; then
    for ((i = ${array%-*}; i <= ${array#*-}; ++i)); do
      SLURM_ARRAY_TASK_ID=$i bash -c "$wrap" > "$(log $i $((id + 1 + i)))" 2>&1
    done
  else
    bash -c "$wrap" > "$(log "" $id)" 2>&1
  fi
fi
echo $id
'''


def fake_slurm(tmp_path, tune_command, tune_args, run=True):
    """The environment that puts the stand-in sbatch first on PATH, and the calls it records:
    a function returning [(argument list), ...] per sbatch call so far."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    (bin_dir / "sbatch").write_text(FAKE_SBATCH)
    (bin_dir / "sbatch").chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}:{os.environ['PATH']}", OBSIDIAN_TUNE=tune_command,
               OBSIDIAN_TUNE_ARGS=tune_args, FAKE_SLURM_DIR=str(tmp_path),
               FAKE_SLURM_RUN="1" if run else "0")

    def calls():
        words = (tmp_path / "calls").read_text().split("\n")
        out, i = [], 0
        while i < len(words) and words[i].startswith("sbatch "):
            n = int(words[i].split()[1])
            out.append(words[i + 1:i + 1 + n])
            i += 1 + n
        return out

    return env, calls


def slurm_sweep(env, *args):
    source = os.environ["OBSIDIAN_SOURCE_DIR"]
    return subprocess.run(["bash", f"{source}/tuning/slurm_sweep.sh", *map(str, args)], env=env,
                          capture_output=True, text=True)


def test_slurm_job_array_script_shards_and_merges(tmp_path, small_space, tune_command):
    space = tmp_path / "small.json"
    space.write_text(json.dumps(small_space))
    env, calls = fake_slurm(tmp_path, tune_command, "--simulate --no-compile")
    out = tmp_path / "out"
    r = slurm_sweep(env, space, out, 3)
    assert r.returncode == 0, r.stderr
    # one line: both jobs' ids in it (no stray line with the merge's id)
    assert r.stdout.splitlines() == [
        f"submitted array 1001 (3 shards) and its merge, job 1002; results in {out}/small.jsonl"]
    array, merge = calls()
    # a dry run on the simulator asks for no GPU (a cluster without GPUs refuses gres=gpu)
    assert not any(a.startswith("--gres") for a in array + merge)
    assert "--array=0-2" in array and "--dependency=afterany:1001" in merge
    assert "10 lines, 0 of 10 points missing" in (out / "tune-small-merge-1002.log").read_text()
    merged = (out / "small.jsonl").read_text().splitlines()
    assert [json.loads(l)["key"] for l in merged] == [p["key"] for p in ot.points(small_space, True)]
    # a rerun: new job ids, new logs; the first run's are kept
    r = slurm_sweep(env, space, out, 3)
    assert r.returncode == 0, r.stderr
    assert "submitted array 1003 (3 shards) and its merge, job 1004" in r.stdout
    logs = sorted(p.name for p in out.glob("*.log"))
    assert logs == ["tune-small-1001-0.log", "tune-small-1001-1.log", "tune-small-1001-2.log",
                    "tune-small-1003-0.log", "tune-small-1003-1.log", "tune-small-1003-2.log",
                    "tune-small-merge-1002.log", "tune-small-merge-1004.log"]
    assert "resuming" in (out / "tune-small-1003-0.log").read_text()


def test_slurm_asks_for_what_the_tasks_need(tmp_path, small_space, tune_command):
    space = tmp_path / "small.json"
    space.write_text(json.dumps(small_space))
    # On the GPU: one GPU per task (not run here: the stand-in only records the calls).
    env, calls = fake_slurm(tmp_path, tune_command, "--runs 50", run=False)
    r = slurm_sweep(env, "--cpus-per-task", 8, space, tmp_path / "out", 2)
    assert r.returncode == 0, r.stderr
    array, merge = calls()
    assert "--gres=gpu:1" in array and not any(a.startswith("--gres") for a in merge)
    # the cores asked for, and the tasks compile on as many threads
    assert "--cpus-per-task=8" in array
    wrap = next(a for a in array if a.startswith("--wrap="))
    assert "--runs 50 --jobs 8 --shard $SLURM_ARRAY_TASK_ID/2" in wrap
    assert "--output=" + str(tmp_path / "out" / "%x-%A-%a.log") in array
    assert "--output=" + str(tmp_path / "out" / "%x-%j.log") in merge
    # --jobs given by the user wins; --simulate asks no GPU
    (tmp_path / "calls").unlink()
    env, calls = fake_slurm(tmp_path, tune_command, "--simulate --jobs 3", run=False)
    r = slurm_sweep(env, "--cpus-per-task=4", space, tmp_path / "out", 2)
    assert r.returncode == 0, r.stderr
    array, merge = calls()
    assert "--cpus-per-task=4" in array and not any(a.startswith("--gres") for a in array)
    wrap = next(a for a in array if a.startswith("--wrap="))
    assert "--jobs 3" in wrap and "--jobs 4" not in wrap
    # mistakes are refused before anything is submitted
    (tmp_path / "calls").unlink()
    out = tmp_path / "out"
    for args, message in [
            (["--cpus-per-task", "0", space, out], "--cpus-per-task 0: expected a whole"),
            (["--cpus", "2", space, out], "unknown option --cpus"),
            ([space, out, "x"], "SHARDS x: expected a whole number")]:
        r = slurm_sweep(env, *args)
        assert r.returncode == 2 and message in r.stderr, r.stderr
    assert not (tmp_path / "calls").exists()
