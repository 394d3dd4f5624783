// Package tracetest reads back the trace a runtime under test writes, for
// the tests of runtime and runtime/api: as `pitstop predictor eval` does
// (predictor.ReadTraces, from a file), and the lengths predicted for a set
// of probe programs. It is imported by tests only. It takes the trace sink
// as an interface, not internal/testutil's LockedBuffer, since that package
// is for test files and this one is not.
package tracetest

import (
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pitstop-llm/pitstop/predictor"
)

// Sink is a trace being written: WaitLines waits up to within for n lines
// and returns what was written by then.
type Sink interface {
	WaitLines(n int, within time.Duration) string
}

// Records waits up to 5 s for n records in sink and reads them with
// predictor.ReadTraces; it fails t unless there are n.
func Records(t testing.TB, sink Sink, n int) []predictor.TraceRecord {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trace.jsonl")
	if err := os.WriteFile(path, []byte(sink.WaitLines(n, 5*time.Second)), 0o644); err != nil {
		t.Fatal(err)
	}
	recs, err := predictor.ReadTraces(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != n {
		t.Fatalf("%d trace records, want %d", len(recs), n)
	}
	return recs
}

// PredictedLengths are the lengths predicted for the segments of the
// programs whose names start with prefix, ordered by program, then segment.
func PredictedLengths(recs []predictor.TraceRecord, prefix string) []int {
	var probes []predictor.TraceRecord
	for _, r := range recs {
		if strings.HasPrefix(r.Program, prefix) {
			probes = append(probes, r)
		}
	}
	slices.SortStableFunc(probes, func(a, b predictor.TraceRecord) int {
		return cmp.Or(strings.Compare(a.Program, b.Program), cmp.Compare(a.Segment, b.Segment))
	})
	out := make([]int, len(probes))
	for i, r := range probes {
		out[i] = r.PredictedTokens
	}
	return out
}
