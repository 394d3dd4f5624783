package policy

import "testing"

// TestGittinsStartedOrder: the default order ("auto", also named
// "gittins-started") is arrival order of programs exactly where the learned
// index never lets a fresh program pass a started one (and, before any
// program completed, under the prior of programs alike) for mostly-DAG
// programs, and the call's order everywhere else; with single-call programs
// it is the call's order. Beside the order before session 14 ("before",
// written out per situation) it differs in two situations only: chains in
// warm-up (before: the queues) and DAG programs of two sizes whose CV is
// under 0.7 but whose index falls once the short ones are past (before:
// arrival order by the CV).
func TestGittinsStartedOrder(t *testing.T) {
	heavy := func(i int) float64 {
		if i%10 == 0 {
			return 100
		}
		return 1
	}
	oneSize := func(i int) float64 { return 10 + float64(i%3) }
	twoSizes := func(i int) float64 { return 1 + 3*float64(i%2) } // 1 or 4: CV 0.6
	situations := []struct {
		name    string
		multi   bool
		dags    int // of 4 programs
		samples func(int) float64
	}{
		{"single-call", false, 0, nil},
		{"single-call, one size", false, 0, oneSize},
		{"warm-up, DAGs", true, 3, nil},
		{"warm-up, chains", true, 0, nil},
		{"heavy tail, chains", true, 0, heavy},
		{"heavy tail, DAGs", true, 3, heavy},
		{"one size, DAGs", true, 3, oneSize},
		{"one size, mixed shapes", true, 1, oneSize},
		{"one size, chains", true, 0, oneSize},
		{"two sizes, DAGs", true, 3, twoSizes},
	}
	variants := []struct {
		name string
		o    Options
		want []programOrder // per situation
	}{
		{"auto", Options{}, []programOrder{byCall, byCall, byArrival, byQueue, byCall, byCall, byArrival, byCall, byCall, byCall}},
		{"gittins-started", Options{ProgramOrder: "gittins-started"}, []programOrder{byCall, byCall, byArrival, byQueue, byCall, byCall, byArrival, byCall, byCall, byCall}},
		{"gittins-started-call", Options{ProgramOrder: "gittins-started-call"}, []programOrder{byCall, byCall, byArrival, byCall, byCall, byCall, byArrival, byCall, byCall, byCall}},
	}
	// Session 13's auto: the default changes only "two sizes, DAGs" (the
	// CV threshold's), the ablation the chains' warm-up too.
	before := []programOrder{byCall, byCall, byArrival, byQueue, byCall, byCall, byArrival, byCall, byCall, byArrival}
	for k, want := range []int{1, 1, 2} {
		changed := 0
		for i := range before {
			if before[i] != variants[k].want[i] {
				changed++
			}
		}
		if changed != want {
			t.Fatalf("the test's own tables: %s changes %d situations, want %d", variants[k].name, changed, want)
		}
	}
	for _, v := range variants {
		for i, sit := range situations {
			p := NewPitstop(v.o)
			if sit.samples != nil {
				for j := range 200 {
					p.pops.of("").model.add(sit.samples(j))
				}
				p.pops.of("").model.rebuild()
			}
			p.a.table.shape("").anyMulti = sit.multi
			p.a.table.shape("").threaded, p.a.table.shape("").programs = sit.dags, 4
			if got := p.orderOf(p.pops.of("")); got != v.want[i] {
				t.Errorf("%s, %s: order %d, want %d (cv %.2f, started first %v)", v.name, sit.name, got, v.want[i], p.pops.of("").model.cv, p.pops.of("").model.started)
			}
		}
	}
}

// TestStartedFirst: the index's answer on distributions whose Gittins index
// is known: rising (one size), falling past the short mode (two sizes,
// heavy tail), and the prior with no samples.
func TestStartedFirst(t *testing.T) {
	cases := []struct {
		name string
		xs   func(int) float64
		n    int
		want bool
	}{
		{"no samples", nil, 0, true},
		{"one size", func(i int) float64 { return 10 + float64(i%3) }, 200, true},
		{"uniform", func(i int) float64 { return float64(1 + i%100) }, 200, true},
		{"two sizes", func(i int) float64 { return 1 + 3*float64(i%2) }, 200, false},
		{"heavy tail", func(i int) float64 { return 1 / (1 - float64(i%100)/100) }, 200, false},
		// Past the short mode fewer than minN programs survive: the fall
		// is not trusted.
		{"two sizes, the long ones rare", func(i int) float64 { return 1 + 3*b2i(i%50 == 0) }, 200, true},
	}
	for _, c := range cases {
		m := newProgramModel(120)
		for i := range c.n {
			m.add(c.xs(i))
		}
		if c.n > 0 {
			m.rebuild()
		}
		if got := m.startedFirst(); got != c.want || m.started != c.want {
			t.Errorf("%s: startedFirst %v (kept %v), want %v (cv %.2f)", c.name, got, m.started, c.want, m.cv)
		}
	}
}

func b2i(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
