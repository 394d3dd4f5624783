#!/usr/bin/env bash
# issue 12 Show 2 on the six tool-pausing families after session 9's kept tail and rescue
# (docs/results-policies.md, "2026-11-27 (session 9): Show 2 on the tool-pausing families,
# after the kept tail"). Binary of commit 67eb1eb; run from the repository root, one search
# at a time (each at --parallel 2).
set -euo pipefail
go build -o bin/pitstop ./cmd/pitstop
for f in fanout coding infercept-multi infercept-multi-vicuna infercept-single-vicuna infercept-single; do
  nice -n 19 scripts/policy_sustained.sh docs/img/sustained-s9b fcfs,vllm-opt,infercept,lamps,atlas,pitstop $f
done
# the table: scripts/policy_sustained_table.py of branch show2 (commit e7f914e)
python3 scripts/policy_sustained_table.py docs/img/sustained-s9b fanout coding infercept-multi \
  infercept-multi-vicuna infercept-single-vicuna infercept-single
