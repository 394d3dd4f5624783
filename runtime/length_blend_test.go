package runtime

import (
	"context"
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/engine/policy"
	"github.com/pitstop-llm/pitstop/models/chat"
)

// A length predictor that misses a program's segments by far gives way to
// the program's own mean over the program's later segments, across calls
// (predictor.ProgramBlend), and its error metric counts the blended
// prediction that policies saw.
func TestLengthBlendFollowsTheProgram(t *testing.T) {
	base, err := policy.New(DefaultPolicy, policy.Options{})
	if err != nil {
		t.Fatal(err)
	}
	pol := &forecastPolicy{Policy: base}
	lp := &fixedLength{n: 900}
	rt := newTestRuntime(t, Config{PolicyImpl: pol, Length: lp})
	// One conversation over three calls: each later call carries the
	// answers so far (a call without any would start the program's
	// conversation over: startsOver).
	msgs := []chat.Message{{Role: "user", Content: "What is (17+25)*3?"}}
	for range 3 {
		res, err := rt.ChatSync(context.Background(), ChatRequest{Program: "pb", Messages: msgs, Tools: []chat.Tool{calcTool}})
		if err != nil {
			t.Fatal(err)
		}
		msgs = append(msgs, chat.Message{Role: "assistant", Content: res.Content}, chat.Message{Role: "user", Content: "What is (17+25)*3?"})
	}
	pol.mu.Lock()
	fs := slices.Clone(pol.forecasts)
	pol.mu.Unlock()
	if len(fs) == 0 || fs[0].Predicted.Decode != 900 {
		t.Fatalf("first forecast %+v: want the predictor's 900 (nothing of the program seen yet)", fs)
	}
	last := fs[len(fs)-1]
	if last.Predicted.Decode >= 300 || !last.HasTruth {
		t.Fatalf("last forecast %+v: want under 300 tokens, the program's segments being short (truth %d)", last.Predicted, last.Truth.Decode)
	}
}
