package remote

import (
	"context"
	"runtime"
	"slices"
	"testing"
	"time"
)

// BenchmarkAdmission is an admission queue's cost per call: "free" takes a
// free slot (the path of a backend below its limit: no wait, no other
// goroutine), "handoff" waits for one released by another goroutine (a
// backend at its limit: the releaser wakes the waiter through its
// channel). The handoff's wake-up-µs metrics are the time from release to
// the waiter running again: the scheduler's latency a queued call pays.
func BenchmarkAdmission(b *testing.B) {
	ctx := context.Background()
	b.Run("free", func(b *testing.B) {
		a := newAdmission(1024)
		b.ReportAllocs()
		for b.Loop() {
			if err := a.acquire(ctx, 1); err != nil {
				b.Fatal(err)
			}
			a.release()
		}
	})
	b.Run("handoff", func(b *testing.B) {
		a := newAdmission(1)
		if err := a.acquire(ctx, 0); err != nil {
			b.Fatal(err)
		}
		woke := make(chan time.Duration, 1)
		var waits []float64
		b.ReportAllocs()
		for b.Loop() {
			done := make(chan struct{})
			var at time.Time
			go func() {
				if err := a.acquire(ctx, 1); err != nil {
					b.Error(err)
				}
				// at was written before the release that woke this
				// goroutine: the admission's channel orders them. The
				// slot stays held: the benchmark's loop releases it next.
				woke <- time.Since(at)
				close(done)
			}()
			for a.queued() == 0 {
				runtime.Gosched() // until the waiter is queued
			}
			at = time.Now()
			a.release()
			waits = append(waits, float64(<-woke)/1e3)
			<-done
		}
		slices.Sort(waits)
		b.ReportMetric(waits[len(waits)/2], "wake-p50-µs")
		b.ReportMetric(waits[(len(waits)*99)/100], "wake-p99-µs")
	})
}
