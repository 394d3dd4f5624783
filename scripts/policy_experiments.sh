#!/usr/bin/env bash
# Runs the issue-3 policy experiments (docs/results-policies.md) into $OUT (default docs/img/policies).
# Usage: scripts/policy_experiments.sh [name...]   (no names: all; error and ablation run only when named)
set -euo pipefail
BIN=${BIN:-bin/pitstop}
OUT=${OUT:-docs/img/policies}
ALL=fcfs,vllm-opt,infercept,lamps,mlfq,plas,atlas,sola,continuum,pitstop,srpt
run() { # name workload profile rates duration [extra flags...]
	local name=$1 w=$2 p=$3 r=$4 d=$5; shift 5
	mkdir -p "$OUT/$name"
	echo "== $name: $BIN bench --workload $w --profile $p --policies ${POLICIES:-$ALL} --rates $r --duration $d $*" | tee "$OUT/$name/command.txt"
	$BIN bench --workload "$w" --profile "$p" --policies "${POLICIES:-$ALL}" --rates "$r" --duration "$d" \
		--predictor "${PREDICTOR:-oracle}" --json "$OUT/$name/report.json" --csv "$OUT/$name/report.csv" --out "$OUT/$name" "$@" | tee "$OUT/$name/table.txt"
}
want() { [ $# -eq 0 ] && return 0; local n; for n in "${SEL[@]}"; do [ "$n" = "$1" ] && return 0; done; return 1; }
SEL=("$@")
sel() { [ ${#SEL[@]} -eq 0 ] && [ "$1" != error ] && [ "$1" != ablation ] || want "$1"; }
sel multi-gptj   && run multi-gptj   infercept-multi  a100-40g-gptj-6b    3,4,5,6,7,8 1800
sel single-gptj  && run single-gptj  infercept-single a100-40g-gptj-6b    4,8,10,12,14,16 1800
sel multi-vicuna && run multi-vicuna infercept-multi  a100-40g-vicuna-13b 0.25,0.5,0.75,1,1.25 1800
sel single-vicuna && run single-vicuna infercept-single a100-40g-vicuna-13b 1,1.25,1.5,1.75,2 1800
sel chat  && run chat  chat  a100-80g-llama3-8b 0.5,1,2,3,4 600
sel react && run react react a100-80g-llama3-8b 2,4,8,10,12 600
sel mcts  && run mcts  mcts  a100-80g-llama3-8b 0.1,0.2,0.4,0.6,0.8 600
sel mixed && run mixed mixed a100-80g-llama3-8b 0.5,1,1.5,2,3 600
sel azure-conv && run azure-conv azure-conv a100-80g-llama3-8b 5,6,7,7.5,8 600
sel mooncake-conv && run mooncake-conv mooncake-conv a100-80g-llama3-8b 0.1,0.2,0.3,0.4 3600 --stop-after 7200
sel azure-code && run azure-code azure-code a100-80g-llama3-8b 1,2,3,4 600
# Show 5: injected prediction error (LAMPS Figure 11), oracle-with-noise predictions.
for e in 0 0.05 0.1 0.3 0.5; do
	sel error && POLICIES=lamps,pitstop run error-$e infercept-multi a100-40g-gptj-6b 5,7 1800 --prediction-error $e
done
# Show 6: ablations, on a tool workload and a program workload, beside fcfs/vllm-opt as the baseline.
sel ablation && POLICIES=fcfs,pitstop,pitstop-noqueues,pitstop-nomot,pitstop-nodyn run ablation-multi infercept-multi a100-40g-gptj-6b 5,7 1800
sel ablation && POLICIES=vllm-opt,pitstop,pitstop-noqueues,pitstop-nomot,pitstop-nodyn run ablation-mixed mixed a100-80g-llama3-8b 2,3 600
exit 0
