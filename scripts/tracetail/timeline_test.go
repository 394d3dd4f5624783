package main

import (
	"bytes"
	"runtime"
	"runtime/trace"
	"testing"
	"time"
)

// TestReadTimeline: a collection and a goroutine that holds the core,
// traced in this process, are found at their places on the wall clock.
func TestReadTimeline(t *testing.T) {
	var buf bytes.Buffer
	start := time.Now()
	if err := trace.Start(&buf); err != nil {
		t.Fatal(err)
	}
	time.Sleep(5 * time.Millisecond)
	gcAt := time.Since(start)
	runtime.GC()
	gcEnd := time.Since(start)
	spun := make(chan time.Duration)
	go func() {
		t0 := time.Now()
		for time.Since(t0) < 3*time.Millisecond {
		}
		spun <- time.Since(start)
	}()
	spinEnd := <-spun
	trace.Stop()
	tl, err := readTimeline(&buf, start.UnixNano())
	if err != nil {
		t.Fatal(err)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	found := false
	for _, m := range tl.mark {
		// the clocks agree within a millisecond
		if m.from >= ms(gcAt)-1 && m.to <= ms(gcEnd)+1 {
			found = true
		}
	}
	if !found {
		t.Errorf("no mark phase within [%.3f, %.3f] ms: %+v", ms(gcAt), ms(gcEnd), tl.mark)
	}
	if len(tl.stw) == 0 {
		t.Error("no stop-the-world")
	}
	long := false
	for _, r := range tl.runs {
		if r.to-r.from >= 2.5 && r.to <= ms(spinEnd)+1 && r.what == "github.com/pitstop-llm/pitstop/scripts/tracetail.TestReadTimeline.func1" {
			long = true
		}
	}
	if !long {
		t.Error("the spinning goroutine's run of 3 ms was not found by name")
	}
	if s := stalled(tl, window{0, ms(spinEnd)}); s < 0 || s > ms(spinEnd) {
		t.Errorf("stalled %.3f ms of %.3f", s, ms(spinEnd))
	}
}
