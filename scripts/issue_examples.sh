#!/usr/bin/env bash
# Issues 12 and 21: the observations each issue opened with, rerun on today's
# defaults with the six non-oracle policies, the predictor serve uses (bench's
# default) unless a row names another, 1,800 s arrival windows, runs stopped at
# 5,400 s (docs/results-policies.md, "session 18: the issues' own examples").
#
#   scripts/issue_examples.sh OUTDIR SEED [ROW...]
#
# ROW (default: all, in this order):
#   im-gptj        issue 12: infercept-multi on a100-40g-gptj-6b at rate 5
#   coding-h100    issue 12: coding on h100-80g-llama3-8b at 0.25 (light), 1, 2
#   coding-a100    issue 12 (and issue 21's serve rows): coding on
#                  a100-80g-llama3-8b at 0.25, 0.5, 1, 2
#   mixed          issue 12: mixed on a100-80g-llama3-8b at 1 and 1.5
#   fanout2        issue 12's "second workload of another shape" (no doc names
#   mcts2          it): the two families that are not agent chains, at 2 on
#                  a100-80g-llama3-8b (mcts2 is the slowest row by far, over 30
#                  minutes on a loaded 2-vCPU VM, and runs last)
#   pred-oracle    issue 21: coding on a100-80g-llama3-8b at 0.5 and 1, pitstop
#   pred-onnx      and infercept, with --predictor oracle / onnx / history (the
#   pred-history   default, serve, is coding-a100's rows)
#
# Each row writes OUTDIR/ROW-sSEED.json (and .txt). BIN picks the binary
# (bin/pitstop), PARALLEL bench's --parallel (1), NICE the niceness (10); a row
# whose JSON exists is skipped (FORCE=1 reruns it). Tables:
# scripts/issue_examples_table.py OUTDIR [SEED...].
set -euo pipefail
out=$1 seed=$2
shift 2
rows=("$@")
[[ ${#rows[@]} -eq 0 ]] && rows=(im-gptj coding-h100 coding-a100 mixed fanout2 pred-oracle pred-onnx pred-history mcts2)
bin=${BIN:-bin/pitstop}
all=fcfs,vllm-opt,infercept,lamps,atlas,pitstop
mkdir -p "$out"
for row in "${rows[@]}"; do
  pols=$all
  case $row in
    im-gptj) args=(--workload infercept-multi --profile a100-40g-gptj-6b --rates 5) ;;
    coding-h100) args=(--workload coding --profile h100-80g-llama3-8b --rates 0.25,1,2) ;;
    coding-a100) args=(--workload coding --profile a100-80g-llama3-8b --rates 0.25,0.5,1,2) ;;
    mixed) args=(--workload mixed --profile a100-80g-llama3-8b --rates 1,1.5) ;;
    fanout2) args=(--workload fanout --profile a100-80g-llama3-8b --rates 2) ;;
    mcts2) args=(--workload mcts --profile a100-80g-llama3-8b --rates 2) ;;
    pred-oracle|pred-onnx|pred-history)
      pols=pitstop,infercept
      args=(--workload coding --profile a100-80g-llama3-8b --rates 0.5,1 --predictor "${row#pred-}") ;;
    *) echo "unknown row $row (valid: im-gptj coding-h100 coding-a100 mixed fanout2 mcts2 pred-oracle pred-onnx pred-history)" >&2; exit 2 ;;
  esac
  j=$out/$row-s$seed.json
  if [[ -s $j && ${FORCE:-0} != 1 ]]; then echo "== $row seed $seed: $j exists, skipped"; continue; fi
  echo "== $row seed $seed $(date -u +%H:%M:%S)"
  nice -n "${NICE:-10}" "$bin" bench --executor sim --policies "$pols" "${args[@]}" --seed "$seed" \
    --duration 1800 --stop-after 5400 --parallel "${PARALLEL:-1}" --json "$out/.partial-$row-s$seed.json" > "$out/$row-s$seed.txt" 2>&1
  mv "$out/.partial-$row-s$seed.json" "$j"
done
