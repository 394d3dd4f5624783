#!/usr/bin/env bash
# Session 9 (issue 12 Show 3 on coding and fanout): the partial last block and the rescue.
# The commands behind docs/results-policies.md "2026-11-27 (session 9): the partial last
# block". BIN_BEFORE built at 083a77c (main before this work), BIN_TAIL at 6ac0560 (the tail
# kept), BIN_RESCUE at 46ec99c (the rescue and its price, without the cost rule), BIN at
# 0a334c6 (the default). rescue-unpriced/: a build of 46ec99c without its handling/ change
# (not committed). The probe of "Where the recompute came from" was a temporary patch, not
# committed.
set -euo pipefail
out=${OUT:-docs/img/policies-session9/tail}
bin=${BIN:-bin/pitstop}
SERVE_POLICIES=infercept,pitstop ORACLE=0 PARALLEL=1 BIN=$BIN_BEFORE scripts/policy_rates.sh "$out/before" 1 coding fanout
SERVE_POLICIES=fcfs,vllm-opt,lamps,atlas ORACLE=0 PARALLEL=1 BIN=$BIN_BEFORE scripts/policy_rates.sh "$out/before-baselines" 1 coding fanout
SERVE_POLICIES=fcfs,vllm-opt,infercept,lamps,atlas ORACLE=0 PARALLEL=1 BIN=$BIN_BEFORE scripts/policy_rates.sh "$out/before-baselines" 1 infercept-multi
SERVE_POLICIES=pitstop ORACLE=0 PARALLEL=1 BIN=$BIN_BEFORE scripts/policy_rates.sh "$out/before" 1 infercept-multi mixed
ORACLE=0 PARALLEL=1 scripts/policy_check.sh "$BIN_TAIL" "$out/tail-kept" coding fanout
ORACLE=0 PARALLEL=1 scripts/policy_check.sh "$bin" "$out/check" coding fanout
ORACLE=0 PARALLEL=1 scripts/policy_check.sh "$bin" "$out/check-im" infercept-multi mixed
for s in 2 3; do
  for w in coding:0.36 fanout:0.14; do
    nice -n 10 "$bin" bench --workload "${w%:*}" --profile a100-80g-llama3-8b --rates "${w#*:}" \
      --policies fcfs,vllm-opt,infercept,lamps,atlas,pitstop --duration 1800 --seed $s --stop-after 5400 \
      --parallel 1 --json "$out/seeds/${w%:*}-s$s.json"
    nice -n 10 "$BIN_BEFORE" bench --workload "${w%:*}" --profile a100-80g-llama3-8b --rates "${w#*:}" \
      --policies pitstop --duration 1800 --seed $s --stop-after 5400 --parallel 1 --json "$out/seeds/${w%:*}-s$s-before.json"
  done
done
for b in "before-083a77c:$BIN_BEFORE" "rescue-without-cost-rule-46ec99c:$BIN_RESCUE" "after-0a334c6:$bin"; do
  nice -n 10 "${b#*:}" bench --workload infercept-multi --profile a100-40g-gptj-6b --rates 5.2 \
    --policies infercept,lamps,pitstop --duration 1800 --seed 1 --stop-after 5400 --parallel 1 --json "$out/im52/${b%%:*}.json"
done
