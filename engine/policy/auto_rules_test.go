package policy

import "testing"

// TestAutoCVIgnored: since session 14 the default order reads the learned
// index, not the CV: ProgramCVLow (now only gittins-rest+cv's threshold)
// changes no situation's order, including programs whose CV lies on either
// side of the old threshold.
func TestAutoCVIgnored(t *testing.T) {
	samples := map[string]func(int) float64{
		"one size (CV 0.08)":   func(i int) float64 { return 10 + float64(i%3) },
		"two sizes (CV 0.6)":   func(i int) float64 { return 1 + 3*float64(i%2) },
		"heavy tail (CV 2.7)":  func(i int) float64 { return 1 + 99*b2i(i%10 == 0) },
		"uniform 1–100 (0.57)": func(i int) float64 { return float64(1 + i%100) },
	}
	for name, f := range samples {
		for _, dags := range []int{0, 3} {
			var got []programOrder
			for _, cv := range []float64{0, -1, 0.3, 0.99} {
				p := NewPitstop(Options{ProgramCVLow: cv})
				for j := range 200 {
					p.pops.of("").model.add(f(j))
				}
				p.pops.of("").model.rebuild()
				p.a.table.shape("").anyMulti = true
				p.a.table.shape("").threaded, p.a.table.shape("").programs = dags, 4
				got = append(got, p.orderOf(p.pops.of("")))
			}
			for _, o := range got[1:] {
				if o != got[0] {
					t.Errorf("%s, %d of 4 DAGs: order by ProgramCVLow 0.7/-1/0.3/0.99: %v", name, dags, got)
					break
				}
			}
		}
	}
}

func TestAutoOrderNames(t *testing.T) {
	for _, ok := range []string{"", "auto", "gittins-started", "gittins-started-call"} {
		if err := (Options{ProgramOrder: ok}).Validate(); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
		if !isAuto(ok) {
			t.Errorf("%q: not an auto order", ok)
		}
		if p := NewPitstop(Options{ProgramOrder: ok}); p.fixedOrder {
			t.Errorf("%q: a fixed order", ok)
		}
	}
	// auto-warmup switched off the warm-up order, removed in session 14.
	for _, bad := range []string{"auto-", "auto-cv", "auto-shape", "auto-warmup", "autowarmup", "gittins-started+cv", "gittins-start"} {
		if err := (Options{ProgramOrder: bad}).Validate(); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
