package tinytools

import (
	"os"
	"strconv"
	"testing"
	"time"
)

// TestTrainingSmoke trains a tiny model for a few steps on generated
// dialogues and checks that the loss goes down.
func TestTrainingSmoke(t *testing.T) {
	tok, ts := smallTokenizer(t)
	data := NewData(tok, ts)
	cfg := Config{Vocab: (tok.VocabSize() + 15) &^ 15, Dim: 32, Layers: 1, Heads: 2, KVHeads: 1, FF: 64, MaxPos: 2048, RopeTheta: 10000, NormEps: 1e-5}
	w, err := NewWeights(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.Init(1)
	tr := newTrainer(w, 2)
	opt := newAdamW(w, 0)
	// A short (curriculum) batch and a full one, with the tools block.
	b, err := data.TrainBatch(1, 0, 4, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	full, err := data.TrainBatch(1, 1, 2, 2, 0)
	if err != nil {
		t.Fatal(err)
	}
	var first, last float64
	if full.Variant == ShortVariant || len(full.Prefix) < 300 {
		t.Fatalf("full batch: variant %d with a %d-token prefix", full.Variant, len(full.Prefix))
	}
	fullLoss0, _ := tr.grad(full, true)
	for step := range 10 {
		loss, ntok := tr.grad(b, false)
		if ntok == 0 {
			t.Fatal("no trained tokens")
		}
		if step == 0 {
			first = loss
		}
		last = loss
		clipNorm(tr.ws[0].grad.Flat, 1)
		opt.update(w.Flat, tr.ws[0].grad.Flat, 1e-2)
	}
	t.Logf("loss %.3f -> %.3f", first, last)
	if !(last < first-0.3) {
		t.Fatalf("loss did not go down: %.3f -> %.3f", first, last)
	}
	// One step on the full batch (shared prefix, its backward) lowers its loss.
	for range 2 {
		tr.grad(full, false)
		opt.update(w.Flat, tr.ws[0].grad.Flat, 1e-2)
	}
	if l, _ := tr.grad(full, true); !(l < fullLoss0) {
		t.Fatalf("full-prompt loss did not go down: %.3f -> %.3f", fullLoss0, l)
	}
}

// TestStepTiming measures the CPU time of training steps of the shipped
// shape, short (curriculum) and full prompts, and what the default schedule
// adds up to (PITSTOP_TINY_TIMING=1).
func TestStepTiming(t *testing.T) {
	if os.Getenv("PITSTOP_TINY_TIMING") == "" {
		t.Skip("set PITSTOP_TINY_TIMING=1")
	}
	o := DefaultTrainOptions()
	ts, _ := NewToolset()
	tok, err := TrainTokenizer(ts, o.Seed, 2000, o.VocabSize)
	if err != nil {
		t.Fatal(err)
	}
	data := NewData(tok, ts)
	cfg := Config{Vocab: (tok.VocabSize() + 15) &^ 15, Dim: envInt("DIM", o.Dim), Layers: envInt("LAYERS", o.Layers), Heads: envInt("HEADS", o.Heads), KVHeads: envInt("HEADS", o.KVHeads), FF: envInt("FF", o.FF), MaxPos: 2048, RopeTheta: 10000, NormEps: 1e-5}
	w, _ := NewWeights(cfg)
	w.Init(1)
	tr := newTrainer(w, 0)
	opt := newAdamW(w, 0.05)
	per := map[bool]time.Duration{}
	const n = 6
	for _, short := range []bool{true, false} {
		frac := 0.0
		if short {
			frac = 1
		}
		for step := range n {
			b, _ := data.TrainBatch(1, step, o.Batch, o.FullBatch, frac)
			c0 := processCPU()
			t0 := time.Now()
			loss, ntok := tr.grad(b, false)
			opt.update(w.Flat, tr.ws[0].grad.Flat, 1e-3)
			c := processCPU() - c0
			per[short] += c
			t.Logf("short=%v step %d: wall %v cpu %v; loss %.3f, %d trained tokens, %d dialogues, prefix %d", short, step, time.Since(t0), c, loss, ntok, len(b.Seqs), len(b.Prefix))
		}
	}
	s, f := per[true].Seconds()/n, per[false].Seconds()/n
	var total float64
	for step := range o.Steps {
		p := o.ShortFrac(step)
		total += p*s + (1-p)*f
	}
	t.Logf("CPU per step: short %.2fs, full %.2fs; the default %d-step schedule: %.1f CPU-minutes", s, f, o.Steps, total/60)
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return v
	}
	return def
}

func processCPU() time.Duration { return time.Duration(cpuSeconds() * 1e9) }
