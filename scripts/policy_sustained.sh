#!/usr/bin/env bash
# Sustained rate per policy on the four families of docs/results-policies.md
# (issue 12), with the predictor serve uses (bench's default, --predictor serve).
#
#   scripts/policy_sustained.sh OUTDIR POLICIES [FAMILY...] [-- extra bench flags]
#
# FAMILY: infercept-multi, mixed, coding, fanout (default: all four). Each search
# writes OUTDIR/<family>-<tag>.json and its plot, tag = POLICIES with commas as
# '+' (so baselines and pitstop can be searched apart and merged by
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
tag=${pols//,/+}
for f in "${fams[@]}"; do
  case $f in
    infercept-multi) args=(--profile a100-40g-gptj-6b --sustained-start 2 --sustained-resolution 0.25 --sustained-p99 984) ;;
    mixed) args=(--profile a100-80g-llama3-8b --sustained-start 0.5 --sustained-resolution 0.05 --sustained-p99 15.3) ;;
    coding) args=(--profile a100-80g-llama3-8b --sustained-start 0.25 --sustained-resolution 0.025 --sustained-p99 1020) ;;
    fanout) args=(--profile a100-80g-llama3-8b --sustained-start 0.125 --sustained-resolution 0.025 --sustained-p99 180) ;;
    *) echo "unknown family $f (valid: infercept-multi, mixed, coding, fanout)" >&2; exit 2 ;;
  esac
  echo "== $f $pols $(date -u +%H:%M:%S)"
  nice -n 10 "$bin" bench --sustained --workload "$f" --policies "$pols" --parallel 2 \
    --duration 1800 --sustained-seeds 3 "${args[@]}" "$@" \
    --json "$out/$f-$tag.json" --out "$out/$f-$tag" > "$out/$f-$tag.txt" 2>&1
  tail -n 12 "$out/$f-$tag.txt"
done
