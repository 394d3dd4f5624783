#!/bin/bash
# pitstop and vllm-opt at mixed's tie points, arrivals and think times scaled by 1 +- 1e-4
for st in 0.9999 1.0001; do for s in 1 2 3; do
 nice -n 10 ./pitstop-cev bench --workload mixed --policies pitstop,vllm-opt,lamps,atlas --duration 1800 --seed $s --stop-after 5400 --parallel 2 --profile a100-80g-llama3-8b --rates 0.5,0.7 --scale-time $st --json /tmp/mixed14/chaos/st$st-s$s.json > /tmp/mixed14/chaos/st$st-s$s.txt 2>&1
done; done
echo done $(date) >> /tmp/mixed14/chaos/log
