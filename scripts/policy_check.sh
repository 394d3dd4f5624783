#!/usr/bin/env bash
# Checks a candidate binary against issue 12 Show 1's bars: runs Show 1's grid
# (scripts/policy_rates.sh: every non-oracle policy at each family's three
# rates, 1,800 s, --predictor serve) with BIN and prints, per family and rate,
# whether pitstop has the lowest mean, a p99 within 1.1x of the lowest, a
# throughput within 0.98x of the highest and no more recomputation than
# infercept (scripts/policy_rates_table.py --summary). Exit status 1 when any
# bar fails, 2 on bad usage.
#
#   scripts/policy_check.sh BIN OUTDIR [FAMILY...]
#
# FAMILY: any of policy_rates.sh's (default: all thirteen). SEEDS (default "1")
# lists the seeds; ORACLE=1 adds the oracle rows (off by default: they are not
# part of the bars). Runs are one at a time (each bench runs PARALLEL, 2, at once);
# on the shared 2-core VM (load 10-20) one seed of react, mcts or infercept-single took
# 11-15 min at PARALLEL=1, the three trace families seconds (mooncake-conv: 3 s).
set -euo pipefail
if [[ $# -lt 2 ]]; then
  echo "usage: scripts/policy_check.sh BIN OUTDIR [FAMILY...]" >&2
  exit 2
fi
bin=$1 out=$2
shift 2
[[ -x $bin ]] || { echo "policy_check: $bin is not an executable pitstop binary" >&2; exit 2; }
fams=("$@")
[[ ${#fams[@]} -eq 0 ]] && fams=(infercept-multi infercept-single infercept-multi-vicuna infercept-single-vicuna
  mixed chat react mcts coding fanout azure-conv mooncake-conv azure-code)
here=$(dirname "$0")
seeds=(${SEEDS:-1})
for s in "${seeds[@]}"; do
  BIN=$bin ORACLE=${ORACLE:-0} "$here/policy_rates.sh" "$out" "$s" "${fams[@]}"
done
list=$(IFS=,; echo "${fams[*]}")
"$here/policy_rates_table.py" --summary "$out" "$list" "${seeds[@]}" | tee "$out/check.md"
