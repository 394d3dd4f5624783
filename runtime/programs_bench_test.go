package runtime

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkProgramTableExpire is one expiry scan of the program table by
// the janitor (every AnonymousProgramTTL/4, 7.5 s by default), none of the
// rows old enough to go: the time it holds the table's lock, which every
// call takes. Anonymous calls' rows stay AnonymousProgramTTL (30 s): at
// 1,000 calls/s without program ids the table holds 30,000–37,500 of them.
func BenchmarkProgramTableExpire(b *testing.B) {
	for _, n := range []int{10_000, 40_000} {
		b.Run("rows="+strconv.Itoa(n), func(b *testing.B) {
			t := newProgramTable()
			now := time.Now()
			for i := range n {
				key := anonPrefix + strconv.Itoa(i)
				t.arrive(key, key, "", "", true, now)
				t.finish(key, &Result{}, now)
			}
			for b.Loop() {
				if t.expire(now.Add(-time.Hour), now.Add(-time.Minute)) != 0 {
					b.Fatal("a row expired")
				}
			}
		})
	}
}

// BenchmarkExpireEnded is what replaced that scan for anonymous rows: the
// rows of one janitor tick at 1,000 calls/s (7,500) dropped in the order
// their calls ended, in a table of 40,000; the lock is held for
// endedBatch rows at a time (ns/row × 256).
func BenchmarkExpireEnded(b *testing.B) {
	const rows, tick = 40_000, 7_500
	for b.Loop() {
		b.StopTimer()
		t := newProgramTable()
		now := time.Now()
		for i := range rows {
			key := anonPrefix + strconv.Itoa(i)
			at := now.Add(time.Duration(i) * time.Microsecond)
			t.arrive(key, key, "", "", true, at)
			t.finish(key, &Result{}, at)
		}
		b.StartTimer()
		if got := t.expireEnded(now.Add(tick * time.Microsecond)); got != tick {
			b.Fatalf("%d rows expired, want %d", got, tick)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/tick, "ns/row")
}
