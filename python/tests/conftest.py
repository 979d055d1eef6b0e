"""Shared fixtures of the module's tests: a small space, the obsidian-tune command beside the
module (CTest sets OBSIDIAN_TUNE and OBSIDIAN_SOURCE_DIR), and whether a GPU is there."""

import os
import subprocess

import pytest

# Ten reduction points on the simulator: two variants that differ a lot, three thread counts,
# a red5p point whose `seq` applies, and chunk 16 x red7, which cannot be generated (skipped).
SMALL = [
    {"family": "reduce",
     "params": {"type": "u32", "chunk": [512, 2048], "threads": [32, 128],
                "variant": ["red1", "red5"]}},
    {"family": "reduce", "params": {"chunk": 1024, "threads": 64, "variant": "red5p", "seq": 4}},
    {"family": "reduce", "params": {"chunk": 16, "threads": 32, "variant": "red7"}},
]


@pytest.fixture
def small_space():
    return SMALL


@pytest.fixture
def tune_command():
    path = os.environ.get("OBSIDIAN_TUNE")
    if not path or not os.path.exists(path):
        pytest.skip("OBSIDIAN_TUNE (the obsidian-tune command) not set: run through CTest")
    return path


def run_tune(command, *args, check=True):
    r = subprocess.run([command, *map(str, args)], capture_output=True, text=True)
    if check and r.returncode != 0:
        raise AssertionError(f"obsidian-tune {args} exited {r.returncode}:\n{r.stdout}\n{r.stderr}")
    return r
