#!/usr/bin/env bash
# ablation: pitstop variants at infercept-multi and mixed grids, seed 1
bin=bin/pitstop out=docs/img/policies-session7/ablation
mkdir -p $out
run() { tag=$1; shift
  for fam in infercept-multi mixed; do
    case $fam in infercept-multi) a=(--profile a100-40g-gptj-6b --rates 2,4,5.2);; mixed) a=(--profile a100-80g-llama3-8b --rates 0.2,0.5,0.7);; esac
    [[ -f $out/$fam-$tag.json ]] && continue
    nice -n 10 $bin bench --workload $fam "${a[@]}" --policies pitstop --duration 1800 --seed 1 --stop-after 5400 --parallel 1 "$@" --json $out/$fam-$tag.json > $out/$fam-$tag.txt 2>&1
    echo "$fam $tag $(date -u +%T)"
  done
}
run default
run guard --pitstop-tail guard
run power1 --pitstop-aging-power 1
run wait --pitstop-aging-clock wait
run noguard --pitstop-slowdown -1
run fcfstail --pitstop-fcfs-tail
run gittins --program-order gittins
