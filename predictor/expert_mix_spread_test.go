package predictor

import (
	"math"
	"slices"
	"testing"
)

// oneBin is a distribution with all its mass in tokens' bin.
func oneBin(tokens int) []float32 {
	d := make([]float32, NumClasses)
	d[BinOf(tokens)] = 1
	return d
}

// A distribution sharper than the error shown is widened to about that
// error and still sums to 1; one as wide already, or no error shown, is
// left alone.
func TestWidenToError(t *testing.T) {
	const over = 750
	sharp := oneBin(55)
	w := widenToError(sharp, 55, 30, over)
	if w == nil {
		t.Fatal("a one-bin distribution against a 30-token error: not widened")
	}
	var sum float64
	for _, p := range w {
		sum += float64(p)
	}
	if math.Abs(sum-1) > 1e-4 {
		t.Fatalf("widened distribution sums to %.5f", sum)
	}
	if e := midpointAbsError(w, 55, over); e < 25 || e > 35 {
		t.Fatalf("widened distribution's expected error %.1f, want about the 30 shown", e)
	}
	if got := widenToError(laplaceBins(55, 60), 55, 30, over); got != nil {
		t.Fatal("a distribution wider than the error shown was widened")
	}
	if got := widenToError(sharp, 55, 0, over); got != nil {
		t.Fatal("widened with no error shown")
	}
}

// On later segments where the sharp model misses by far and the program's
// mean is right, the calibrated mixture's point moves toward the mean;
// first segments, the returned distribution and a mixture with nothing
// booked are as without the option.
func TestCalibrateModelSpread(t *testing.T) {
	const over, median = 750, 40
	plain, calibrated := OrderScored(median), OrderScored(median).CalibrateModelSpread()
	fresh := OrderScored(median).CalibrateModelSpread()
	b := ProgramBlend{}.Observe(20, 150, "")
	for i := range 100 {
		actual := 140 + i%21 // lengths around the mean 150, so that pairs are ordered
		for _, x := range []*ExpertMix{plain, calibrated} {
			blended, _ := b.Predict(20, oneBin(20), over)
			x.Observe(b, 20, blended, actual)
		}
	}
	pp, pd, _ := plain.Predict(b, 20, oneBin(20), over)
	cp, cd, _ := calibrated.Predict(b, 20, oneBin(20), over)
	if math.Abs(float64(cp-150)) >= math.Abs(float64(pp-150)) {
		t.Fatalf("later segment: calibrated point %d, plain %d: want the calibrated one nearer the mean 150", cp, pp)
	}
	if !slices.Equal(pd, cd) {
		t.Fatal("the calibrated mixture returned another distribution")
	}
	if p1, _, _ := plain.Predict(ProgramBlend{}, 20, oneBin(20), over); p1 != func() int {
		n, _, _ := calibrated.Predict(ProgramBlend{}, 20, oneBin(20), over)
		return n
	}() {
		t.Fatal("first segment: the calibrated point differs")
	}
	fp, _, _ := fresh.Predict(b, 20, oneBin(20), over)
	if np, _, _ := OrderScored(median).Predict(b, 20, oneBin(20), over); fp != np {
		t.Fatalf("nothing booked: calibrated point %d, plain %d", fp, np)
	}
}

// Where the model is the expert with the lowest error on later segments (a
// source it knows), its distribution is read as it is, however sharp: the
// point equals the plain mixture's.
func TestCalibrateModelSpreadLeavesTheBestModel(t *testing.T) {
	const over, median = 750, 40
	plain, calibrated := OrderScored(median), OrderScored(median).CalibrateModelSpread()
	b := ProgramBlend{}
	for j := range 6 { // the model exact on the program so far, its mean (200) off
		b = b.Observe(100+40*j, 100+40*j, "")
	}
	for i := range 100 {
		actual := 50 + 5*(i%21)
		model := actual + 30 // in order, 30 tokens over: the best expert, sharper than its error
		for _, x := range []*ExpertMix{plain, calibrated} {
			blended, _ := b.Predict(model, oneBin(model), over)
			x.Observe(b, model, blended, actual)
		}
	}
	pp, _, _ := plain.Predict(b, 180, oneBin(180), over)
	if cp, _, _ := calibrated.Predict(b, 180, oneBin(180), over); cp != pp {
		t.Fatalf("the model the best expert: calibrated point %d, plain %d: want the same", cp, pp)
	}
}
