package workload

import (
	"math"
	"strings"
	"testing"
)

func TestScale(t *testing.T) {
	orig, err := InferceptMulti()
	if err != nil {
		t.Fatal(err)
	}
	w, _ := InferceptMulti()
	if err := w.Scale(0.25, 0.1); err != nil {
		t.Fatal(err)
	}
	if err := w.Validate(); err != nil {
		t.Fatalf("scaled workload does not validate: %v", err)
	}
	if w.Name != "infercept-multi-tok0.25-time0.1" {
		t.Fatalf("name %q", w.Name)
	}
	if len(w.Notes) != len(orig.Notes)+1 || !strings.Contains(w.Notes[len(w.Notes)-1], "x0.25") {
		t.Fatalf("no note of the scaling: %q", w.Notes)
	}
	so, ss := Stats(orig), Stats(w)
	if so.Programs != ss.Programs || so.Calls != ss.Calls || so.Segments != ss.Segments || so.ToolCalls != ss.ToolCalls {
		t.Fatalf("structure changed: %+v vs %+v", so, ss)
	}
	near := func(what string, got, want, tol float64) {
		t.Helper()
		if math.Abs(got-want) > tol*want {
			t.Errorf("%s: %g, want %g within %g%%", what, got, want, 100*tol)
		}
	}
	near("mean prompt", ss.MeanPrompt, 0.25*so.MeanPrompt, 0.02)
	near("mean decode", ss.MeanDecode, 0.25*so.MeanDecode, 0.05) // rounding of short segments
	near("mean tool time", ss.MeanToolTime, 0.1*so.MeanToolTime, 1e-9)
	for pi := range w.Programs {
		for ci := range w.Programs[pi].Calls {
			for si, s := range w.Programs[pi].Calls[ci].Segments {
				o := orig.Programs[pi].Calls[ci].Segments[si]
				if (o.Decode > 0) != (s.Decode > 0) || (o.ToolReturn > 0) != (s.ToolReturn > 0) {
					t.Fatalf("program %d call %d segment %d: a count changed sign: %+v -> %+v", pi, ci, si, o, s)
				}
			}
		}
	}

	same, _ := InferceptMulti()
	if err := same.Scale(1, 1); err != nil || same.Name != orig.Name || len(same.Notes) != len(orig.Notes) {
		t.Fatalf("Scale(1, 1) changed the workload: %v, %q", err, same.Name)
	}
	for _, f := range [][2]float64{{0, 1}, {1, 0}, {-1, 1}, {math.NaN(), 1}, {1, math.Inf(1)}} {
		if err := same.Scale(f[0], f[1]); err == nil {
			t.Errorf("Scale(%g, %g): no error", f[0], f[1])
		}
	}
}
