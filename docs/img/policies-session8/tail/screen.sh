#!/usr/bin/env bash
# Session 8 screening: pitstop alone at the points of points.txt, one
# variant (a --pitstop-tail value plus extra flags), seed $SEED (default 1).
# usage: screen.sh BIN OUTDIR TAIL [extra bench flags...]
set -euo pipefail
bin=$1 out=$2 tail=$3
shift 3
here=$(dirname "$0")
mkdir -p "$out"
while read -r tag w p r; do
	[ -z "$tag" ] && continue
	nice -n 10 "$bin" bench --workload "$w" --profile "$p" --rates "$r" --policies pitstop \
		--duration 1800 --seed "${SEED:-1}" --stop-after 5400 --parallel 1 --pitstop-tail "$tail" "$@" \
		--json "$out/$tag.json" >/dev/null
done <"${POINTS:-$here/points.txt}"
