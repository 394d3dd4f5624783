# usage: pts.sh TAIL  -> pitstop-only Show-1 points on the three trace families
B=${B:-/work/wt/azure12/bin/pitstop}
for fr in "azure-code 0.5 1 1.35" "azure-conv 3 5 6" "mooncake-conv 0.1 0.3 0.5"; do set -- $fr; f=$1; shift
for r in "$@"; do printf "%s @%s " $f $r; nice -n 10 $B bench --workload $f --profile a100-80g-llama3-8b --policies pitstop --rates $r --duration 1800 --seed 1 --stop-after 5400 --parallel 1 --pitstop-tail $T 2>&1 | grep "pitstop  " | awk '{print "mean",$4,"p99",$7,"thr",$12}'; done; done
