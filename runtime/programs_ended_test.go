package runtime

import (
	"strconv"
	"testing"
	"time"
)

// Anonymous calls' rows expire in the order their calls ended, over more
// than one batch; rows ended after the cutoff, rows in use again, and
// named programs stay.
func TestExpireEnded(t *testing.T) {
	tab := newProgramTable()
	t0 := time.Now()
	anon := func(i int) string { return anonPrefix + strconv.Itoa(i) }
	const n = 2*endedBatch + 10
	for i := range n {
		at := t0.Add(time.Duration(i) * time.Millisecond)
		tab.arrive(anon(i), anon(i), "", "", true, at)
		tab.finish(anon(i), &Result{}, at)
	}
	tab.arrive("named", "named", "", "", false, t0)
	tab.finish("named", &Result{}, t0)
	tab.invokeStart(anon(3), anon(3), "", t0.Add(time.Hour)) // seen again, in use
	cutoff := t0.Add(time.Duration(n-5) * time.Millisecond)  // all but the last 5 ended before it
	if got := tab.expireEnded(cutoff); got != n-5-1 {
		t.Errorf("expired %d rows, want %d", got, n-5-1)
	}
	for i := range n {
		_, ok := tab.get(anon(i))
		if want := i == 3 || i >= n-5; ok != want {
			t.Errorf("row %d kept %v, want %v", i, ok, want)
		}
	}
	if _, ok := tab.get("named"); !ok {
		t.Error("a named program expired with the anonymous ones")
	}
	if len(tab.ended) != 5 {
		t.Errorf("%d ended rows still queued, want 5", len(tab.ended))
	}
	// The rest go later; the row in use only by the whole table's scan
	// once it is idle.
	if got := tab.expireEnded(t0.Add(time.Hour)); got != 5 {
		t.Errorf("expired %d rows, want 5", got)
	}
	tab.invokeEnd(anon(3), time.Second, t0.Add(time.Hour))
	if got := tab.expire(t0.Add(-time.Hour), t0.Add(2*time.Hour)); got != 1 {
		t.Errorf("the scan expired %d rows, want 1 (the row seen again)", got)
	}
}
