package engine

import (
	"strconv"
	"testing"
	"time"
)

// call runs one call of program id on t from start to end, asking for ttl.
func call(t *ProgramTable, id string, ttl, start, end time.Duration) *Sequence {
	s := &Sequence{req: Request{Program: id, ProgramTTL: ttl}}
	s.prog = t.arrive(s, start)
	if end >= 0 {
		t.finish(s, end)
	}
	return s
}

// expireAll runs Expire until no due row is left, checking that no step
// looks at more than ExpireBatch rows, and returns the rows dropped.
func expireAll(tb testing.TB, t *ProgramTable, now time.Duration) int {
	tb.Helper()
	n := 0
	for {
		dropped, touched, more := t.expireStep(now)
		if touched > ExpireBatch {
			tb.Fatalf("one expiry step looked at %d rows, more than %d", touched, ExpireBatch)
		}
		n += dropped
		if !more {
			return n
		}
	}
}

// Rows go their own TTL after their last call ends, over more than one
// step; rows in use, seen again since, or without a TTL stay.
func TestProgramTableExpire(t *testing.T) {
	const ttl, anonTTL = time.Hour, time.Minute
	tab := newProgramTable()
	anon := func(i int) string { return "anon" + strconv.Itoa(i) }
	const n = 2*ExpireBatch + 10
	for i := range n {
		at := time.Duration(i) * time.Millisecond
		call(tab, anon(i), anonTTL, at, at)
	}
	call(tab, "named", ttl, 0, 0)
	call(tab, "again", ttl, 0, 0)
	call(tab, "again", ttl, time.Minute, time.Minute) // seen again
	busy := call(tab, "busy", ttl, 0, -1)             // in use: not finished yet
	call(tab, "forever", 0, 0, 0)                     // no TTL: a simulation's row

	// All anonymous rows but the last 5 ended over anonTTL before now.
	now := anonTTL + time.Duration(n-5)*time.Millisecond
	if got := expireAll(t, tab, now); got != n-5 {
		t.Errorf("expired %d rows, want %d", got, n-5)
	}
	for i := range n {
		if got, want := tab.Get(anon(i)) != nil, i >= n-5; got != want {
			t.Errorf("anonymous row %d kept %v, want %v", i, got, want)
		}
	}
	// A named program goes as soon as its TTL is past.
	if got := expireAll(t, tab, ttl+time.Nanosecond); got != 5+1 {
		t.Errorf("expired %d rows at the named TTL, want 6 (5 anonymous, named)", got)
	}
	for id, want := range map[string]bool{"named": false, "again": true, "busy": true, "forever": true} {
		if got := tab.Get(id) != nil; got != want {
			t.Errorf("%s kept %v at its TTL, want %v", id, got, want)
		}
	}
	if got := expireAll(t, tab, time.Minute+ttl+time.Nanosecond); got != 1 || tab.Get("again") != nil {
		t.Errorf("expired %d rows, want 1 (the program seen again)", got)
	}
	// busy's call ends: it goes a TTL later, not before.
	end := 3 * ttl
	tab.finish(busy, end)
	if got := expireAll(t, tab, end+ttl); got != 0 {
		t.Errorf("expired %d rows at its call's end plus its TTL, want 0", got)
	}
	if got := expireAll(t, tab, end+ttl+time.Nanosecond); got != 1 || tab.Get("busy") != nil {
		t.Errorf("expired %d rows a TTL after busy's call, want 1", got)
	}
	if got := expireAll(t, tab, 100*ttl); got != 0 || tab.Len() != 1 || tab.Get("forever") == nil || tab.due.Len() != 0 {
		t.Errorf("expired %d, left %d rows and %d in the heap; want only forever, out of the heap", got, tab.Len(), tab.due.Len())
	}
}

// Each expiry step looks at a bounded number of rows however many are due
// or live: the engine's loop waits for it.
func TestProgramTableExpireStepBounded(t *testing.T) {
	tab := newProgramTable()
	const live, due = 20_000, 3*ExpireBatch + 1
	for i := range live {
		call(tab, "live"+strconv.Itoa(i), time.Hour, time.Second, time.Second)
	}
	for i := range due {
		call(tab, "due"+strconv.Itoa(i), time.Minute, 0, 0)
	}
	now := 2 * time.Minute
	steps, dropped := 0, 0
	for {
		d, touched, more := tab.expireStep(now)
		steps++
		dropped += d
		if touched > ExpireBatch {
			t.Fatalf("step %d looked at %d rows, more than %d", steps, touched, ExpireBatch)
		}
		if !more {
			break
		}
	}
	if dropped != due || tab.Len() != live {
		t.Errorf("dropped %d, left %d; want %d dropped, %d left", dropped, tab.Len(), due, live)
	}
	if want := due/ExpireBatch + 1; steps != want {
		t.Errorf("%d steps for %d due rows, want %d", steps, due, want)
	}
	// Nothing due: a step looks at no row at all.
	if d, touched, more := tab.expireStep(now); d != 0 || touched != 0 || more {
		t.Errorf("a step with nothing due dropped %d, looked at %d rows, more %v", d, touched, more)
	}
}

// BenchmarkProgramTableExpire is one expiry tick on the engine's goroutine
// with live rows, none due: the time every running call's iteration waits
// for it. The whole-table scan it replaced took 0.12 ms at 10,000 rows and
// 14–19 ms at 100,000 (docs/results-router.md §4).
func BenchmarkProgramTableExpire(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		b.Run("rows="+strconv.Itoa(n), func(b *testing.B) {
			tab := newProgramTable()
			for i := range n {
				call(tab, "p"+strconv.Itoa(i), time.Hour, time.Second, time.Second)
			}
			for b.Loop() {
				if d, _ := tab.Expire(time.Minute); d != 0 {
					b.Fatal("a row expired")
				}
			}
		})
	}
}
