#!/usr/bin/env bash
# make cluster-demo: three `pitstop serve --model scripted-test` backends and a router
# (`pitstop serve --backend ...`) on loopback, the example agent through the router, then the
# router's view of its backends (GET /v1/backends). Everything is stopped at the end.
# Usage: scripts/cluster_demo.sh PITSTOP_BIN AGENT_BIN BASEPORT LOGDIR
set -euo pipefail
BIN=$1 AGENT=$2 BASE=$3 LOGS=$4
mkdir -p "$LOGS"
for p in $BASE $((BASE + 1)) $((BASE + 2)) $((BASE + 3)); do
	if (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
		echo "make cluster-demo: port $p is already in use on 127.0.0.1; choose others: make cluster-demo CLUSTER_PORT=19000" >&2
		exit 1
	fi
done
pids=()
stop() { for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap stop EXIT INT TERM
wait_ready() { # pid log
	for _ in $(seq 1 300); do
		kill -0 "$1" 2>/dev/null || { echo "exited before it was ready; its log:" >&2; cat "$2" >&2; exit 1; }
		grep -qs 'pitstop serving' "$2" && return 0
		sleep 0.1
	done
	echo "not ready after 30 s; its log:" >&2; cat "$2" >&2; exit 1
}
backends=()
for i in 1 2 3; do
	port=$((BASE + i))
	"$BIN" serve --model scripted-test --pace 0.1 --addr 127.0.0.1:$port >"$LOGS/backend-$i.log" 2>&1 &
	pids+=($!)
	wait_ready "$!" "$LOGS/backend-$i.log"
	backends+=("http://127.0.0.1:$port,kind=pitstop")
	echo "backend $i: pitstop serve --model scripted-test on 127.0.0.1:$port (log $LOGS/backend-$i.log)"
done
"$BIN" serve --addr 127.0.0.1:$BASE --backend "$(IFS=,; echo "${backends[*]}")" >"$LOGS/router.log" 2>&1 &
pids+=($!)
wait_ready "$!" "$LOGS/router.log"
echo "router: pitstop serve --backend ... on 127.0.0.1:$BASE (log $LOGS/router.log)"
echo
# The scripted model calls the calculator on an arithmetic expression.
"$AGENT" -base-url "http://127.0.0.1:$BASE/v1" -wait 30s -questions 'What is 17*23?|What is (17+25)*3?|And 2+2*10?'
echo
echo "the router's backends (GET /v1/backends):"
curl -fsS "http://127.0.0.1:$BASE/v1/backends" | python3 -c 'import json,sys
d = json.load(sys.stdin)
print("  balancer:", d["balancer"])
for b in d["data"]:
    print("  %-16s %-7s up=%s calls=%d prefix-hit=%.2f latency=%.1fms" % (b["name"], b["kind"], b["up"], b["calls"], b["prefix_hit_rate"], b["latency_ms"]))'
