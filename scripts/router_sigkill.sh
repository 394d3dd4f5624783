#!/usr/bin/env bash
# Show 2 of docs/results-router.md: three scripted pitstop backends and a router on loopback,
# go-openai clients running tool-using programs (examples/routerload), one backend killed with
# SIGKILL at mid-load and restarted 3 s later. The backends pace the scripted model at
# PACE (default 0.3) of a simulated A100 so that streams are in flight when the kill comes.
#   scripts/router_sigkill.sh BIN/pitstop BIN/routerload [BASEPORT]
set -euo pipefail
PITSTOP=$1 LOAD=$2 BASE=${3:-18200}
dir=$(mktemp -d)
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT
backend() { "$PITSTOP" serve --model scripted-test --pace "${PACE:-0.3}" --addr 127.0.0.1:$1 >"$dir/b$1.log" 2>&1 & echo $!; }
for i in 1 2 3; do pids+=("$(backend $((BASE + i)))"); done
victim=${pids[1]}
sleep 2
"$PITSTOP" serve --addr 127.0.0.1:$BASE --health-interval 1s \
  --backend http://127.0.0.1:$((BASE + 1)),kind=pitstop,http://127.0.0.1:$((BASE + 2)),kind=pitstop,http://127.0.0.1:$((BASE + 3)),kind=pitstop \
  >"$dir/router.log" 2>&1 &
pids+=($!)
sleep 2
"$LOAD" -router http://127.0.0.1:$BASE -clients 100 -programs 8 >"$dir/load.json" &
load=$!
sleep 4
kill_ms=$(date +%s%3N)
kill -9 "$victim"
echo "SIGKILL backend 127.0.0.1:$((BASE + 2)) at unix ms $kill_ms"
sleep 3
pids+=("$(backend $((BASE + 2)))")
restart_ms=$(date +%s%3N)
echo "restarted it at unix ms $restart_ms"
wait $load || true
cat "$dir/load.json"
python3 - "$dir/load.json" "$kill_ms" <<'PY'
import json, sys
r = json.load(open(sys.argv[1])); kill = int(sys.argv[2]) - r["StartUnixMs"]
late = [t for t in (r["FailedAtMs"] or []) if t > kill + 1000]
print(f"kill at +{kill} ms; failed calls: {r['Failed']} (streamed {r['StreamFailed']}, not streamed {r['NonStreamFailed']}); failures later than 1 s after the kill: {len(late)}")
PY
sleep 2
echo "backends after the run:"
curl -s http://127.0.0.1:$BASE/v1/backends | python3 -c 'import json,sys; [print(" ", b["name"], "up" if b["up"] else "down", "calls", b["calls"], "failures", b["failures"]) for b in json.load(sys.stdin)["data"]]'
before=$(curl -s http://127.0.0.1:$BASE/v1/backends | python3 -c 'import json,sys; print([b["calls"] for b in json.load(sys.stdin)["data"]][1])')
"$LOAD" -router http://127.0.0.1:$BASE -clients 30 -programs 2 >"$dir/load2.json" || true
after=$(curl -s http://127.0.0.1:$BASE/v1/backends | python3 -c 'import json,sys; print([b["calls"] for b in json.load(sys.stdin)["data"]][1])')
echo "a second load of 30 clients after the restart: the restarted backend took $((after - before)) generations; failed calls: $(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["Failed"])' "$dir/load2.json")"
grep -E 'backend (down|up)|moving' "$dir/router.log" | head -5
