package tracetest

import (
	"slices"
	"testing"

	"github.com/pitstop-llm/pitstop/predictor"
)

// The probes' lengths come in program order, then segment order (10 after
// 2: numbers, not text), and other programs' records are left out.
func TestPredictedLengthsOrdersProbes(t *testing.T) {
	recs := []predictor.TraceRecord{
		{Program: "probe1", Segment: 0, PredictedTokens: 3},
		{Program: "teach", Segment: 0, PredictedTokens: 99},
		{Program: "probe0", Segment: 10, PredictedTokens: 2},
		{Program: "probe0", Segment: 2, PredictedTokens: 1},
	}
	if got, want := PredictedLengths(recs, "probe"), []int{1, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("PredictedLengths = %v, want %v", got, want)
	}
}
