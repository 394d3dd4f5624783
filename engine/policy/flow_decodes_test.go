package policy

import (
	"math"
	"testing"
)

// The flow term is the integral it stands for: (1/n)·Σ_D ∫₀ᴮ min(D·c, u)
// du, summed numerically here; for a given busy period it grows with the
// chunk (the calls to come decode beside a fatter iteration); it is 0
// with no sample.
func TestFlowDecodesIsTheIntegral(t *testing.T) {
	var f flowDecodes
	f.prepare()
	if v := f.mean(100, 1e4); v != 0 {
		t.Fatalf("no sample: %v, want 0", v)
	}
	lengths := []int{3, 40, 40, 250, 900, 0}
	for _, n := range lengths {
		f.add(n) // 0 is no segment
	}
	f.prepare()
	const b = 2e4
	for _, c := range []float64{1, 10, 64, 300, 2000} {
		want := 0.0
		for _, n := range lengths[:5] {
			const steps = 20000
			for i := range steps {
				u := (float64(i) + 0.5) * b / steps
				want += math.Min(float64(n)*c, u) * b / steps
			}
		}
		want /= 5
		if got := f.mean(c, b); math.Abs(got-want) > 1e-4*want {
			t.Errorf("c %v: %v, want %v", c, got, want)
		}
	}
	prev := 0.0
	for c := 1.0; c < 2048; c *= 1.5 {
		v := f.mean(c, b)
		if v <= prev {
			t.Errorf("flow at chunk %v: %v, not above %v at the smaller chunk", c, v, prev)
		}
		prev = v
	}
}
