package predictor

import (
	"reflect"
	"strings"
	"testing"
)

// On a search tree, a turn continues its own branch: the blend it starts
// from has seen the branch's turns only, so its mean is the history
// baseline's (the branch's mean), not the mean of every turn the search
// finished.
func TestProgramBlendsFollowTheBranchOfASearchTree(t *testing.T) {
	words := func(s string) int { return len(strings.Fields(s)) }
	recs, err := ConvertToolBenchTree([]byte(toolBenchTreeAnswer), "g1/7", "toolbench/test", words)
	if err != nil {
		t.Fatal(err)
	}
	// Turns: 0 search (3 tokens), 1 give up (8; child of 0), 2 lookup (6;
	// child of 0, sibling of 1), 3 Finish (2; child of 2).
	m := NewProgramBlends(nil)
	for i, r := range recs {
		b := m.program(r)
		if b.Segments != r.Input.History.Calls || b.Mean() != r.Input.History.MeanOutputTokens {
			t.Errorf("turn %d starts from %d segments of mean %.1f; want its branch's %d of mean %.1f",
				i, b.Segments, b.Mean(), r.Input.History.Calls, r.Input.History.MeanOutputTokens)
		}
		m.Observe(r, 5, nil, 0)
	}
	// The last turn's branch is turns 0 and 2 (3 and 6 tokens): mean 4.5,
	// where the whole tree so far (3, 8, 6) has 5.67.
	if b := m.program(recs[3]); b.Mean() != 4.5 {
		t.Fatalf("last turn: mean %.2f, want its branch's 4.5", b.Mean())
	}
}

// A linear program continues its latest blend whether or not its records
// carry a history (records without one, e.g. SWE-agent's demonstrations,
// match no conversation and fall back to the latest), and the same program
// id started again at segment 0 does not continue the earlier run's
// conversations.
func TestProgramBlendsLinearProgramsAsBefore(t *testing.T) {
	withHistory := func(recs []TraceRecord) []TraceRecord {
		var h History
		for i := range recs {
			if recs[i].Segment == 0 {
				h = History{}
			}
			recs[i].Input.History = h
			h = h.Observe(recs[i].PreToolOutputTokens, recs[i].Tool)
		}
		return recs
	}
	mk := func() []TraceRecord {
		return []TraceRecord{
			{Source: "s", Program: "p", Segment: 0, PreToolOutputTokens: 40, Tool: "a"},
			{Source: "s", Program: "p", Segment: 1, PreToolOutputTokens: 100, Tool: "b"},
			{Source: "s", Program: "p", Segment: 2, PreToolOutputTokens: 100},
			{Source: "s", Program: "p", Segment: 0, PreToolOutputTokens: 40, Tool: "a"}, // p again
			{Source: "s", Program: "p", Segment: 1, PreToolOutputTokens: 7},
		}
	}
	wantMeans := []float64{0, 40, 70, 0, 40}
	var seen [2][]ProgramBlend
	for v, recs := range [][]TraceRecord{mk(), withHistory(mk())} {
		m := NewProgramBlends(nil)
		for i, r := range recs {
			b := m.program(r)
			if b.Mean() != wantMeans[i] {
				t.Errorf("history %v: record %d starts from mean %.1f, want %.1f", v == 1, i, b.Mean(), wantMeans[i])
			}
			seen[v] = append(seen[v], b)
			m.Observe(r, 10+20*i, nil, 0)
		}
	}
	if !reflect.DeepEqual(seen[0], seen[1]) {
		t.Fatalf("a linear program's blends differ with and without history:\n%+v\n%+v", seen[0], seen[1])
	}
}
