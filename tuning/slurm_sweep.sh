#!/usr/bin/env bash
# A sweep across machines as a Slurm job array: task i of N runs shard i/N of the space on its
# node's GPU into its own results file; a second job, started when every task has ended, merges
# the shards in the space's order and prints the tables (it exits 1, naming the points, if a
# shard did not finish: run the array again and only the missing points run, as sweeps resume).
#
#   tuning/slurm_sweep.sh SPACE.json OUT_DIR [SHARDS]        submits both jobs (default 4 shards)
#
# Every task compiles its own points (through its node's kernel cache) and needs
# build/tuning/obsidian-tune (or $OBSIDIAN_TUNE) on a shared file system. $OBSIDIAN_TUNE_ARGS
# goes to every task and to the merge (e.g. "--runs 50", or "--simulate" for a dry run without
# GPUs). Slurm options (partition, account, time) come from the environment as usual
# (SBATCH_PARTITION, SBATCH_ACCOUNT, ...).
set -euo pipefail
if (($# < 2)); then
  echo "usage: $0 SPACE.json OUT_DIR [SHARDS]" >&2
  exit 2
fi
space=$(realpath "$1")
out=$(realpath -m "$2")
shards=${3:-4}
tune=$(realpath "${OBSIDIAN_TUNE:-$(dirname "${BASH_SOURCE[0]}")/../build/tuning/obsidian-tune}")
args=${OBSIDIAN_TUNE_ARGS:-}
[[ -x $tune ]] || { echo "$tune not built" >&2; exit 2; }
name=$(basename "$space" .json)
mkdir -p "$out"

array=$(sbatch --parsable --job-name="tune-$name" --array="0-$((shards - 1))" --gres=gpu:1 \
  --output="$out/%x-%a.log" \
  --wrap="'$tune' '$space' $args --shard \$SLURM_ARRAY_TASK_ID/$shards \
          -o '$out/$name.shard'\$SLURM_ARRAY_TASK_ID'.jsonl' --no-progress")
merge_inputs=$(for ((i = 0; i < shards; ++i)); do printf "'%s' " "$out/$name.shard$i.jsonl"; done)
sbatch --parsable --job-name="tune-$name-merge" --dependency="afterany:$array" \
  --output="$out/%x.log" \
  --wrap="'$tune' '$space' $args --merge $merge_inputs -o '$out/$name.jsonl' --markdown"
echo "submitted array $array ($shards shards) and its merge; results in $out/$name.jsonl"
