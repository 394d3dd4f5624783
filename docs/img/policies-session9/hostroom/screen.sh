#!/usr/bin/env bash
# Session 9 (issue 12 Show 3): host-tier room and recompute. pitstop with
# --pitstop-hostroom off (the default), admit and victim, and the baselines
# (infercept, lamps, vllm-opt; atlas too at mixed, coding and fanout) rerun
# with the same binary, seed $SEED (default 1), at the points of points.txt
# (TAG WORKLOAD PROFILE RATE). usage: screen.sh BIN OUTDIR [MODES]
set -euo pipefail
bin=$1 out=$2 modes=${3:-off admit victim}
here=$(dirname "$0")
seed=${SEED:-1}
while read -r tag w p r; do
	[ -z "$tag" ] && continue
	common=(--workload "$w" --profile "$p" --rates "$r" --duration 1800 --seed "$seed" --stop-after 5400 --parallel 1)
	for m in $modes; do
		mkdir -p "$out/$m"
		nice -n 10 "$bin" bench "${common[@]}" --policies pitstop --pitstop-hostroom "$m" --json "$out/$m/$tag.json" >/dev/null
	done
	if [ -z "${NO_BASELINES:-}" ]; then
		pols=infercept,lamps,vllm-opt
		case $tag in mixed07 | coding036 | fanout014) pols=$pols,atlas ;; esac
		mkdir -p "$out/baselines"
		nice -n 10 "$bin" bench "${common[@]}" --policies "$pols" --json "$out/baselines/$tag.json" >/dev/null
	fi
done <"${POINTS:-$here/points.txt}"
