package predictor

import (
	"slices"
	"testing"
)

// treeProgram is a search tree's turns in the order the search generated
// them, each with its branch's history (as ConvertToolBenchTree writes
// them): a root turn, its child, a second child of the root (a retry), that
// child's child, a third child of the root (a retry, back two levels), and
// a restart from the root (no history: not a retry).
func treeProgram() []TraceRecord {
	branches := [][]int{{}, {0}, {0}, {0, 2}, {0}, {}}
	outs := []int{20, 18, 150, 22, 140, 25}
	recs := make([]TraceRecord, len(outs))
	for i, br := range branches {
		var h History
		for _, j := range br {
			h = h.Observe(outs[j], "search")
		}
		recs[i] = TraceRecord{Source: "s", Program: "p", Segment: i, Input: Input{LastMessage: "result", History: h},
			PreToolOutputTokens: outs[i], Tool: "search"}
	}
	return recs
}

func retries(recs []TraceRecord) []bool {
	out := make([]bool, len(recs))
	for i, r := range recs {
		out[i] = r.Input.Retry
	}
	return out
}

func TestDeriveRetriesMarksATreeSearchsOtherBranches(t *testing.T) {
	recs := treeProgram()
	DeriveRetries(recs)
	want := []bool{false, false, true, false, true, false}
	if got := retries(recs); !slices.Equal(got, want) {
		t.Fatalf("retries %v, want %v", got, want)
	}
	// A runtime's trace: the conversation's history grows with every
	// segment, so nothing is derived, and what the runtime recorded stays.
	var h History
	for i := range recs {
		recs[i].Input.History, recs[i].Input.Retry = h, i == 3
		h = h.Observe(recs[i].PreToolOutputTokens, recs[i].Tool)
	}
	DeriveRetries(recs)
	if got := retries(recs); !slices.Equal(got, []bool{false, false, false, true, false, false}) {
		t.Fatalf("retries of a growing history %v, want only the recorded one", got)
	}
	// Another program's records, or a gap in the segments, break the chain.
	gap := treeProgram()
	gap[2].Segment = 7
	gap[4].Program = "q"
	DeriveRetries(gap)
	if got := retries(gap); slices.Contains(got, true) {
		t.Fatalf("retries %v across a gap and a program change, want none", got)
	}
}

// A search that jumps to another subtree at the same depth (best-first,
// not back along its branch) is no retry, as the runtime tells from the
// request's messages; nor is going back more than MaxRetryBack calls.
func TestDeriveRetriesReadsOnlyTheBranchItWasOn(t *testing.T) {
	branches := [][]int{{}, {0}, {0}, {0, 1}, {0, 2}, {0, 1}}
	outs := []int{20, 18, 150, 22, 140, 25}
	recs := make([]TraceRecord, len(outs))
	for i, br := range branches {
		var h History
		for _, j := range br {
			h = h.Observe(outs[j], "search")
		}
		recs[i] = TraceRecord{Source: "s", Program: "p", Segment: i, Input: Input{History: h}, PreToolOutputTokens: outs[i], Tool: "search"}
	}
	DeriveRetries(recs)
	// 2: the root's second child (back along 1's branch); 4: under 2, not
	// under 3 (a jump); 5: under 1 again, not under 4 (a jump).
	if got, want := retries(recs), []bool{false, false, true, false, false, false}; !slices.Equal(got, want) {
		t.Fatalf("retries %v, want %v", got, want)
	}
	var deep []TraceRecord
	var h History
	for i := range MaxRetryBack + 3 {
		deep = append(deep, TraceRecord{Program: "p", Segment: i, Input: Input{History: h}, PreToolOutputTokens: 10 + i, Tool: "search"})
		h = h.Observe(10+i, "search")
	}
	last := len(deep) - 1
	for _, back := range []int{MaxRetryBack - 1, MaxRetryBack} {
		recs := append(slices.Clone(deep), deep[last-back])
		recs[len(recs)-1].Segment = len(deep)
		DeriveRetries(recs)
		if got, want := recs[len(recs)-1].Input.Retry, back < MaxRetryBack; got != want {
			t.Fatalf("back %d calls: retry %v, want %v", back, got, want)
		}
	}
}
