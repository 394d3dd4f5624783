package predictor

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// toyRecords makes a small learnable data set: the output length depends on
// the words of the last message and on the history, as in real traces.
func toyRecords(n int, seed uint64) []TraceRecord {
	rng := rand.New(rand.NewPCG(seed, 1))
	kinds := []struct {
		msg    string
		tokens int
		tool   string
	}{
		{"convert this to text to speech", 7, "tts"},
		{"generate an image about this", 33, "image-gen"},
		{"what is the square root of 1764", 121, "math"},
		{"summarize the main ideas into bullet points", 256, "human-think"},
		{"write a very long essay about the history of rome", 800, ""},
	}
	recs := make([]TraceRecord, n)
	for i := range recs {
		k := kinds[rng.IntN(len(kinds))]
		var h History
		for range rng.IntN(3) {
			h = h.Observe(k.tokens+rng.IntN(5), k.tool)
		}
		recs[i] = TraceRecord{
			FeatureVersion: FeatureVersion,
			Source:         "toy",
			Program:        fmt.Sprint("p", i),
			Input: Input{
				SystemPrompt: "You are a helpful assistant.",
				LastMessage:  k.msg,
				ToolNames:    []string{"tts", "image-gen", "math"},
				PromptTokens: 50 + rng.IntN(500),
				History:      h,
			},
			PreToolOutputTokens: k.tokens + rng.IntN(4),
			Tool:                k.tool,
		}
	}
	return recs
}

var (
	toyOnce  sync.Once
	toyMLP   *MLP
	toyOver  int
	toyONNX  []byte
	toyErr   error
	toyTrain []TraceRecord
)

// toyModel trains (once per test binary) a small model on toyRecords and
// exports it to ONNX.
func toyModel(t testing.TB) (*MLP, int, []byte) {
	t.Helper()
	toyOnce.Do(func() {
		toyTrain = toyRecords(300, 1)
		toyMLP, toyOver, toyErr = TrainLengthModel(toyTrain, TrainOptions{Hidden: 16, Epochs: 40, Seed: 3})
		if toyErr == nil {
			toyONNX, toyErr = MarshalONNX(toyMLP, toyOver, map[string]string{"test": "toy"})
		}
	})
	if toyErr != nil {
		t.Fatal(toyErr)
	}
	return toyMLP, toyOver, toyONNX
}

// requireORT skips the test when the ONNX Runtime library is not installed.
func requireORT(t testing.TB) {
	t.Helper()
	if err := InitORT(); err != nil {
		if errors.Is(err, ErrORTMissing) {
			t.Skipf("skipping: %v", err)
		}
		t.Fatal(err)
	}
}
