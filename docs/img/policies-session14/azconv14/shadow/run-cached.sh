cd "${1:-.}"   # OUTDIR of run.sh (its fcfs runs are reused)
mkdir -p ca
for x in "azure-conv 6" "azure-code 1.35" "mixed 0.5" "mixed 0.7" "chat 0.225" "coding 0.36"; do set -- $x
  for t in def queue; do T=aging+warm+first-final-gated-fit; [[ $t == queue ]] && T=$T-queue
  DIAG_CACHED=1 DIAG_DL=ca/$1-$2-$t.dl DIAG_CALLS=ca/$1-$2-$t.calls nice -n 10 ${DIAG:-./diag} bench --workload $1 --profile a100-80g-llama3-8b --policies pitstop --rates $2 --duration 1800 --seed 1 --stop-after 5400 --parallel 1 --pitstop-tail $T > ca/$1-$2-$t.txt 2>&1
  done
  ln -sf ../$1-$2-fcfs.calls ca/
done
cd ca && python3 "$(dirname "$0")"/an.py azure-conv:6 azure-code:1.35 mixed:0.5 mixed:0.7 chat:0.225 coding:0.36
