package predictor

import (
	"math"
	"slices"
	"strings"
	"testing"
)

func sampleInput() Input {
	return Input{
		SystemPrompt: "You are a helpful assistant that calls tools. Answer briefly.",
		LastMessage:  "What's the weather in Zürich tomorrow? Use the get_weather tool, please — in °C.",
		ToolNames:    []string{"get_weather", "search", "calculator"},
		PromptTokens: 734,
		History:      History{Calls: 3, MeanOutputTokens: 41.5, LastOutputTokens: 28, ToolsCalled: []string{"search", "search", "calculator"}},
	}
}

func TestFeaturizeAllocationFree(t *testing.T) {
	in := sampleInput()
	in.LastMessage = strings.Repeat(in.LastMessage, 200) // longer than MaxTextBytes
	dst := make([]float32, FeatureDim)
	if allocs := testing.AllocsPerRun(100, func() { Featurize(in, dst) }); allocs != 0 {
		t.Fatalf("Featurize allocates %v times per call", allocs)
	}
}

func TestFeaturizeLayout(t *testing.T) {
	in := sampleInput()
	a := make([]float32, FeatureDim)
	Featurize(in, a)

	// Deterministic, and it overwrites whatever dst held.
	b := make([]float32, FeatureDim)
	for i := range b {
		b[i] = 7
	}
	Featurize(in, b)
	if !slices.Equal(a, b) {
		t.Fatal("Featurize is not deterministic or does not clear dst")
	}
	// Hashed blocks have unit norm.
	for _, blk := range [][2]int{{sysOff, msgOff}, {msgOff, toolOff}, {toolOff, calledOff}, {calledOff, lastOff}} {
		var ss float64
		for _, v := range a[blk[0]:blk[1]] {
			ss += float64(v * v)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Errorf("block %v has squared norm %v", blk, ss)
		}
	}
	// Case and punctuation do not matter; word order does (bigrams).
	c := make([]float32, FeatureDim)
	in2 := in
	in2.LastMessage = strings.ToUpper(in.LastMessage) + "!!!"
	Featurize(in2, c)
	if !slices.Equal(a[msgOff:toolOff], c[msgOff:toolOff]) {
		t.Error("upper-casing the message changed its features")
	}
	in2.LastMessage = "tomorrow Zürich in weather the what's"
	Featurize(in2, c)
	if slices.Equal(a[msgOff:toolOff], c[msgOff:toolOff]) {
		t.Error("reordering the words did not change the features")
	}
	// Scalars and buckets.
	if want := float32(math.Log1p(734) / 8); a[numOff] != want {
		t.Errorf("log prompt length %v, want %v", a[numOff], want)
	}
	if a[numOff+5] != 1 || a[promptOff+9] != 1 || a[prevOff+4] != 1 { // log2(735)=9.5, log2(29)=4.86
		t.Errorf("history flag %v, prompt bucket %v, last-output bucket %v", a[numOff+5], a[promptOff+9], a[prevOff+4])
	}
	// An empty input has only the user-text kind, its cross with no
	// segments so far, and the zero buckets of prompt, message length and
	// segments so far set.
	Featurize(Input{}, c)
	set := 0
	for i, v := range c {
		if v != 0 {
			set++
			if !(i == kindOff || i == promptOff || i == msgLenOff || i == callsOff || (i >= crossOff && i < crossOff+crossDims)) {
				t.Fatalf("empty input: feature %d = %v", i, v)
			}
		}
	}
	if set != 5 {
		t.Fatalf("empty input sets %d features, want 5", set)
	}
}

func TestFeaturizeShortDstPanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a short dst")
		}
	}()
	Featurize(Input{}, make([]float32, FeatureDim-1))
}

func TestHistoryObserve(t *testing.T) {
	h := History{}.Observe(10, "a").Observe(20, "").Observe(60, "b")
	if h.Calls != 3 || h.MeanOutputTokens != 30 || h.LastOutputTokens != 60 || !slices.Equal(h.ToolsCalled, []string{"a", "b"}) {
		t.Fatalf("%+v", h)
	}
	// Observe must not write into a shared backing array.
	base := History{ToolsCalled: make([]string, 1, 4)}
	x, y := base.Observe(1, "x"), base.Observe(1, "y")
	if x.ToolsCalled[1] != "x" || y.ToolsCalled[1] != "y" {
		t.Fatal("Observe shares the ToolsCalled backing array")
	}
}

func BenchmarkFeaturize(b *testing.B) {
	in := sampleInput()
	dst := make([]float32, FeatureDim)
	b.ReportAllocs()
	for b.Loop() {
		Featurize(in, dst)
	}
}
