#!/usr/bin/env bash
# Session 8: the baselines at the screening points with this branch's binary
# (infercept, lamps, vllm-opt; atlas too where session 7 ran it), seed $SEED (default 1).
# usage: baselines.sh BIN OUTDIR
set -euo pipefail
bin=$1 out=$2
here=$(dirname "$0")
mkdir -p "$out"
while read -r tag w p r; do
	[ -z "$tag" ] && continue
	pols=infercept,lamps,vllm-opt
	case $tag in mixed05 | mixed07 | mcts04 | coding036 | fanout014) pols=$pols,atlas ;; esac
	nice -n 10 "$bin" bench --workload "$w" --profile "$p" --rates "$r" --policies "$pols" \
		--duration 1800 --seed "${SEED:-1}" --stop-after 5400 --parallel 1 --json "$out/$tag.json" >/dev/null
done <"${POINTS:-$here/points.txt}"
