package main

import (
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"

	"github.com/pitstop-llm/pitstop/engine/sim"
	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/chat"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/runtime/testmodel"
)

// scriptedModelFlag selects the scripted test model in serve's --model.
const scriptedModelFlag = "scripted-test"

// serveModelFlags choose what serve serves: a model with real weights on
// the CPU executor (the default, the built-in tiny tool-calling model), or
// the scripted test model on the simulated executor.
type serveModelFlags struct {
	model, loadFormat, template, toolParser, servedName string
	seed                                                uint64
	profile                                             string
	pace                                                float64
	kvTokens, hostKVTokens                              int
	maxBatched, maxSeqs, swapBlocks                     int
	calibrate                                           time.Duration
}

func addServeModelFlags(fl *pflag.FlagSet, f *serveModelFlags) {
	fl.StringVar(&f.model, "model", builtin.Prefix+builtin.TinyTools, "model served: builtin:NAME (built in: "+strings.Join(builtin.Names(), ", ")+"), a Hugging Face model directory (config.json + safetensors + tokenizer.json; Llama, Qwen2, Mistral), or "+scriptedModelFlag+" (the scripted test model on the simulated executor, for tests)")
	fl.StringVar(&f.loadFormat, "load-format", "auto", "weights: auto (safetensors), safetensors, or dummy (random weights from config.json: for timing, the answers are noise)")
	fl.Uint64Var(&f.seed, "model-seed", 1, "seed of --load-format dummy weights")
	fl.StringVar(&f.template, "chat-template", "", "chat template, overriding the model's own: a FILE.jinja, or a built-in one: "+strings.Join(chat.Names(), ", "))
	fl.StringVar(&f.toolParser, "tool-parser", "", "tool-call format of a Jinja chat template (vLLM's names): "+strings.Join(chat.ToolFormatNames(), ", ")+" (default: detected from the template)")
	fl.StringVar(&f.servedName, "served-model-name", "", "model id clients ask for (default: the built-in model's name, or the directory's base name)")
	fl.IntVar(&f.kvTokens, "kv-tokens", 0, "device KV capacity in tokens (0: 16384 for a real model, capped at its context × --max-seqs; the profile's for "+scriptedModelFlag+")")
	fl.IntVar(&f.hostKVTokens, "host-kv-tokens", 0, "host-memory KV tier for swapped calls, in tokens (0: 4 × --kv-tokens for a real model, the profile's for "+scriptedModelFlag+"; negative: none)")
	fl.IntVar(&f.maxBatched, "max-batched-tokens", 256, "real model: token budget of one engine iteration (chunked prefill)")
	fl.IntVar(&f.maxSeqs, "max-seqs", 32, "real model: sequences in one engine iteration")
	fl.IntVar(&f.swapBlocks, "swap-blocks-per-iter", 0, "real model: swap budget per iteration in KV blocks (0: unlimited)")
	fl.DurationVar(&f.calibrate, "calibrate", 2*time.Second, "real model: time budget of the start-up calibration that prices the handling decisions (swap and recompute costs); 0: none, a fixed guess")
	fl.StringVar(&f.profile, "profile", runtime.DefaultProfile, "--model "+scriptedModelFlag+" only: simulated GPU cost profile, or a path to a profile .json")
	fl.Float64Var(&f.pace, "pace", 1, "--model "+scriptedModelFlag+" only: scale of the simulated iteration time slept on the real clock (1: the profiled GPU's speed, 0: no sleeping)")
}

// scripted reports whether the flags select the scripted test model.
func (f *serveModelFlags) scripted() bool {
	return f.model == scriptedModelFlag || f.model == testmodel.Name
}

// servedModel is what serve runs, described for the log.
type servedModel struct {
	description string // one line: what is served, on what
	executor    string // "cpu" or "sim"
	dir         string // the model directory ("" for the scripted model)
}

// apply validates the model flags and sets up cfg to serve the model:
// loading weights and calibrating the CPU executor for a real model.
// changed reports whether a flag was given on the command line.
func (f *serveModelFlags) apply(cfg *runtime.Config, changed func(string) bool) (servedModel, error) {
	switch {
	case f.kvTokens < 0:
		return servedModel{}, usagef("invalid --kv-tokens %d: must be >= 0", f.kvTokens)
	case f.maxBatched <= 0 || f.maxSeqs <= 0:
		return servedModel{}, usagef("--max-batched-tokens and --max-seqs must be positive")
	case f.swapBlocks < 0:
		return servedModel{}, usagef("--swap-blocks-per-iter must not be negative")
	case f.calibrate < 0:
		return servedModel{}, usagef("--calibrate must not be negative")
	}
	if f.scripted() {
		for _, name := range []string{"load-format", "model-seed", "chat-template", "tool-parser", "served-model-name", "max-batched-tokens", "max-seqs", "swap-blocks-per-iter", "calibrate"} {
			if changed(name) {
				return servedModel{}, usagef("--%s applies to a real model, not --model %s", name, scriptedModelFlag)
			}
		}
		if f.pace < 0 {
			return servedModel{}, usagef("invalid --pace %g: must be >= 0", f.pace)
		}
		prof, err := sim.LoadProfile(f.profile)
		if err != nil {
			return servedModel{}, usageError{err.Error()}
		}
		m, err := runtime.NewScriptedTestModel()
		if err != nil {
			return servedModel{}, err
		}
		cfg.Model, cfg.Profile, cfg.Pace, cfg.KVTokens, cfg.HostKVTokens = m, prof, f.pace, f.kvTokens, f.hostKVTokens
		return servedModel{executor: "sim",
			description: "SCRIPTED TEST MODEL " + testmodel.Name + " (fixed rules, not a language model; for tests) on the simulated executor, profile " + prof.Name}, nil
	}
	for _, name := range []string{"profile", "pace"} {
		if changed(name) {
			return servedModel{}, usagef("--%s applies to --model %s only (a real model runs on the CPU executor)", name, scriptedModelFlag)
		}
	}
	m, err := runtime.LoadWeightsModel(f.model, runtime.WeightsOptions{Name: f.servedName, LoadFormat: f.loadFormat, Seed: f.seed, Template: f.template, ToolParser: f.toolParser})
	if err != nil {
		return servedModel{}, usageError{err.Error()}
	}
	calib := f.calibrate
	if calib == 0 {
		calib = -1 // CPUOptions: none
	}
	b, err := runtime.NewCPUBackend(m, runtime.CPUOptions{KVTokens: f.kvTokens, HostKVTokens: f.hostKVTokens,
		MaxBatchedTokens: f.maxBatched, MaxSeqs: f.maxSeqs, SwapBlocksPerIter: f.swapBlocks, Calibrate: calib})
	if err != nil {
		return servedModel{}, err
	}
	*cfg = b.Apply(*cfg)
	desc := m.Describe() + ", on the CPU executor (" + b.Profile.Device + "), " +
		strconv.Itoa(b.Engine.NumBlocks*b.Engine.BlockSize) + " KV tokens on the device, " + strconv.Itoa(b.Engine.HostBlocks*b.Engine.BlockSize) + " in the host tier"
	if f.loadFormat == "dummy" {
		desc += " — DUMMY WEIGHTS: the answers are noise"
	}
	return servedModel{executor: "cpu", description: desc, dir: m.Dir()}, nil
}
