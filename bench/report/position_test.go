package report

import "testing"

// Calls with a position are summarised by it, before or after their arrival
// was recorded; calls without one are left out; a stopped run censors its
// unfinished calls at the stop, as Run's own TTFT and e2e do.
func TestByPosition(t *testing.T) {
	c := NewCollector()
	c.SetPosition("p/root", PosFirst) // before arrival
	c.CallArrived("p/root", "p", 0)
	c.FirstToken("p/root", 0.5)
	c.CallFinished("p/root", 2, 3)
	for i, name := range []string{"p/a", "p/b"} {
		c.CallArrived(name, "p", 2)
		c.SetPosition(name, PosBurst) // after arrival
		c.FirstToken(name, 2+float64(i+1))
		c.CallFinished(name, 6+float64(i), 3)
	}
	c.CallArrived("p/x", "p", 7) // no position
	c.CallFinished("p/x", 8, 1)
	c.SetPosition("p/late", PosLater)
	c.CallArrived("p/late", "p", 8)
	c.Stop(10) // p/late never got a token: censored at the stop

	got := c.Summarize("x", 1).ByPosition
	want := map[string]PositionStats{
		PosFirst: {Calls: 1, TTFTMeanS: 0.5, TTFTP50S: 0.5, TTFTP99S: 0.5, E2EMeanS: 2, E2EP99S: 2},
		PosBurst: {Calls: 2, TTFTMeanS: 1.5, TTFTP50S: 1, TTFTP99S: 2, E2EMeanS: 4.5, E2EP99S: 5},
		PosLater: {Calls: 1, TTFTMeanS: 2, TTFTP50S: 2, TTFTP99S: 2, E2EMeanS: 2, E2EP99S: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("ByPosition = %+v, want %+v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("ByPosition[%s] = %+v, want %+v", k, got[k], w)
		}
	}
	if n := len(c.pendingPos); n != 0 {
		t.Errorf("%d pending positions left after every call arrived", n)
	}
}

// A run whose driver names no position has no breakdown (and no JSON field).
func TestByPositionAbsent(t *testing.T) {
	c := NewCollector()
	c.CallArrived("a", "", 0)
	c.CallFinished("a", 1, 1)
	if got := c.Summarize("x", 1).ByPosition; got != nil {
		t.Errorf("ByPosition = %+v, want nil", got)
	}
}
