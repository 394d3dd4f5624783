package predictor

import (
	"slices"
	"testing"
)

// The shared walk keys conversations by source, program and thread, skips
// records without a program, keeps each conversation's state apart, and
// says a record follows only when the conversation's previous record is
// the segment just before it.
func TestEachConversationKeepsConversationsApart(t *testing.T) {
	recs := []TraceRecord{
		{Program: "p", Segment: 0},
		{Program: "p", Thread: "sub", Segment: 0},
		{Program: "", Segment: 1},
		{Program: "p", Segment: 1},
		{Program: "p", Source: "other", Segment: 2},
		{Program: "p", Segment: 3}, // a gap after segment 1
		{Program: "p", Thread: "sub", Segment: 1},
	}
	type step struct {
		seen    int // the conversation's records before this one
		follows bool
	}
	var got []step
	eachConversation(recs, func(r *TraceRecord, seen *int, follows bool) {
		got = append(got, step{*seen, follows})
		*seen++
	})
	want := []step{{0, false}, {0, false}, {1, true}, {0, false}, {2, false}, {1, true}}
	if !slices.Equal(got, want) {
		t.Fatalf("steps %v, want %v", got, want)
	}
}
