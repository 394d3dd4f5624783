#!/usr/bin/env bash
# Session 8 (issues 12 and 21): recompute and re-admission. The commands behind
# docs/results-policies.md "2026-11-27 (session 8)". BIN built at commit b666e41 (the
# default); screen/off and ablation/ at a341ccd (the same code path with the rule off),
# screen/cached-hostterm at a341ccd (its default), screen/held at b8b764a.
# screen/host-unshared: a build of a341ccd whose host term charges each call on the host
# the whole rate (readmitKey: u += forced.perSecond, without · blocks / host blocks);
# not committed. Tags of screen/points.txt: TAG WORKLOAD PROFILE RATE.
set -euo pipefail
bin=${BIN:-bin/pitstop}
out=${OUT:-docs/img/policies-session8/recompute}
while read -r tag w p r; do
  common=(--workload "$w" --profile "$p" --rates "$r" --duration 1800 --seed 1 --stop-after 5400 --parallel 1)
  case $tag in im52|imv08|is1275|isv18|isv15|mixed07|coding036|fanout014)
    nice -n 10 "$bin" bench "${common[@]}" --policies infercept,lamps,vllm-opt --json "$out/screen/baselines/$tag.json" ;;
  esac
  for v in off cached; do
    nice -n 10 "$bin" bench "${common[@]}" --policies pitstop --pitstop-readmit $v --json "$out/screen/$v/$tag.json"
  done
  case $tag in im52|imv08|is1275)
    for v in held sunk; do
      nice -n 10 "$bin" bench "${common[@]}" --policies pitstop --pitstop-readmit $v --json "$out/screen/$v/$tag.json"
    done ;;
  esac
done < <(grep -E '^(im52|imv08|is1275|im4|isv18|isv15|mixed07|mixed05|coding036|fanout014|azcode1) ' "$out/screen/points.txt")
PARALLEL=1 scripts/policy_check.sh "$bin" "$out/check" infercept-multi mixed infercept-multi-vicuna \
  infercept-single-vicuna coding fanout
# ablation: the rule off on policy_rates.sh's grids
nice -n 10 "$bin" bench --workload infercept-multi --profile a100-40g-gptj-6b --rates 2,4,5.2 --policies pitstop \
  --pitstop-readmit off --duration 1800 --seed 1 --stop-after 5400 --parallel 1 --json "$out/ablation/infercept-multi-off.json"
nice -n 10 "$bin" bench --workload mixed --profile a100-80g-llama3-8b --rates 0.2,0.5,0.7 --policies pitstop \
  --pitstop-readmit off --duration 1800 --seed 1 --stop-after 5400 --parallel 1 --json "$out/ablation/mixed-off.json"
