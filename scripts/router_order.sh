#!/usr/bin/env bash
# Show 3 of docs/results-router.md: does the router's program-aware order pay through HTTP?
# Three scripted pitstop backends (paced like a simulated A100: --pace 1), each limited by the
# router to 2 calls in flight, and the mixed workload (short and long programs) replayed with
# bench --target; once with the router's pitstop order, once with FCFS, fresh backends each time.
#   [RATE=2] scripts/router_order.sh BIN/pitstop [BASEPORT] [OUTDIR]
set -euo pipefail
P=$1 BASE=${2:-18300} OUT=${3:-out/router-order}
mkdir -p "$OUT"
for order in pitstop fcfs; do
	pids=()
	for i in 1 2 3; do
		"$P" serve --model scripted-test --pace 1 --addr 127.0.0.1:$((BASE + i)) >"$OUT/backend-$i-$order.log" 2>&1 &
		pids+=($!)
	done
	sleep 2
	"$P" serve --router-order $order --addr 127.0.0.1:$BASE \
		--backend http://127.0.0.1:$((BASE + 1)),kind=pitstop,max-inflight=2,http://127.0.0.1:$((BASE + 2)),kind=pitstop,max-inflight=2,http://127.0.0.1:$((BASE + 3)),kind=pitstop,max-inflight=2 \
		>"$OUT/router-$order.log" 2>&1 &
	pids+=($!)
	sleep 2
	"$P" bench --target http://127.0.0.1:$BASE --target-label router-$order --workload mixed --scale-tokens 0.1 \
		--scale-time 0.1 --rates "${RATE:-2}" --duration 15 --seed 1 --json "$OUT/$order.json" || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
done
