# pitstop: two commands on a fresh machine.
#   make run   — the main job: the policy comparison on infercept-multi (simulated A100)
#   make test  — every test (installs the ONNX Runtime library on first use)
SHELL := /bin/bash
GO ?= go
BIN := bin/pitstop
OUT ?= out
# The ONNX Runtime library the predictor loads; fetched once from npm into a cache.
ORT_LIB = $(shell scripts/fetch_ort.sh)
# Packages whose goroutines meet run under the race detector.
RACE_PKGS := ./engine/... ./kvswap/... ./tools/... ./bench/report/... ./runtime/...

.PHONY: run test build vet bench-go clean ort

build:
	$(GO) build -o $(BIN) ./cmd/pitstop

ort:
	@scripts/fetch_ort.sh >/dev/null

run: build
	@mkdir -p $(OUT)
	$(BIN) bench --workload infercept-multi --executor sim --profile a100-40g-gptj-6b \
		--policies fcfs,vllm-opt,infercept --rates 1,3,5 --duration 1800 \
		--json $(OUT)/infercept-multi.json --csv $(OUT)/infercept-multi.csv --out $(OUT)

vet:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { echo "gofmt needed:"; gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...

test: ort vet
	PITSTOP_ORT_LIB=$(ORT_LIB) $(GO) test -count=1 ./...
	PITSTOP_ORT_LIB=$(ORT_LIB) $(GO) test -count=1 -race $(RACE_PKGS)

bench-go:
	PITSTOP_ORT_LIB=$(ORT_LIB) $(GO) test -run '^$$' -bench . -benchmem ./engine/... ./kvswap/... ./handling/... ./predictor/...

clean:
	rm -rf bin $(OUT)
