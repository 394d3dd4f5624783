package kernel

import "testing"

// TestFMAPeakLoops checks that every assembly instruction set has an FMA
// peak loop for BenchmarkDecodeBandwidth's roofline, that the loops run
// (zero iterations and a few), and that a product right after one still
// gets its vector registers right.
func TestFMAPeakLoops(t *testing.T) {
	for _, isa := range Available() {
		loop, flops := fmaPeak(isa)
		if isa == Generic {
			if loop != nil {
				t.Errorf("generic: an FMA peak loop, want none")
			}
			continue
		}
		if loop == nil || flops <= 0 {
			t.Fatalf("%s: no FMA peak loop (flops %d)", isa, flops)
		}
		loop(0)
		loop(3)
		kern, err := NewFor(isa, 1)
		if err != nil {
			t.Fatal(err)
		}
		x := ramp(64, 5)
		var want float32
		for _, v := range x {
			want += v * v
		}
		if got := kern.Dot(x, x); got-want > 1e-4*want || want-got > 1e-4*want {
			t.Errorf("%s: Dot after the peak loop = %g, want %g", isa, got, want)
		}
	}
}
