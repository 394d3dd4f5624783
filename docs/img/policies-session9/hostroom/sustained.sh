#!/usr/bin/env bash
# Session 9: infercept-multi's sustained rate with make bench-policies' flags, pitstop
# with --pitstop-hostroom admit and off (and lamps, the best other there), seeds 1-3.
# usage: sustained.sh BIN OUTDIR [RUN...]   RUN: admit, off or lamps
set -euo pipefail
bin=$1 out=$2
shift 2
mkdir -p "$out"
runs=("$@")
[ ${#runs[@]} -eq 0 ] && runs=(admit off lamps)
for run in "${runs[@]}"; do
	case $run in
	lamps) pol=(--policies lamps) ;;
	*) pol=(--policies pitstop --pitstop-hostroom "$run") ;;
	esac
	nice -n 10 "$bin" bench --sustained --workload infercept-multi --executor sim --profile a100-40g-gptj-6b \
		"${pol[@]}" --duration 1800 --sustained-seeds 3 --sustained-start 2 --sustained-resolution 0.25 \
		--sustained-p99 984 --parallel 1 --json "$out/im-$run.json" --out "$out/im-$run" >"$out/im-$run.log" 2>&1
done
