#!/bin/bash
# shadow accuracy: fcfs real vs the shadow's per-call prediction (default and -queue), Show 1's rates, seed 1
cd "${1:-.}"
D=${DIAG:-./diag}   # a build of the commit with diag14.patch applied
for x in "azure-conv 3 5 6" "azure-code 0.5 1 1.35" "mixed 0.2 0.5 0.7" "chat 0.1 0.175 0.225" "coding 0.1 0.25 0.36"; do
  set -- $x; f=$1; shift
  for r in "$@"; do
    for pol in fcfs def queue; do
      P=pitstop; T=aging+warm+first-final-gated-fit
      [[ $pol == fcfs ]] && P=fcfs
      [[ $pol == queue ]] && T=$T-queue
      DIAG_CALLS=$f-$r-$pol.calls DIAG_DL=$f-$r-$pol.dl nice -n 10 $D bench --workload $f --profile a100-80g-llama3-8b --policies $P --rates $r --duration 1800 --seed 1 --stop-after 5400 --parallel 1 --pitstop-tail $T > $f-$r-$pol.txt 2>&1
    done
  done
done
echo done
