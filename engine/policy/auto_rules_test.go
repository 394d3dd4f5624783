package policy

import "testing"

// TestAutoRulesOff: each of "auto"'s rules switched off alone changes
// Pitstop.order exactly where that rule decides, and nowhere else; with
// single-call programs no switch changes anything (the order is the call's).
// Mixed shapes of one size are in the call's order: the shape rule that put
// them in the queues was removed in session 13.
func TestAutoRulesOff(t *testing.T) {
	heavy := func(i int) float64 {
		if i%10 == 0 {
			return 100
		}
		return 1
	}
	oneSize := func(i int) float64 { return 10 + float64(i%3) }
	situations := []struct {
		name    string
		multi   bool
		dags    int // of 4 programs
		samples func(int) float64
	}{
		{"single-call", false, 0, nil},
		{"warm-up, DAGs", true, 3, nil},
		{"warm-up, chains", true, 0, nil},
		{"heavy tail, chains", true, 0, heavy},
		{"one size, DAGs", true, 3, oneSize},
		{"one size, mixed shapes", true, 1, oneSize},
		{"one size, chains", true, 0, oneSize},
	}
	variants := []struct {
		name string
		o    Options
		want []programOrder // per situation
	}{
		{"auto", Options{}, []programOrder{byCall, byArrival, byQueue, byCall, byArrival, byCall, byCall}},
		{"auto-warmup", Options{ProgramOrder: "auto-warmup"}, []programOrder{byCall, byCall, byCall, byCall, byArrival, byCall, byCall}},
		{"CV off", Options{ProgramCVLow: -1}, []programOrder{byCall, byArrival, byQueue, byCall, byCall, byCall, byCall}},
	}
	for _, v := range variants {
		for i, sit := range situations {
			p := NewPitstop(v.o)
			if sit.samples != nil {
				for j := range 200 {
					p.model.add(sit.samples(j))
				}
				p.model.rebuild()
			}
			p.a.table.anyMulti = sit.multi
			p.a.table.threaded, p.a.table.programs = sit.dags, 4
			if got := p.order(); got != v.want[i] {
				t.Errorf("%s, %s: order %d, want %d (cv %.2f)", v.name, sit.name, got, v.want[i], p.model.cv)
			}
		}
	}
}

func TestAutoOrderNames(t *testing.T) {
	for _, ok := range []string{"", "auto", "auto-warmup"} {
		if err := (Options{ProgramOrder: ok}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
		if !isAuto(ok) {
			t.Errorf("%q: not an auto order", ok)
		}
	}
	for _, bad := range []string{"auto-", "auto-cv", "auto-shape", "auto-warmup-warmup", "autowarmup"} {
		if err := (Options{ProgramOrder: bad}).Validate(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if p := NewPitstop(Options{ProgramOrder: "auto-warmup"}); p.fixedOrder || !p.noWarmup {
		t.Errorf("auto-warmup: fixed %v, no warm-up %v", p.fixedOrder, p.noWarmup)
	}
}
