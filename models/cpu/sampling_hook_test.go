package cpu

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
)

// onlyHook allows the tokens of a set and records what was drawn.
type onlyHook struct {
	allow map[int32]bool
	drawn []int32
	seen  []float32
}

func (h *onlyHook) Mask(logits []float32) {
	for i := range logits {
		if !h.allow[int32(i)] {
			logits[i] = float32(math.Inf(-1))
		}
	}
}

func (h *onlyHook) Sampled(tok int32, logits []float32) {
	h.drawn = append(h.drawn, tok)
	h.seen = append(h.seen[:0], logits...)
}

// TestSamplingHookMasksBeforeDraw: greedy, temperature and top-p draws all
// come from the hook's allowed tokens, however unlikely the model finds
// them, and the hook sees the masked logits.
func TestSamplingHookMasksBeforeDraw(t *testing.T) {
	logits := func() []float32 { // token 0 is by far the likeliest
		l := make([]float32, 100)
		for i := range l {
			l[i] = float32(-i)
		}
		l[0] = 50
		return l
	}
	var sp sampler
	rng := rand.New(rand.NewPCG(1, 1))
	h := &onlyHook{allow: map[int32]bool{97: true, 98: true}}
	for _, p := range []engine.Sampling{{}, {Temperature: 1}, {Temperature: 2, TopP: 0.5}} {
		p.Hook = h
		for range 20 {
			if tok := sp.sample(logits(), p, rng); tok != 97 && tok != 98 {
				t.Fatalf("%+v drew %d outside the mask", p, tok)
			}
		}
	}
	if len(h.drawn) != 60 || !math.IsInf(float64(h.seen[0]), -1) {
		t.Errorf("hook saw %d draws, logit 0 %g", len(h.drawn), h.seen[0])
	}
}
