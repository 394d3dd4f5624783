#!/usr/bin/env bash
# Cross-source evaluation of the length model (docs/results-predictor.md):
# trains one model per row of training sources (80% of each source's programs,
# seed 1), evaluates each on every source's trace file cold (no learning) and
# online (prequential, predictor eval --online), next to the program's-mean
# (history) and median baselines. A source the row trained on is evaluated on
# its held-out 20% of programs (--heldout); the others on all their records.
#   scripts/predictor_cross_source.sh [OUTDIR]
# Needs ONNX Runtime (scripts/fetch_ort.sh); the Go forward pass is used without it.
set -euo pipefail
OUT=${1:-/tmp/predictor-cross}
mkdir -p "$OUT"
export PITSTOP_ORT_LIB=${PITSTOP_ORT_LIB:-$(scripts/fetch_ort.sh | tail -1)}
go build -o "$OUT/pitstop" ./cmd/pitstop
T=predictor/data/traces
declare -A ROWS=(
	[infercept-bfcl]="$T/infercept-bfcl.jsonl.gz"
	[tau]="$T/tau-airline-gpt4o.jsonl.gz"
	[infercept-bfcl+tau]="$T/infercept-bfcl.jsonl.gz,$T/tau-airline-gpt4o.jsonl.gz"
	[infercept-bfcl+tau+mini-swe]="$T/infercept-bfcl.jsonl.gz,$T/tau-airline-gpt4o.jsonl.gz,$T/mini-swe-agent-deepseek.jsonl.gz"
)
COLS=(infercept-bfcl:$T/infercept-bfcl.jsonl.gz tau:$T/tau-airline-gpt4o.jsonl.gz toolbench:$T/toolbench-gpt35.jsonl.gz
	mini-swe:$T/mini-swe-agent-deepseek.jsonl.gz toolbench-search:$T/toolbench-gpt35-search.jsonl.gz)
for row in infercept-bfcl tau infercept-bfcl+tau infercept-bfcl+tau+mini-swe; do
	"$OUT/pitstop" predictor train --traces "${ROWS[$row]}" --split 0.8 --seed 1 --out "$OUT/$row.onnx" > "$OUT/$row.train.txt"
	for col in "${COLS[@]}"; do
		name=${col%%:*} file=${col#*:}
		heldout=false
		[[ ",${ROWS[$row]}," == *",$file,"* ]] && heldout=true
		echo "== train $row | eval $name (heldout $heldout)"
		"$OUT/pitstop" predictor eval --model "$OUT/$row.onnx" --traces "$file" --per-bin=false --online --heldout=$heldout \
			--curve "$OUT/$row.$name.csv" --curve-png "$OUT/$row.$name.png" | grep -E '^(model|window|order mix|experts|rank|baseline|second half|  (online|window|mix or mode|history|rank))'
	done
done
