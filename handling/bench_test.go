package handling

import (
	"math/rand/v2"
	"testing"
)

// benchSegments is a pool of waiting calls shaped like the infercept
// multi-API set (prompts of hundreds of tokens, tools from 0.1 ms to 30 s).
func benchSegments(n int) []Segment {
	rng := rand.New(rand.NewPCG(7, 9))
	tools := []float64{1e-4, 0.7, 0.09, 28.6, 20, 17}
	segs := make([]Segment, n)
	for i := range segs {
		segs[i] = Segment{
			Prompt:     50 + rng.IntN(2000),
			PreDecode:  1 + rng.IntN(300),
			ToolTime:   tools[rng.IntN(len(tools))] * (0.5 + rng.Float64()),
			ToolReturn: rng.IntN(100),
			PostDecode: rng.IntN(300),
		}
	}
	return segs
}

var sinkScore float64
var sinkKind Kind

func BenchmarkRank(b *testing.B) {
	segs := benchSegments(4096)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s, k := Rank(segs[i&4095], gptj, 120)
		sinkScore += s
		sinkKind = k
		i++
	}
}

func BenchmarkRankAllowed(b *testing.B) {
	segs := benchSegments(4096)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s, k := Rank(segs[i&4095], gptj, 120, Preserve, Discard)
		sinkScore += s
		sinkKind = k
		i++
	}
}

func BenchmarkRankAt(b *testing.B) {
	segs := benchSegments(4096)
	load := Load{RunningTokens: 120, OtherRunning: 60000}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		s, k := RankAt(segs[i&4095], gptj, load)
		sinkScore += s
		sinkKind = k
		i++
	}
}

func BenchmarkChoose(b *testing.B) {
	s := Situation{Context: 900, OtherRunning: 60000, RunningTokens: 120, ToolRemaining: 2}
	b.ReportAllocs()
	for b.Loop() {
		k, w := Choose(s, gptj)
		sinkKind = k
		sinkScore += w[0]
		s.ToolRemaining += 1e-9
	}
}

func TestRankAllocationFree(t *testing.T) {
	segs := benchSegments(64)
	allocs := testing.AllocsPerRun(100, func() {
		for _, g := range segs {
			s, k := Rank(g, gptj, 120)
			sinkScore += s
			sinkKind = k
			s, k = Rank(g, gptj, 120, Swap, Discard)
			sinkScore += s
			sinkKind = k
		}
	})
	if allocs != 0 {
		t.Errorf("Rank allocates %v times per run", allocs)
	}
}
