package predictor

import (
	"math"
	"testing"
)

// A program whose continuations are short and whose retries are long (a
// tree search whose model explains each new branch): once it has retried,
// a retry is blended with its retries and a continuation with its
// continuations; pooled, both would read the mean of the two kinds.
func TestProgramBlendKeepsRetriesApart(t *testing.T) {
	var b ProgramBlend
	cont, retry := Input{}, Input{Retry: true}
	for i := range 6 {
		in, out := cont, 20
		if i%3 == 2 {
			in, out = retry, 150
		}
		b = b.Next(in).Observe(-1, out, "search")
	}
	if m := b.Next(retry).Mean(); m != 150 {
		t.Fatalf("a retry's mean %v, want 150 (the program's retries)", m)
	}
	if m := b.Next(cont).Mean(); m != 20 {
		t.Fatalf("a continuation's mean %v, want 20 (the program's continuations)", m)
	}
	probs := laplaceBins(60, 30)
	r, _ := b.Next(retry).Predict(60, probs, DefaultOverflowTokens)
	c, _ := b.Next(cont).Predict(60, probs, DefaultOverflowTokens)
	if r <= 60 || c >= 60 {
		t.Fatalf("blended with a model at 60: retry %d, continuation %d; want the retry above it and the continuation below", r, c)
	}
	// Before its first retry, a retry reads the whole program.
	var first ProgramBlend
	first = first.Observe(-1, 20, "search").Observe(-1, 40, "search")
	if m := first.Next(retry).Mean(); m != 30 {
		t.Fatalf("a first retry's mean %v, want the program's 30", m)
	}
	// A program that never retries is blended as before the kinds.
	if m := first.Next(cont).Mean(); math.Abs(m-30) > 0 {
		t.Fatalf("a continuation's mean %v in a program without retries, want 30", m)
	}
}
