#!/usr/bin/env bash
# Sustained rate per policy on the families of docs/results-policies.md
# (issue 12), with the predictor serve uses (bench's default, --predictor serve).
#
#   scripts/policy_sustained.sh OUTDIR POLICIES [FAMILY...] [-- extra bench flags]
#
# FAMILY: infercept-multi, mixed, coding, fanout (the default: these four), or one
# of the nine others as scripts/policy_rates.sh names them. The p99 targets are
# 3x the lowest p99 of the six policies at the light (lowest) rate of
# policy_rates.sh's grid, seed 1, to 3 significant figures: session 12's default
# grid, printed by `scripts/policy_standing.py targets
# docs/img/policies-session12/lead/default-grid` (which exits 1 when one here
# disagrees). SEEDS sets
# --sustained-seeds (3), PARALLEL --parallel (2) and NICE the niceness (10). Each
# search writes OUTDIR/<family>-<tag>.json and its plot, tag = POLICIES with
# commas as '+', then '-' TAG when TAG is set (so baselines and pitstop, or
# pitstop under different extra flags, can be searched apart and merged by
# scripts/policy_sustained_table.py). Settings are those of the 1,800 s tables.
set -euo pipefail
out=$1 pols=$2
shift 2
fams=()
while [[ $# -gt 0 && $1 != -- ]]; do fams+=("$1"); shift; done
[[ ${1:-} == -- ]] && shift
[[ ${#fams[@]} -eq 0 ]] && fams=(infercept-multi mixed coding fanout)
bin=${BIN:-bin/pitstop}
mkdir -p "$out"
tag=${pols//,/+}${TAG:+-$TAG}
for f in "${fams[@]}"; do
  w=$f
  case $f in
    infercept-multi) args=(--profile a100-40g-gptj-6b --sustained-start 2 --sustained-resolution 0.25 --sustained-p99 994) ;;
    mixed) args=(--profile a100-80g-llama3-8b --sustained-start 0.5 --sustained-resolution 0.05 --sustained-p99 15.4) ;;
    coding) args=(--profile a100-80g-llama3-8b --sustained-start 0.25 --sustained-resolution 0.025 --sustained-p99 1080) ;;
    fanout) args=(--profile a100-80g-llama3-8b --sustained-start 0.125 --sustained-resolution 0.025 --sustained-p99 209) ;;
    infercept-single) args=(--profile a100-40g-gptj-6b --sustained-start 10 --sustained-resolution 0.5 --sustained-p99 188) ;;
    infercept-multi-vicuna) w=infercept-multi args=(--profile a100-40g-vicuna-13b --sustained-start 0.5 --sustained-resolution 0.0625 --sustained-p99 1110) ;;
    infercept-single-vicuna) w=infercept-single args=(--profile a100-40g-vicuna-13b --sustained-start 1.5 --sustained-resolution 0.125 --sustained-p99 197) ;;
    chat) args=(--profile a100-80g-llama3-8b --sustained-start 0.2 --sustained-resolution 0.025 --sustained-p99 84.6) ;;
    react) args=(--profile a100-80g-llama3-8b --sustained-start 8 --sustained-resolution 0.5 --sustained-p99 5.31) ;;
    mcts) args=(--profile a100-80g-llama3-8b --sustained-start 0.3 --sustained-resolution 0.025 --sustained-p99 9.89) ;;
    azure-conv) args=(--profile a100-80g-llama3-8b --sustained-start 5 --sustained-resolution 0.25 --sustained-p99 41) ;;
    mooncake-conv) args=(--profile a100-80g-llama3-8b --sustained-start 0.4 --sustained-resolution 0.025 --sustained-p99 236) ;;
    azure-code) args=(--profile a100-80g-llama3-8b --sustained-start 1 --sustained-resolution 0.125 --sustained-p99 45.6) ;;
    *) echo "unknown family $f (valid: infercept-multi, mixed, coding, fanout, infercept-single, infercept-multi-vicuna, infercept-single-vicuna, chat, react, mcts, azure-conv, mooncake-conv, azure-code)" >&2; exit 2 ;;
  esac
  echo "== $f $pols $(date -u +%H:%M:%S)"
  nice -n "${NICE:-10}" "$bin" bench --sustained --workload "$w" --policies "$pols" --parallel "${PARALLEL:-2}" \
    --duration 1800 --sustained-seeds "${SEEDS:-3}" "${args[@]}" "$@" \
    --json "$out/$f-$tag.json" --out "$out/$f-$tag" > "$out/$f-$tag.txt" 2>&1
  tail -n 12 "$out/$f-$tag.txt"
done
