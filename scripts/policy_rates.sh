#!/usr/bin/env bash
# Issue 12/21 Show 1: every policy at three rates per family (light load up to
# about 1.2x pitstop's sustained rate), 1,800 s windows, with the predictor
# serve uses (bench's default); then pitstop and lamps with --predictor oracle
# (the upper bound) at the same rates.
#
#   scripts/policy_rates.sh OUTDIR SEED [FAMILY...]
set -euo pipefail
out=$1 seed=$2
shift 2
fams=("$@")
[[ ${#fams[@]} -eq 0 ]] && fams=(infercept-multi mixed coding fanout)
bin=${BIN:-bin/pitstop}
mkdir -p "$out"
P=fcfs,vllm-opt,infercept,lamps,atlas,pitstop
for f in "${fams[@]}"; do
  case $f in
    infercept-multi) args=(--profile a100-40g-gptj-6b --rates 2,4,5.2) ;;
    mixed) args=(--profile a100-80g-llama3-8b --rates 0.2,0.5,0.7) ;;
    coding) args=(--profile a100-80g-llama3-8b --rates 0.1,0.25,0.36) ;;
    fanout) args=(--profile a100-80g-llama3-8b --rates 0.05,0.1,0.14) ;;
    chat) args=(--profile a100-80g-llama3-8b --rates 0.2,0.5,0.8) ;;
    *) echo "unknown family $f" >&2; exit 2 ;;
  esac
  echo "== $f seed $seed $(date -u +%H:%M:%S)"
  nice -n 10 "$bin" bench --workload "$f" --policies $P --duration 1800 --seed "$seed" --stop-after 5400 \
    "${args[@]}" --json "$out/$f-s$seed.json" > "$out/$f-s$seed.txt" 2>&1
  nice -n 10 "$bin" bench --workload "$f" --policies pitstop,lamps --predictor oracle --duration 1800 --seed "$seed" \
    --stop-after 5400 "${args[@]}" --json "$out/$f-s$seed-oracle.json" > "$out/$f-s$seed-oracle.txt" 2>&1
done
