package bench

import (
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/predictor"
)

// countingLength is the default model's Go forward pass, counting its asks.
type countingLength struct {
	predictor.GoClassifier
	asks int
}

func (c *countingLength) PredictLength(in predictor.Input) (int, []float32) {
	c.asks++
	return c.GoClassifier.PredictLength(in)
}

func defaultClassifier(t *testing.T) predictor.GoClassifier {
	t.Helper()
	info, err := predictor.ParseONNX(predictor.DefaultModelBytes())
	if err != nil || info.MLP == nil {
		t.Fatalf("default model: %v", err)
	}
	return predictor.GoClassifier{MLP: info.MLP, OverflowTokens: info.OverflowTokens}
}

func TestMemoLengthAnswersAsTheModelAndAsksItOncePerInput(t *testing.T) {
	base := &countingLength{GoClassifier: defaultClassifier(t)}
	memo := NewMemoLength(base)
	var ins []predictor.Input
	for i := range 50 {
		h := predictor.History{}.Observe(10*i, "search")
		ins = append(ins, predictor.Input{PromptTokens: 100 + 37*i, ToolNames: []string{"search", "math"},
			LastTool: "search", History: h})
	}
	for round := range 3 {
		for _, in := range ins {
			n, probs := memo.PredictLength(in)
			wn, wprobs := base.GoClassifier.PredictLength(in)
			if n != wn || !slices.Equal(probs, wprobs) {
				t.Fatalf("round %d, %d prompt tokens: memo %d, model %d", round, in.PromptTokens, n, wn)
			}
			probs[0] = -1 // the caller's own copy: the next answer must not see it
		}
	}
	if base.asks != len(ins) || memo.Misses != len(ins) || memo.Hits != 2*len(ins) {
		t.Fatalf("model asked %d times, %d misses, %d hits; want %d, %d, %d",
			base.asks, memo.Misses, memo.Hits, len(ins), len(ins), 2*len(ins))
	}
	direct := NewMemoLength(base.GoClassifier)
	if got := overflowTokens(direct); got != base.OverflowTokens || got == predictor.DefaultOverflowTokens {
		t.Fatalf("overflow tokens %d, want the model's %d", got, base.OverflowTokens)
	}
}

func TestMemoLengthForgetsTheOldestGeneration(t *testing.T) {
	base := &countingLength{GoClassifier: defaultClassifier(t)}
	memo := NewMemoLength(base)
	in := func(i int) predictor.Input { return predictor.Input{PromptTokens: 1 + i} }
	for i := range 2*memoGeneration + 1 {
		memo.PredictLength(in(i))
	}
	asked := base.asks
	memo.PredictLength(in(2 * memoGeneration)) // the newest: remembered
	memo.PredictLength(in(memoGeneration))     // the older generation: remembered
	if base.asks != asked {
		t.Fatalf("the model was asked again about a recent input (%d → %d asks)", asked, base.asks)
	}
	memo.PredictLength(in(0)) // dropped with the first generation
	if base.asks != asked+1 {
		t.Fatalf("the first input was not forgotten after two generations (%d → %d asks)", asked, base.asks)
	}
}
