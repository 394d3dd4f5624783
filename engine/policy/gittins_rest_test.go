package policy

import (
	"math"
	"slices"
	"testing"
)

// restTable builds a restIndex over xs.
func restTable(xs []float64) *restIndex {
	s := slices.Clone(xs)
	slices.Sort(s)
	suf := make([]float64, len(s)+1)
	for i := len(s) - 1; i >= 0; i-- {
		suf[i] = suf[i+1] + s[i]
	}
	var r restIndex
	r.build(s, suf)
	return &r
}

// bruteKey is 1/G of R = m + F by enumerating every stopping point: F = 0
// with probability q, else scale·(x − b) for a sample x > b, uniformly.
func bruteKey(xs []float64, m, b, q, scale float64) float64 {
	var rest []float64
	for _, x := range xs {
		if x > b {
			rest = append(rest, scale*(x-b))
		}
	}
	best := math.Inf(1)
	if q > 0 {
		best = m / q
	}
	for _, d := range rest {
		done, work := q, q*m
		for _, f := range rest {
			w := 1 - q
			w /= float64(len(rest))
			if f <= d {
				done += w
				work += w * (m + f)
			} else {
				work += w * (m + d)
			}
		}
		best = min(best, work/done)
	}
	return best
}

func TestRestIndexMatchesEnumeration(t *testing.T) {
	xs := []float64{1, 1, 2, 3, 5, 8, 13, 21, 34, 55}
	r := restTable(xs)
	for _, q := range []float64{0, 0.1, 0.5, 0.9} {
		for _, m := range []float64{0.5, 5, 50} {
			// b = 0 is a table point, and with 10 survivors every one is a
			// candidate: the table is exact there.
			got, want := r.key(m, 0, q, 2), bruteKey(xs, m, 0, q, 2)
			if math.Abs(got-want) > 1e-9*want {
				t.Errorf("q=%g m=%g: key %v, enumeration %v", q, m, got, want)
			}
		}
	}
}

func TestRestIndexSingleCallIsTheCallOrder(t *testing.T) {
	// Every program a single call (q = 1): the key is the call's own
	// memory-over-time, exactly, whatever the distribution or attained.
	heavy, _ := restSamples()
	r := restTable(heavy)
	for _, m := range []float64{1e-3, 0.7, 12345.678} {
		for _, b := range []float64{0, 3, 1e6} {
			if k := r.key(m, b, 1, 1000); k != m {
				t.Errorf("m=%g b=%g: key %v, want m", m, b, k)
			}
		}
	}
	var empty restIndex
	if k := empty.key(3, 1, 0, 1); k != 3 {
		t.Errorf("no samples: key %v, want m", k)
	}
}

// restSamples are a heavy-tailed (Pareto, α = 1.2) and a nearly equal
// (10 s ± 0.06) distribution of program service.
func restSamples() (heavy, equal []float64) {
	for i := 1; i <= 400; i++ {
		heavy = append(heavy, 1/math.Pow(float64(i)/401, 1/1.2))
		equal = append(equal, 10+float64(i%7)*0.01)
	}
	return heavy, equal
}

func TestRestIndexHeavyTailIsLeastAttained(t *testing.T) {
	heavy, _ := restSamples()
	r := restTable(heavy)
	for _, q := range []float64{0, 0.2} {
		fresh, served := r.key(1, 0.5, q, 1), r.key(1, 50, q, 1)
		if !(fresh < served) {
			t.Errorf("q=%g: fresh program %v, served one %v: want the least attained first", q, fresh, served)
		}
		// Over the empirical samples the index is not monotone at every
		// point, but an order of magnitude more service ranks later.
		for _, b := range []float64{1, 2, 4} {
			if lo, hi := r.key(1, b, q, 1), r.key(1, 10*b, q, 1); !(lo < hi) {
				t.Errorf("q=%g: key %v at b=%g, %v at b=%g", q, lo, b, hi, 10*b)
			}
		}
	}
}

func TestRestIndexEqualSizesIsArrivalOrder(t *testing.T) {
	_, equal := restSamples()
	r := restTable(equal)
	fresh, advanced := r.key(1, 0, 0, 1), r.key(1, 9.5, 0, 1)
	if !(advanced < fresh) {
		t.Errorf("advanced program %v, fresh one %v: want the further along first", advanced, fresh)
	}
	// A program near its end is ranked by about what is left (0.53 s on
	// average, from the table point at or below b: within 10.06/64 s).
	if advanced < 1+0.5 || advanced > 1+0.53+10.06/64+0.01 {
		t.Errorf("advanced program's key %v, want about m + 0.53", advanced)
	}
}

func TestRestIndexCallRestStillCounts(t *testing.T) {
	// Inside one program state, a call with less work of its own goes first.
	heavy, equal := restSamples()
	for _, xs := range [][]float64{heavy, equal} {
		r := restTable(xs)
		for _, q := range []float64{0, 0.3} {
			if a, b := r.key(1, 2, q, 1), r.key(10, 2, q, 1); !(a < b) {
				t.Errorf("q=%g: short call %v, long call %v", q, a, b)
			}
		}
	}
}

func TestRestIndexPastSamples(t *testing.T) {
	// Longer than every sample: expected to need as much again (F = b).
	r := restTable([]float64{1, 2, 3})
	if k := r.key(1, 6, 0, 2); k != 1+2*6 {
		t.Errorf("past the samples: key %v, want m + scale·b = 13", k)
	}
}

func TestProgramOrderNames(t *testing.T) {
	for _, ok := range []string{"gittins-rest", "gittins-rest+cv", "gittins-rest+shape+warmup", "gittins-rest+warmup", "gittins", "auto"} {
		if err := (Options{ProgramOrder: ok}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"gittins-rest+", "gittins-rest+tail", "gittins-rest+guard", "gittins+cv", "rest"} {
		if err := (Options{ProgramOrder: bad}).Validate(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	_, r, _ := parseProgramOrder("gittins-rest+cv+warmup")
	if r != (restRules{cv: true, warmup: true}) {
		t.Errorf("rules %+v", r)
	}
}
