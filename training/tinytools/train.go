package tinytools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/pitstop-llm/pitstop/models/safetensors"
	"github.com/pitstop-llm/pitstop/models/tokenizer"
)

// ChatTemplate is the models/chat template the model is trained with.
const ChatTemplate = "qwen2.5"

// TrainOptions configures Train.
type TrainOptions struct {
	Out         string // model directory to write
	Steps       int
	Batch       int // dialogues per step on short (curriculum) prompts
	FullBatch   int // dialogues per step on full prompts (0: Batch)
	LR          float64
	MinLRFrac   float64 // final learning rate as a fraction of LR
	Warmup      int
	WeightDecay float64
	Seed        int64
	Workers     int // goroutines over the batch (0: GOMAXPROCS)

	// Shape; Vocab is the tokenizer's size.
	Dim, Layers, Heads, KVHeads, FF, MaxPos int
	VocabSize                               int // tokenizer vocabulary to train
	TokenizerDocs                           int // dialogues the tokenizer is trained on

	// Curriculum: during the first CurriculumSteps steps a CurriculumShort
	// fraction of the steps train on the short curriculum variant (no tools
	// block: short, cheap sequences that teach the skills); afterwards a
	// ShortMix fraction still does.
	CurriculumSteps int
	CurriculumShort float64
	ShortMix        float64

	CheckpointEvery int  // steps between checkpoints (0: none)
	EvalEvery       int  // steps between held-out losses (0: none)
	Resume          bool // continue from Out/checkpoint when present
	KeepCheckpoint  bool // keep Out/checkpoint after the last step (else removed)
	Log             io.Writer
}

// DefaultTrainOptions are the options of the shipped model.
func DefaultTrainOptions() TrainOptions {
	return TrainOptions{
		Out: "models/builtin/tiny-tools", Steps: 2200, Batch: 32, LR: 3e-3, MinLRFrac: 0.05, Warmup: 50,
		WeightDecay: 0.05, Seed: 1, Dim: 128, Layers: 4, Heads: 4, KVHeads: 4, FF: 384, MaxPos: 2048,
		VocabSize: 1024, TokenizerDocs: 6000, CheckpointEvery: 100, EvalEvery: 100, CurriculumSteps: 1400, CurriculumShort: 0.9, ShortMix: 0.3, FullBatch: 16,
	}
}

// StepLog is one logged training step.
type StepLog struct {
	Step     int     `json:"step"`
	Loss     float64 `json:"loss"`
	EvalLoss float64 `json:"eval_loss,omitempty"`
	LR       float64 `json:"lr"`
	GradNorm float64 `json:"grad_norm"`
	Tokens   int     `json:"tokens"`
	Seconds  float64 `json:"seconds"` // since the start of training
}

// TrainSummary is written to train.json next to the model.
type TrainSummary struct {
	Options       TrainOptions `json:"options"`
	Params        int          `json:"params"`
	VocabSize     int          `json:"vocab_size"`
	Steps         int          `json:"steps"`
	Seconds       float64      `json:"seconds"`
	CPUSeconds    float64      `json:"cpu_seconds"` // user+system CPU time of the process (a resumed run: since the resume)
	TrainedTokens int64        `json:"trained_tokens"`
	SeenTokens    int64        `json:"seen_tokens"`
	FinalLoss     float64      `json:"final_loss"` // mean of the last 20 steps
	FinalEvalLoss float64      `json:"final_eval_loss"`
	GOMAXPROCS    int          `json:"gomaxprocs"`
	GoVersion     string       `json:"go_version"`
	TokenizerFile string       `json:"tokenizer"`
	Log           []StepLog    `json:"log"`
}

type checkpointState struct {
	Step   int       `json:"step"`
	Log    []StepLog `json:"log"`
	Seen   int64     `json:"seen_tokens"`
	Tokens int64     `json:"trained_tokens"`
	Secs   float64   `json:"seconds"`
}

// Train builds the tokenizer (or reuses Out/tokenizer.json when resuming),
// trains the model and writes the model directory: config.json,
// model.safetensors, tokenizer.json, tokenizer_config.json, loss.png,
// train.json. A checkpoint (weights, optimizer state, log) goes to
// Out/checkpoint every CheckpointEvery steps.
func Train(opt TrainOptions) (*TrainSummary, error) {
	logw := opt.Log
	if logw == nil {
		logw = io.Discard
	}
	if opt.FullBatch <= 0 {
		opt.FullBatch = opt.Batch
	}
	if opt.Steps <= 0 || opt.Batch <= 0 {
		return nil, errors.New("tinytools: steps and batch must be positive")
	}
	if err := os.MkdirAll(opt.Out, 0o755); err != nil {
		return nil, fmt.Errorf("tinytools: %w", err)
	}
	ts, err := NewToolset()
	if err != nil {
		return nil, err
	}
	ckptDir := filepath.Join(opt.Out, "checkpoint")
	var tok *tokenizer.Tokenizer
	if _, err := os.Stat(filepath.Join(ckptDir, "state.json")); opt.Resume && err == nil {
		tok, err = tokenizer.Load(opt.Out)
		if err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "resuming: tokenizer from %s\n", opt.Out)
	} else {
		opt.Resume = false
		t0 := time.Now()
		tok, err = TrainTokenizer(ts, opt.Seed, opt.TokenizerDocs, opt.VocabSize)
		if err != nil {
			return nil, err
		}
		if err := SaveTokenizer(tok, opt.Out); err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "tokenizer: %d tokens from %d dialogues in %.1fs\n", tok.VocabSize(), opt.TokenizerDocs, time.Since(t0).Seconds())
	}
	data := NewData(tok, ts)
	vocab := (tok.VocabSize() + 15) &^ 15
	cfg := Config{Vocab: vocab, Dim: opt.Dim, Layers: opt.Layers, Heads: opt.Heads, KVHeads: opt.KVHeads, FF: opt.FF,
		MaxPos: opt.MaxPos, RopeTheta: 10000, NormEps: 1e-5}
	w, err := NewWeights(cfg)
	if err != nil {
		return nil, err
	}
	w.Init(opt.Seed)
	opt2 := newAdamW(w, opt.WeightDecay)
	state := checkpointState{}
	if opt.Resume {
		if err := loadCheckpoint(ckptDir, w, opt2, &state); err != nil {
			return nil, err
		}
		fmt.Fprintf(logw, "resuming at step %d\n", state.Step)
	}
	fmt.Fprintf(logw, "model: %d params (dim %d, %d layers, %d heads / %d kv, ff %d, vocab %d); %d steps × %d dialogues, %d workers\n",
		cfg.NumParams(), cfg.Dim, cfg.Layers, cfg.Heads, cfg.KVHeads, cfg.FF, cfg.Vocab, opt.Steps, opt.Batch, max(opt.Workers, runtime.GOMAXPROCS(0)))

	tr := newTrainer(w, opt.Workers)
	evalTr := newTrainer(w, opt.Workers)
	// A fixed held-out set: 2 batches of each tool-offering variant 0 and 1.
	var evalBatches []Batch
	if opt.EvalEvery > 0 {
		for v := range 2 {
			b, err := data.EvalBatch(opt.Seed, v, 100000, opt.FullBatch)
			if err != nil {
				return nil, err
			}
			evalBatches = append(evalBatches, b)
		}
	}
	evalLoss := func() float64 {
		var sum float64
		var n int
		for _, b := range evalBatches {
			l, k := evalTr.grad(b, true)
			sum += l * float64(k)
			n += k
		}
		return sum / float64(max(n, 1))
	}

	start := time.Now().Add(-time.Duration(state.Secs * float64(time.Second)))
	for step := state.Step; step < opt.Steps; step++ {
		b, err := data.TrainBatch(opt.Seed, step, opt.Batch, opt.FullBatch, opt.ShortFrac(step))
		if err != nil {
			return nil, err
		}
		loss, ntok := tr.grad(b, false)
		g := tr.ws[0].grad.Flat
		gn := clipNorm(g, 1.0)
		lr := lrAt(step, opt.Steps, opt.Warmup, opt.LR, opt.MinLRFrac)
		opt2.update(w.Flat, g, lr)
		state.Tokens += int64(ntok)
		for _, s := range b.Seqs {
			state.Seen += int64(len(s.Tokens))
		}
		state.Seen += int64(len(b.Prefix))
		rec := StepLog{Step: step + 1, Loss: loss, LR: lr, GradNorm: gn, Tokens: ntok, Seconds: time.Since(start).Seconds()}
		last := step+1 == opt.Steps
		if opt.EvalEvery > 0 && ((step+1)%opt.EvalEvery == 0 || last) {
			rec.EvalLoss = evalLoss()
		}
		state.Log = append(state.Log, rec)
		if (step+1)%10 == 0 || rec.EvalLoss > 0 || step == 0 {
			msg := fmt.Sprintf("step %5d/%d  loss %.4f  lr %.2e  |g| %.2f  %.0fs", step+1, opt.Steps, loss, lr, gn, rec.Seconds)
			if rec.EvalLoss > 0 {
				msg += fmt.Sprintf("  held-out %.4f", rec.EvalLoss)
			}
			fmt.Fprintln(logw, msg)
		}
		if opt.CheckpointEvery > 0 && ((step+1)%opt.CheckpointEvery == 0 || last) {
			state.Step = step + 1
			state.Secs = time.Since(start).Seconds()
			if err := saveCheckpoint(ckptDir, w, opt2, state); err != nil {
				return nil, err
			}
			// The checkpoint is a loadable model directory too (eval-tiny
			// --model DIR/checkpoint evaluates it while training goes on).
			if err := SaveModel(ckptDir, w, tok, nil); err != nil {
				return nil, err
			}
			if err := SaveTokenizer(tok, ckptDir); err != nil {
				return nil, err
			}
			if err := PlotLoss(filepath.Join(opt.Out, "loss.png"), state.Log); err != nil {
				return nil, err
			}
		}
	}
	secs := time.Since(start).Seconds()
	sum := &TrainSummary{Options: opt, Params: cfg.NumParams(), VocabSize: tok.VocabSize(), Steps: opt.Steps, Seconds: secs, CPUSeconds: cpuSeconds(),
		TrainedTokens: state.Tokens, SeenTokens: state.Seen, GOMAXPROCS: runtime.GOMAXPROCS(0), GoVersion: runtime.Version(),
		TokenizerFile: "tokenizer.json", Log: state.Log}
	sum.Options.Log = nil
	n := 0
	for i := len(state.Log) - 1; i >= 0 && n < 20; i-- {
		sum.FinalLoss += state.Log[i].Loss
		n++
	}
	sum.FinalLoss /= float64(max(n, 1))
	for _, r := range state.Log {
		if r.EvalLoss > 0 {
			sum.FinalEvalLoss = r.EvalLoss
		}
	}
	if err := SaveModel(opt.Out, w, tok, map[string]string{"format": "pt", "trained_by": "pitstop train-tiny", "steps": strconv.Itoa(opt.Steps), "seed": strconv.FormatInt(opt.Seed, 10)}); err != nil {
		return nil, err
	}
	if err := PlotLoss(filepath.Join(opt.Out, "loss.png"), state.Log); err != nil {
		return nil, err
	}
	js, err := json.MarshalIndent(sum, "", "  ")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(opt.Out, "train.json"), append(js, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("tinytools: %w", err)
	}
	if !opt.KeepCheckpoint {
		if err := os.RemoveAll(ckptDir); err != nil {
			return nil, fmt.Errorf("tinytools: %w", err)
		}
	}
	fmt.Fprintf(logw, "done: %d steps in %.1f min (%.1f CPU-min), final loss %.4f, held-out %.4f; wrote %s\n", opt.Steps, secs/60, sum.CPUSeconds/60, sum.FinalLoss, sum.FinalEvalLoss, opt.Out)
	return sum, nil
}

// ShortFrac is the probability that step trains on the curriculum variant.
func (o TrainOptions) ShortFrac(step int) float64 {
	if step < o.CurriculumSteps {
		return o.CurriculumShort
	}
	return o.ShortMix
}

// SaveTokenizer writes tokenizer.json and tokenizer_config.json (EOS
// <|im_end|>, pad <|endoftext|>, as Qwen2.5-Instruct names them).
func SaveTokenizer(tok *tokenizer.Tokenizer, dir string) error {
	if err := tok.SaveDir(dir); err != nil {
		return err
	}
	path := filepath.Join(dir, "tokenizer_config.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	var cfg map[string]any
	if err := json.Unmarshal(raw, &cfg); err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	cfg["pad_token"] = "<|endoftext|>"
	cfg["model_max_length"] = 2048
	cfg["add_bos_token"] = false
	cfg["clean_up_tokenization_spaces"] = false
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<|im_end|>", not "\u003c|im_end|\u003e"
	enc.SetIndent("", "  ")
	if err := enc.Encode(cfg); err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// SaveModel writes config.json and model.safetensors into dir; tok (may be
// nil) gives the EOS and pad ids.
func SaveModel(dir string, w *Weights, tok *tokenizer.Tokenizer, metadata map[string]string) error {
	var eos []int32
	var pad *int32
	if tok != nil {
		for _, s := range []string{"<|im_end|>", "<|endoftext|>"} {
			if id, ok := tok.TokenID(s); ok {
				eos = append(eos, id)
			}
		}
		if id, ok := tok.TokenID("<|endoftext|>"); ok {
			pad = &id
		}
	}
	h := w.Cfg.HF(eos, pad, ChatTemplate)
	js, err := json.MarshalIndent(h, "", "  ")
	if err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.json"), append(js, '\n'), 0o644); err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	return w.SaveSafetensors(filepath.Join(dir, "model.safetensors"), metadata)
}

func saveCheckpoint(dir string, w *Weights, a *adamW, st checkpointState) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	if err := w.SaveSafetensors(filepath.Join(dir, "model.safetensors"), nil); err != nil {
		return err
	}
	var ts []safetensors.Tensor
	for name, v := range map[string][]float32{"adam.m": a.M, "adam.v": a.V} {
		t, err := safetensors.FromF32(name, safetensors.F32, []int{len(v)}, v)
		if err != nil {
			return err
		}
		ts = append(ts, t)
	}
	if err := safetensors.WriteFile(filepath.Join(dir, "optimizer.safetensors"), ts, map[string]string{"step": strconv.Itoa(a.Step)}); err != nil {
		return err
	}
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	cfg, _ := json.Marshal(w.Cfg)
	if err := os.WriteFile(filepath.Join(dir, "shape.json"), cfg, 0o644); err != nil {
		return fmt.Errorf("tinytools: %w", err)
	}
	return os.WriteFile(filepath.Join(dir, "state.json"), js, 0o644)
}

func loadCheckpoint(dir string, w *Weights, a *adamW, st *checkpointState) error {
	raw, err := os.ReadFile(filepath.Join(dir, "shape.json"))
	if err != nil {
		return fmt.Errorf("tinytools: checkpoint: %w", err)
	}
	var c Config
	if err := json.Unmarshal(raw, &c); err != nil {
		return fmt.Errorf("tinytools: checkpoint: %w", err)
	}
	if c != w.Cfg {
		return fmt.Errorf("tinytools: checkpoint shape %+v differs from the requested %+v", c, w.Cfg)
	}
	lw, err := LoadSafetensors(filepath.Join(dir, "model.safetensors"), c)
	if err != nil {
		return err
	}
	copy(w.Flat, lw.Flat)
	f, err := safetensors.OpenFile(filepath.Join(dir, "optimizer.safetensors"))
	if err != nil {
		return err
	}
	defer f.Close()
	for name, dst := range map[string][]float32{"adam.m": a.M, "adam.v": a.V} {
		v, _, err := f.Float32(name)
		if err != nil {
			return err
		}
		if len(v) != len(dst) {
			return fmt.Errorf("tinytools: checkpoint %s has %d values, want %d", name, len(v), len(dst))
		}
		copy(dst, v)
	}
	a.Step, _ = strconv.Atoi(f.Metadata()["step"])
	raw, err = os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return fmt.Errorf("tinytools: checkpoint: %w", err)
	}
	return json.Unmarshal(raw, st)
}

// PlotLoss draws the training loss (and held-out loss points) against the
// step into a PNG.
func PlotLoss(path string, log []StepLog) error {
	p := plot.New()
	p.Title.Text = "tiny-tools training loss (assistant tokens)"
	p.X.Label.Text = "step"
	p.Y.Label.Text = "cross-entropy (nats/token)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	var train, smooth, held plotter.XYs
	ema := math.NaN()
	for _, r := range log {
		if !(r.Loss > 0) {
			continue
		}
		train = append(train, plotter.XY{X: float64(r.Step), Y: r.Loss})
		if math.IsNaN(ema) {
			ema = r.Loss
		} else {
			ema = 0.9*ema + 0.1*r.Loss
		}
		smooth = append(smooth, plotter.XY{X: float64(r.Step), Y: ema})
		if r.EvalLoss > 0 {
			held = append(held, plotter.XY{X: float64(r.Step), Y: r.EvalLoss})
		}
	}
	if len(train) == 0 {
		return nil
	}
	raw, err := plotter.NewLine(train)
	if err != nil {
		return err
	}
	raw.Color = color.RGBA{R: 160, G: 190, B: 230, A: 255}
	sm, err := plotter.NewLine(smooth)
	if err != nil {
		return err
	}
	sm.Color = color.RGBA{B: 180, A: 255}
	sm.Width = vg.Points(1.5)
	p.Add(raw, sm)
	p.Legend.Add("train (per step)", raw)
	p.Legend.Add("train (EMA 0.9)", sm)
	if len(held) > 0 {
		sc, err := plotter.NewScatter(held)
		if err != nil {
			return err
		}
		sc.Color = color.RGBA{R: 200, A: 255}
		sc.Radius = vg.Points(3)
		p.Add(sc)
		p.Legend.Add("held-out", sc)
	}
	p.Legend.Top = true
	tmp := path + ".tmp.png"
	if err := p.Save(7*vg.Inch, 4.5*vg.Inch, tmp); err != nil {
		return fmt.Errorf("tinytools: plot: %w", err)
	}
	return os.Rename(tmp, path)
}
