#!/usr/bin/env bash
# openai_node_check.sh: run the official OpenAI Node SDK (installed into the
# cache by fetch_openai_node.sh) against `pitstop serve` serving the built-in
# tiny model: stop sequences, declared tools only, tool_choice, response_format
# json_schema, the Responses API with previous_response_id, streamed events.
#
#   CHECK_N   requests per repeated check (default 100)
#   PORT      port of the server (default 18090)
set -euo pipefail
cd "$(dirname "$0")/.."
modules="$(scripts/fetch_openai_node.sh)"
go build -o bin/pitstop ./cmd/pitstop
port="${PORT:-18090}"
mkdir -p out
log=out/openai-node-serve.log
bin/pitstop serve --addr "127.0.0.1:${port}" >"${log}" 2>&1 &
pid=$!
trap 'kill "${pid}" 2>/dev/null || true; wait "${pid}" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do
	curl -fsS "http://127.0.0.1:${port}/healthz" >/dev/null 2>&1 && break
	kill -0 "${pid}" 2>/dev/null || { cat "${log}" >&2; exit 1; }
	sleep 0.2
done
# ES modules resolve packages from the script's directory up: run a copy
# beside the cached node_modules.
cp scripts/openai_node_check.mjs "$(dirname "${modules}")/openai_node_check.mjs"
PITSTOP_URL="http://127.0.0.1:${port}" node "$(dirname "${modules}")/openai_node_check.mjs"
