package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/pitstop-llm/pitstop/models/builtin"
	"github.com/pitstop-llm/pitstop/models/cpu"
	"github.com/pitstop-llm/pitstop/models/llama"
	"github.com/pitstop-llm/pitstop/runtime"
	"github.com/pitstop-llm/pitstop/training/tinytools"
)

func init() { subcommands = append(subcommands, newTrainTinyCmd, newEvalTinyCmd) }

func newTrainTinyCmd() *cobra.Command {
	o := tinytools.DefaultTrainOptions()
	cmd := &cobra.Command{
		Use:   "train-tiny",
		Short: "Train the built-in tiny tool-calling model on generated tool-use dialogues",
		Long: `train-tiny generates tool-use dialogues over the built-in tools (calculator,
current_time, unit_convert) in the Qwen2.5/Hermes chat format, trains a byte-level
BPE tokenizer on them, then trains a small Llama-architecture model in Go (hand-written
backward pass, AdamW, cosine schedule, loss on the assistant's tokens only) and writes
a Hugging Face model directory: config.json, model.safetensors, tokenizer.json,
tokenizer_config.json, loss.png and train.json. The same flags and seed give the same
data; --resume continues from the directory's checkpoint.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case o.Steps <= 0 || o.Batch <= 0:
				return usagef("--steps and --batch must be positive")
			case !(o.LR > 0):
				return usagef("--lr must be positive")
			case o.Dim <= 0 || o.Layers <= 0 || o.Heads <= 0 || o.FF <= 0:
				return usagef("--dim, --layers, --heads and --ff must be positive")
			case o.Dim%o.Heads != 0:
				return usagef("--dim %d must be a multiple of --heads %d", o.Dim, o.Heads)
			case o.KVHeads <= 0 || o.Heads%o.KVHeads != 0:
				return usagef("--heads %d must be a multiple of --kv-heads %d", o.Heads, o.KVHeads)
			case o.VocabSize < 256+len(tinytools.Specials):
				return usagef("--vocab must be at least %d", 256+len(tinytools.Specials))
			}
			o.Log = cmd.OutOrStdout()
			_, err := tinytools.Train(o)
			return err
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.Out, "out", o.Out, "model directory to write")
	fl.IntVar(&o.Steps, "steps", o.Steps, "training steps")
	fl.IntVar(&o.Batch, "batch", o.Batch, "dialogues per step on short (curriculum) prompts")
	fl.IntVar(&o.FullBatch, "full-batch", o.FullBatch, "dialogues per step on full prompts (with the tools block)")
	fl.Float64Var(&o.LR, "lr", o.LR, "peak learning rate")
	fl.Float64Var(&o.MinLRFrac, "min-lr-frac", o.MinLRFrac, "final learning rate as a fraction of --lr (cosine decay)")
	fl.IntVar(&o.Warmup, "warmup", o.Warmup, "linear warmup steps")
	fl.Float64Var(&o.WeightDecay, "weight-decay", o.WeightDecay, "AdamW weight decay of the matrices")
	fl.Int64Var(&o.Seed, "seed", o.Seed, "seed of the data, the tokenizer and the initial weights")
	fl.IntVar(&o.Workers, "workers", 0, "goroutines over the batch (0: GOMAXPROCS)")
	fl.IntVar(&o.Dim, "dim", o.Dim, "hidden size")
	fl.IntVar(&o.Layers, "layers", o.Layers, "decoder layers")
	fl.IntVar(&o.Heads, "heads", o.Heads, "attention heads")
	fl.IntVar(&o.KVHeads, "kv-heads", o.KVHeads, "key/value heads (grouped-query attention when fewer than --heads)")
	fl.IntVar(&o.FF, "ff", o.FF, "MLP intermediate size")
	fl.IntVar(&o.VocabSize, "vocab", o.VocabSize, "tokenizer vocabulary size")
	fl.IntVar(&o.TokenizerDocs, "tokenizer-docs", o.TokenizerDocs, "dialogues the tokenizer is trained on")
	fl.IntVar(&o.CurriculumSteps, "curriculum-steps", o.CurriculumSteps, "length of the curriculum phase, mostly on short prompts (a one-line tools note instead of the tools block)")
	fl.Float64Var(&o.CurriculumShort, "curriculum-short", o.CurriculumShort, "fraction of curriculum steps on short prompts")
	fl.Float64Var(&o.ShortMix, "short-mix", o.ShortMix, "fraction of later steps still on short prompts")
	fl.IntVar(&o.CheckpointEvery, "checkpoint-every", o.CheckpointEvery, "steps between checkpoints (0: none)")
	fl.IntVar(&o.EvalEvery, "eval-every", o.EvalEvery, "steps between held-out losses (0: none)")
	fl.BoolVar(&o.Resume, "resume", false, "continue from the checkpoint in --out")
	fl.BoolVar(&o.KeepCheckpoint, "keep-checkpoint", false, "keep --out/checkpoint (weights, optimizer state) after the last step")
	return cmd
}

func newEvalTinyCmd() *cobra.Command {
	var (
		dir, jsonPath string
		n, workers    int
		seed          int64
		show, variant int
		refN          int
		served        bool
		policyName    string
	)
	cmd := &cobra.Command{
		Use:   "eval-tiny",
		Short: "Evaluate the tiny tool-calling model on held-out generated prompts, through the whole tool loop",
		Long: `eval-tiny plays held-out generated dialogues the way the server does: it renders
the prompt with the chat template, decodes greedily, parses the Hermes tool calls, runs
the built-in tools, appends their results with the template and decodes the final
answer. It prints how often the model called the right tool with a well-formed call,
with exactly the right arguments, answered with the tool's result, and answered
directly when no tool was needed.

By default the training kit's forward pass decodes (float32, the directory's
weights). With --served, or for a --model FILE.gguf, the serving stack decodes
instead: the model loaded as "serve --model" loads it (a GGUF file keeps its
quantized weights, multiplied by the quantized kernels), on the CPU executor
and engine serve builds, each dialogue one engine call paused at the end of
its first turn and resumed with the tool results. One dialogue at a time
(--workers 1: batch 1, as one client sees it) unless --workers says otherwise.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if n <= 0 {
				return usagef("--n must be positive")
			}
			if strings.HasSuffix(strings.ToLower(dir), ".gguf") {
				served = true
			}
			var lm *tinytools.LoadedModel
			if served {
				se, m, err := startServed(dir, policyName)
				if err != nil {
					return err
				}
				defer se.Close()
				if lm, err = tinytools.NewServed(dir, m.Tokenizer(), se.conversation); err != nil {
					return err
				}
				if !cmd.Flags().Changed("workers") {
					workers = 1
				}
				refN = 0
			} else {
				var err error
				if lm, dir, err = loadTiny(dir, refN); err != nil {
					return err
				}
			}
			if variant < -1 || variant >= len(tinytools.Variants) {
				return usagef("--variant must be -1 or 0..%d", len(tinytools.Variants)-1)
			}
			opt := tinytools.EvalOptions{N: n, Seed: seed, Workers: workers, Variant: variant, RefN: refN, Log: cmd.ErrOrStderr()}
			if raw, err := os.ReadFile(filepath.Join(dir, "train.json")); err == nil {
				var s tinytools.TrainSummary
				if json.Unmarshal(raw, &s) == nil {
					opt.Train = &s.Options
					if !cmd.Flags().Changed("seed") {
						opt.Seed = s.Options.Seed
					}
				}
			}
			rep, err := lm.Evaluate(opt)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if served {
				fmt.Fprintf(out, "model %s served (engine, CPU executor, %s kernels, policy %s, %d dialogue(s) at a time), seed %d\n", dir, cpu.KernelISA(), policyName, max(workers, 1), opt.Seed)
			} else {
				fmt.Fprintf(out, "model %s (%d parameters), seed %d\n", dir, lm.Model.Config().NumParams(), opt.Seed)
			}
			rep.Print(out)
			shown := 0
			for _, t := range rep.Transcripts {
				if shown >= show {
					break
				}
				if t.NoCall || t.Answered && t.ExactArgs {
					continue
				}
				shown++
				fmt.Fprintf(out, "\n--- failure %d (%s): %q\n  want:  %s\n  first: %q\n  tools: %q\n  final: %q\n", t.Index, t.Kind, t.User, strings.Join(t.Want, "; "), t.First, t.Results, t.Final)
			}
			if jsonPath != "" {
				js, err := json.MarshalIndent(rep, "", "  ")
				if err != nil {
					return err
				}
				if err := os.WriteFile(jsonPath, append(js, '\n'), 0o644); err != nil {
					return err
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&dir, "model", builtin.Prefix+builtin.TinyTools, "model directory, FILE.gguf (served), or builtin:NAME for a built-in model")
	fl.IntVar(&n, "n", 500, "held-out dialogues")
	fl.Int64Var(&seed, "seed", 1, "data seed (default: the training seed from train.json)")
	fl.IntVar(&workers, "workers", 0, "goroutines (0: GOMAXPROCS)")
	fl.IntVar(&show, "show-failures", 5, "print this many failed dialogues")
	fl.StringVar(&jsonPath, "json", "", "write the report with every transcript as JSON")
	fl.IntVar(&refN, "reference", 50, "replay this many dialogues through models/llama's reference forward and check that it picks the same greedy tokens (0: none)")
	fl.BoolVar(&served, "served", false, "decode through the serving stack (model as serve loads it, CPU executor, engine) instead of the training forward pass; implied by a FILE.gguf")
	fl.StringVar(&policyName, "policy", runtime.DefaultPolicy, "scheduling policy of the engine with --served")
	fl.IntVar(&variant, "variant", -1, "evaluate one prompt variant only (-1: variants drawn by weight, as in training)")
	return cmd
}

// loadTiny loads a model directory (or builtin:NAME) into the training
// kit's forward pass, with models/llama's reference forward when refN > 0.
func loadTiny(dir string, refN int) (*tinytools.LoadedModel, string, error) {
	if name, ok := strings.CutPrefix(dir, builtin.Prefix); ok {
		// The source tree's copy (with train.json) when run from the
		// repository, else the copy embedded in the binary.
		dir = filepath.Join("models", "builtin", name)
		if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
			if dir, err = builtin.Dir(name); err != nil {
				return nil, dir, usageError{err.Error()}
			}
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "config.json")); err != nil {
		return nil, dir, usagef("--model %s: no config.json there", dir)
	}
	lm, err := tinytools.Load(dir)
	if err != nil {
		return nil, dir, err
	}
	if refN > 0 {
		ref, err := llama.Load(dir, llama.LoadOptions{})
		if err != nil {
			return nil, dir, fmt.Errorf("loading %s with models/llama: %w", dir, err)
		}
		lm.Reference = ref.Reference
	}
	return lm, dir, nil
}
