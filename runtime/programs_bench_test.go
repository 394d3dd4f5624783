package runtime

import (
	"strconv"
	"testing"
	"time"
)

// BenchmarkProgramTableExpire is one tick of the janitor's expiry on a
// table of live rows, none due: the time it holds the table's lock, which
// every call takes. The whole-table scan it replaced (once a minute, at
// most, for named programs) held it 7–15 ms at 40,000 rows.
func BenchmarkProgramTableExpire(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run("rows="+strconv.Itoa(n), func(b *testing.B) {
			t := newProgramTable(time.Hour, time.Minute)
			now := time.Now()
			for i := range n {
				key := "p" + strconv.Itoa(i)
				t.arrive(key, key, "", "", false, now)
				t.finish(key, &Result{}, now)
			}
			for b.Loop() {
				if t.expire(now) != 0 {
					b.Fatal("a row expired")
				}
			}
		})
	}
}

// BenchmarkProgramTableCall is a call's work on the program table (arrive,
// history, segment, engine stats, finish) among 100,000 live named
// programs, with the janitor's expiry run between calls at 1,000 calls/s
// (one tick a second of the calls' own clock, every 1,000 calls):
// named, the calls of the live programs in turn; anonymous, a new row per
// call (AnonymousProgramTTL 30 s: 30,000 of them live).
func BenchmarkProgramTableCall(b *testing.B) {
	const live, perSecond = 100_000, 1_000
	for _, anonymous := range []bool{false, true} {
		name := "named"
		if anonymous {
			name = "anonymous"
		}
		b.Run(name+"/programs="+strconv.Itoa(live), func(b *testing.B) {
			t := newProgramTable(15*time.Minute, 30*time.Second)
			t0 := time.Now()
			keys := make([]string, live)
			for i := range keys {
				keys[i] = "p" + strconv.Itoa(i)
				t.arrive(keys[i], keys[i], "", "", false, t0)
				t.finish(keys[i], &Result{}, t0)
			}
			res := &Result{}
			i := 0
			for b.Loop() {
				now := t0.Add(time.Duration(i) * time.Second / perSecond)
				key := keys[i%live]
				if anonymous {
					key = anonPrefix + strconv.Itoa(i)
				}
				t.arrive(key, key, "", "", anonymous, now)
				t.history(key, "", false)
				t.segment(key, "", 10, "", 10, false)
				t.engineStats(key, time.Millisecond, 0, time.Millisecond)
				t.finish(key, res, now)
				if i%perSecond == perSecond-1 {
					t.expire(now)
				}
				i++
			}
		})
	}
}
