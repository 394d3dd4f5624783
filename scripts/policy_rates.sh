#!/usr/bin/env bash
# Issue 12/21 Show 1: every policy at three rates per family (light load up to
# about 1.2x pitstop's sustained rate), 1,800 s windows, with the predictor
# serve uses (bench's default); then pitstop and lamps with --predictor oracle
# (the upper bound) at the same rates (ORACLE=0 skips them).
#
#   scripts/policy_rates.sh OUTDIR SEED [FAMILY...]
#
# FAMILY names a workload on its profile (the profiles of docs/results-policies.md);
# the default is the four of Session 4. BIN picks the binary (bin/pitstop),
# PARALLEL the runs at once (2). The top rate of each of the nine other
# families is about 1.2x pitstop's sustained rate found with seed 1
# (docs/results-policies.md, "Show 1-3 on the other nine families"); react's
# search was stopped between 8 (sustained) and 16, and its grid is Show 2's.
# Session 15 raised the top rate of seven families to 1.2x pitstop's sustained
# rate of today (3-seed means): infercept-multi 6.9, infercept-multi-vicuna 1.2,
# infercept-single 14.9, infercept-single-vicuna 2.4, coding 0.46, fanout 0.16,
# chat 0.63 (docs/results-policies.md, "session 15, lead"); every policy's rows
# at those rates, 3 seeds, are in docs/img/policies-session15/lead/default-grid.
#
# For the oracle-against-serve runs (issue 21 Show 3): SERVE=0 skips the
# serve run (its JSON is reused), ORACLE_POLICIES lists the oracle runs'
# policies (default pitstop,lamps; infercept reads a prediction too, the
# tool time at tool calls: add it on families with tools; fcfs, vllm-opt and
# atlas read none), FEATURES is passed as
# --engine-features (unset: bench's default), SERVE_POLICIES replaces the
# serve run's policies (default: all six).
set -euo pipefail
out=$1 seed=$2
shift 2
fams=("$@")
[[ ${#fams[@]} -eq 0 ]] && fams=(infercept-multi mixed coding fanout)
bin=${BIN:-bin/pitstop}
mkdir -p "$out"
P=${SERVE_POLICIES:-fcfs,vllm-opt,infercept,lamps,atlas,pitstop}
for f in "${fams[@]}"; do
  w=$f
  case $f in
    infercept-multi) args=(--profile a100-40g-gptj-6b --rates 2,4,6.9) ;;
    mixed) args=(--profile a100-80g-llama3-8b --rates 0.2,0.5,0.7) ;;
    coding) args=(--profile a100-80g-llama3-8b --rates 0.1,0.25,0.46) ;;
    fanout) args=(--profile a100-80g-llama3-8b --rates 0.05,0.1,0.16) ;;
    infercept-single) args=(--profile a100-40g-gptj-6b --rates 4,10,14.9) ;;
    infercept-multi-vicuna) w=infercept-multi args=(--profile a100-40g-vicuna-13b --rates 0.25,0.5,1.2) ;;
    infercept-single-vicuna) w=infercept-single args=(--profile a100-40g-vicuna-13b --rates 1,1.5,2.4) ;;
    chat) args=(--profile a100-80g-llama3-8b --rates 0.1,0.175,0.63) ;;
    react) args=(--profile a100-80g-llama3-8b --rates 2,8,12) ;;
    mcts) args=(--profile a100-80g-llama3-8b --rates 0.1,0.25,0.4) ;;
    azure-conv) args=(--profile a100-80g-llama3-8b --rates 3,5,6) ;;
    mooncake-conv) args=(--profile a100-80g-llama3-8b --rates 0.1,0.3,0.5) ;;
    azure-code) args=(--profile a100-80g-llama3-8b --rates 0.5,1,1.35) ;;
    *) echo "unknown family $f (valid: infercept-multi, mixed, coding, fanout, infercept-single, infercept-multi-vicuna, infercept-single-vicuna, chat, react, mcts, azure-conv, mooncake-conv, azure-code)" >&2; exit 2 ;;
  esac
  feat=()
  [[ -n ${FEATURES:-} ]] && feat=(--engine-features "$FEATURES")
  echo "== $f seed $seed $(date -u +%H:%M:%S)"
  [[ ${SERVE:-1} == 0 ]] || nice -n 10 "$bin" bench --workload "$w" --policies $P "${feat[@]}" --duration 1800 --seed "$seed" --stop-after 5400 --parallel "${PARALLEL:-2}" \
    "${args[@]}" --json "$out/$f-s$seed.json" > "$out/$f-s$seed.txt" 2>&1
  [[ ${ORACLE:-1} == 0 ]] && continue
  nice -n 10 "$bin" bench --workload "$w" --policies "${ORACLE_POLICIES:-pitstop,lamps}" --predictor oracle "${feat[@]}" \
    --duration 1800 --seed "$seed" --stop-after 5400 --parallel "${PARALLEL:-2}" "${args[@]}" --json "$out/$f-s$seed-oracle.json" > "$out/$f-s$seed-oracle.txt" 2>&1
done
