#!/usr/bin/env bash
# A sweep across machines as a Slurm job array: task i of N runs shard i/N of the space on its
# node's GPU into its own results file; a second job, started when every task has ended, merges
# the shards in the space's order and prints the tables (it exits 1, naming the points, if a
# shard did not finish: run the array again and only the missing points run, as sweeps resume).
#
#   tuning/slurm_sweep.sh [--cpus-per-task N] SPACE.json OUT_DIR [SHARDS]
#                                                 submits both jobs (default 4 shards)
#
# Every task compiles its own points (through its node's kernel cache) and needs
# build/tuning/obsidian-tune (or $OBSIDIAN_TUNE) on a shared file system. $OBSIDIAN_TUNE_ARGS
# goes to every task and to the merge (e.g. "--runs 50", or "--simulate" for a dry run without
# GPUs: then no GPU is asked for). --cpus-per-task N asks N cores for each task, which compiles
# on N threads (--jobs N, unless $OBSIDIAN_TUNE_ARGS sets --jobs). Logs are
# OUT_DIR/tune-<space>-<array job>-<task>.log and OUT_DIR/tune-<space>-merge-<job>.log: a
# rerun keeps the earlier runs' logs. Other Slurm options (partition, account, time) come from
# the environment as usual (SBATCH_PARTITION, SBATCH_ACCOUNT, ...).
set -euo pipefail
usage() {
  echo "usage: $0 [--cpus-per-task N] SPACE.json OUT_DIR [SHARDS]" >&2
  exit 2
}
cpus=""
while (($# > 0)) && [[ $1 == --* ]]; do
  case $1 in
    --cpus-per-task) (($# >= 2)) || usage; cpus=$2; shift 2 ;;
    --cpus-per-task=*) cpus=${1#*=}; shift ;;
    *) echo "$0: unknown option $1" >&2; usage ;;
  esac
done
(($# >= 2 && $# <= 3)) || usage
if [[ -n $cpus && ! $cpus =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: --cpus-per-task $cpus: expected a whole number of cores (1 or more)" >&2
  exit 2
fi
space=$(realpath "$1")
out=$(realpath -m "$2")
shards=${3:-4}
if [[ ! $shards =~ ^[1-9][0-9]*$ ]]; then
  echo "$0: SHARDS $shards: expected a whole number of tasks (1 or more)" >&2
  exit 2
fi
tune=$(realpath "${OBSIDIAN_TUNE:-$(dirname "${BASH_SOURCE[0]}")/../build/tuning/obsidian-tune}")
args=${OBSIDIAN_TUNE_ARGS:-}
[[ -x $tune ]] || { echo "$tune not built" >&2; exit 2; }
name=$(basename "$space" .json)
mkdir -p "$out"

# What the tasks ask of Slurm follows what they run: a GPU unless they simulate, and the cores
# they compile on.
read -r -a words <<< "$args"
resources=() task_args=""
simulate=0 jobs_given=0
for w in ${words[@]+"${words[@]}"}; do
  case $w in
    --simulate) simulate=1 ;;
    -j | --jobs | --jobs=* | -j[0-9]*) jobs_given=1 ;;
  esac
done
((simulate)) || resources+=(--gres=gpu:1)
if [[ -n $cpus ]]; then
  resources+=(--cpus-per-task="$cpus")
  ((jobs_given)) || task_args="--jobs $cpus"
fi

# %A (the array's job id) and %j (the merge's) in the log names: a rerun does not overwrite them.
array=$(sbatch --parsable --job-name="tune-$name" --array="0-$((shards - 1))" ${resources[@]+"${resources[@]}"} \
  --output="$out/%x-%A-%a.log" \
  --wrap="'$tune' '$space' $args $task_args --shard \$SLURM_ARRAY_TASK_ID/$shards \
          -o '$out/$name.shard'\$SLURM_ARRAY_TASK_ID'.jsonl' --no-progress")
array=${array%%;*}  # --parsable: "jobid[;cluster]"
merge_inputs=$(for ((i = 0; i < shards; ++i)); do printf "'%s' " "$out/$name.shard$i.jsonl"; done)
merge=$(sbatch --parsable --job-name="tune-$name-merge" --dependency="afterany:$array" \
  --output="$out/%x-%j.log" \
  --wrap="'$tune' '$space' $args --merge $merge_inputs -o '$out/$name.jsonl' --markdown")
merge=${merge%%;*}
echo "submitted array $array ($shards shards) and its merge, job $merge; results in $out/$name.jsonl"
