package tinytools

import (
	"math"
	"testing"
)

func TestExpNeg(t *testing.T) {
	for x := float32(-87); x <= 0; x += 0.001 {
		got, want := float64(expNeg(x)), math.Exp(float64(x))
		tol := 1e-6
		if x < -10 {
			tol = 1e-5 // the float32 argument reduction loses digits
		}
		if math.Abs(got-want) > tol*want+1e-38 {
			t.Fatalf("expNeg(%g) = %g, want %g", x, got, want)
		}
	}
}
