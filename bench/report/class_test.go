package report

import "testing"

// Calls are split by their program's class; programs without one, and a
// run with none, are left out.
func TestByClass(t *testing.T) {
	c := NewCollector()
	c.SetClass("p", "alpha")
	c.SetClass("q", "beta")
	c.CallArrived("p/a", "p", 0)
	c.FirstToken("p/a", 1)
	c.CallFinished("p/a", 2, 3)
	c.CallArrived("p/b", "p", 2)
	c.FirstToken("p/b", 2.5)
	c.CallFinished("p/b", 6, 3)
	c.CallArrived("q/a", "q", 1)
	c.FirstToken("q/a", 1.5)
	c.CallFinished("q/a", 2, 3)
	c.CallArrived("r/a", "r", 0) // no class
	c.CallFinished("r/a", 1, 1)
	c.CallArrived("q/late", "q", 8)
	c.Stop(10) // censored at the stop, as Run's own latencies
	got := c.Summarize("x", 1).ByClass
	want := map[string]PositionStats{
		"alpha": {Calls: 2, TTFTMeanS: 0.75, TTFTP50S: 0.5, TTFTP99S: 1, E2EMeanS: 3, E2EP99S: 4},
		"beta":  {Calls: 2, TTFTMeanS: 1.25, TTFTP50S: 0.5, TTFTP99S: 2, E2EMeanS: 1.5, E2EP99S: 2},
	}
	if len(got) != len(want) {
		t.Fatalf("ByClass = %+v, want %+v", got, want)
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("ByClass[%s] = %+v, want %+v", k, got[k], w)
		}
	}
	none := NewCollector()
	none.CallArrived("a", "p", 0)
	none.CallFinished("a", 1, 1)
	if got := none.Summarize("x", 1).ByClass; got != nil {
		t.Errorf("ByClass without classes = %+v, want nil", got)
	}
}
