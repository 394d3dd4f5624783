#!/usr/bin/env bash
# make run: start `pitstop serve` with the built-in tiny tool-calling model
# (CPU executor, built-in tools) on a local port, run the example agent
# against it (each step: the model's tool call, the KV handling decision and
# why, the tool's result, the final answer), then stop the server.
# Usage: scripts/run_demo.sh PITSTOP_BIN AGENT_BIN PORT LOG
set -euo pipefail
BIN=$1 AGENT=$2 PORT=$3 LOG=$4
ADDR=127.0.0.1:$PORT
start=$(date +%s.%N)

mkdir -p "$(dirname "$LOG")"
# A busy port fails at once: the agent must never talk to a server this
# script did not start.
if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
	echo "make run: port $PORT is already in use on 127.0.0.1 (another pitstop?); choose another: make run PORT=18081" >&2
	exit 1
fi
"$BIN" serve --addr "$ADDR" >"$LOG" 2>&1 &
pid=$!
stop() {
	if kill -0 "$pid" 2>/dev/null; then
		kill -TERM "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
		echo "pitstop serve stopped (log: $LOG)"
	fi
}
trap stop EXIT INT TERM

echo "pitstop serve --addr $ADDR (pid $pid, log $LOG): the built-in tiny model on the CPU executor"
# Wait for our server: healthy, or exited (its log says why, e.g. a bind error).
for _ in $(seq 1 600); do
	if ! kill -0 "$pid" 2>/dev/null; then
		echo "pitstop serve exited before it was ready; its log:" >&2
		cat "$LOG" >&2
		trap - EXIT INT TERM
		exit 1
	fi
	grep -q 'pitstop serving' "$LOG" && break
	sleep 0.1
done
grep -m1 -o 'predictor="[^"]*"' "$LOG" | sed 's/^predictor=/length predictor: /; s/"//g' || true
status=0
if "$AGENT" -base-url "http://$ADDR/v1" -wait 60s; then :; else status=$?; fi
if [ "$status" -ne 0 ] && ! kill -0 "$pid" 2>/dev/null; then
	echo "pitstop serve is not running; its log:" >&2
	cat "$LOG" >&2
fi
echo
grep -m1 'pitstop serving' "$LOG" | sed 's/^/server: /' || true
# The engine's own account, from its Prometheus metrics.
if command -v curl >/dev/null && metrics=$(curl -fsS "http://$ADDR/metrics" 2>/dev/null); then
	echo "$metrics" | awk '
		/^pitstop_engine_iterations_total / { it = $2 }
		/^pitstop_engine_iteration_seconds_sum / { sec = $2 }
		/^pitstop_tokens_total\{kind="generated"\}/ { gen = $2 }
		/^pitstop_tokens_total\{kind="prompt"\}/ { pr = $2 }
		/^pitstop_prefix_cached_tokens_total / { pc = $2 }
		END { if (sec > 0) printf "server: %d engine iterations in %.3f s of engine time: %d prompt tokens submitted (%d found in the prefix cache), %d tokens generated, %.0f generated tokens/s of engine time\n", it, sec, pr, pc, gen, gen / sec }'
fi
stop
trap - EXIT INT TERM
awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "make run: %.1f s wall time (server start-up and calibration, the agent, shutdown)\n", b - a }'
exit "$status"
