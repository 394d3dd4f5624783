package predictor

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestP2QuantileConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, p := range []float64{0.5, 0.9} {
		e := NewP2Quantile(p)
		xs := make([]float64, 20000)
		for i := range xs {
			xs[i] = math.Exp(rng.NormFloat64()) // lognormal: skewed like tool latencies
			e.Add(xs[i])
		}
		slices.Sort(xs)
		exact := xs[int(p*float64(len(xs)))]
		if rel := math.Abs(e.Value()-exact) / exact; rel > 0.03 {
			t.Errorf("p%.0f: P² %.4f, exact %.4f (%.1f%% off)", 100*p, e.Value(), exact, 100*rel)
		}
	}
	e := NewP2Quantile(0.5)
	if !math.IsNaN(e.Value()) {
		t.Fatal("empty estimator is not NaN")
	}
	for _, x := range []float64{5, 1, 3} {
		e.Add(x)
	}
	if e.Value() != 3 {
		t.Fatalf("exact median of 3 samples: %v", e.Value())
	}
}

func TestDurationEstimator(t *testing.T) {
	d := NewDurationEstimator(DurationOptions{Alpha: 0.2, MinSamples: 4, Fallback: 2})
	if got := d.PredictDuration("unknown"); got != 2 {
		t.Fatalf("unknown tool: %v, want the fallback", got)
	}
	d.SetPrior("search", 10)
	if got := d.PredictDuration("search"); got != 10 {
		t.Fatalf("prior only: %v", got)
	}
	d.Observe("search", 2)
	if got := d.PredictDuration("search"); got != 0.25*2+0.75*10 {
		t.Fatalf("one sample blended with the prior: %v", got)
	}
	for range 50 {
		d.Observe("search", 2)
	}
	if got := d.PredictDuration("search"); math.Abs(got-2) > 1e-9 {
		t.Fatalf("after 51 samples of 2 s: %v", got)
	}
	// The EWMA follows a shift in the tool's latency.
	for range 40 {
		d.Observe("search", 5)
	}
	if got := d.PredictDuration("search"); math.Abs(got-5) > 0.01 {
		t.Fatalf("after the shift to 5 s: %v", got)
	}
	if p90, ok := d.Quantile("search", 0.9); !ok || math.Abs(p90-5) > 1e-3 {
		t.Fatalf("p90 %v %v", p90, ok)
	}
	if _, ok := d.Quantile("search", 0.7); ok {
		t.Fatal("unsupported quantile reported ok")
	}
	// Bad durations are ignored.
	d.Observe("search", -1)
	d.Observe("search", math.NaN())
	d.Observe("search", math.Inf(1))
	if s, _ := d.Stats("search"); s.Count != 91 {
		t.Fatalf("count %d after ignored samples", s.Count)
	}
}

// Two P² estimators can cross: on this bimodal stream (a tool that takes
// 2 or 61 ms) the p90's markers end below the p50's (0.0119 against
// 0.0217 s). The estimator's p90 is never below its p50: policies read the
// pair as a spread (runtime's TestToolDurationsPerArgumentClass flaked on it).
func TestDurationQuantilesOrdered(t *testing.T) {
	xs := []float64{0.002, 0.062, 0.002, 0.002, 0.061, 0.061, 0.002}
	p50, p90 := NewP2Quantile(0.5), NewP2Quantile(0.9)
	d := NewDurationEstimator(DurationOptions{})
	for _, x := range xs {
		p50.Add(x)
		p90.Add(x)
		d.Observe("shell", x)
	}
	if p90.Value() >= p50.Value() {
		t.Fatalf("the stream no longer crosses the raw estimators (p50 %v, p90 %v): pick another", p50.Value(), p90.Value())
	}
	m, _ := d.Quantile("shell", 0.5)
	n, _ := d.Quantile("shell", 0.9)
	if n < m {
		t.Fatalf("p90 %v below p50 %v", n, m)
	}
}

func TestDurationEstimatorPersistence(t *testing.T) {
	d := NewDurationEstimator(DurationOptions{})
	rng := rand.New(rand.NewPCG(3, 4))
	d.SetPrior("slow", 30)
	for range 100 {
		d.Observe("fast", 0.1*math.Exp(rng.NormFloat64()))
	}
	d.Observe("slow", 20)
	path := filepath.Join(t.TempDir(), "durations.json")
	if err := d.Save(path); err != nil {
		t.Fatal(err)
	}
	e, err := LoadDurations(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range []string{"fast", "slow", "none"} {
		if a, b := d.PredictDuration(tool), e.PredictDuration(tool); a != b {
			t.Errorf("%s: %v before save, %v after load", tool, a, b)
		}
		qa, _ := d.Quantile(tool, 0.9)
		qb, _ := e.Quantile(tool, 0.9)
		if qa != qb && !(math.IsNaN(qa) && math.IsNaN(qb)) {
			t.Errorf("%s p90: %v before save, %v after load", tool, qa, qb)
		}
	}
	// The loaded estimator keeps learning where the saved one stopped.
	d.Observe("fast", 1)
	e.Observe("fast", 1)
	if d.PredictDuration("fast") != e.PredictDuration("fast") {
		t.Error("loaded estimator diverges after one more sample")
	}
	if !slices.Equal(d.Tools(), []string{"fast", "slow"}) {
		t.Errorf("tools %v", d.Tools())
	}
	// Save leaves no temporary files behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries after Save", len(entries))
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	for content, want := range map[string]string{
		"{not json":                   "bad.json",
		`{"version": 9, "tools": {}}`: "file version 9",
		`{"version": 1, "tools": {"x": {"count": 3, "ewma_s": 1, "p50": {"p": 0.5, "n": 1}, "p90": {"p": 0.9, "n": 3}}}}`: `tool "x"`,
	} {
		os.WriteFile(bad, []byte(content), 0o644)
		if _, err := LoadDurations(bad); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("load %q: error %v, want one containing %q", content, err, want)
		}
	}
	if _, err := LoadDurations(filepath.Join(t.TempDir(), "missing.json")); err == nil {
		t.Error("missing file: no error")
	}
	if err := d.Save(filepath.Join(t.TempDir(), "no", "such", "dir.json")); err == nil {
		t.Error("save into a missing directory: no error")
	}
}

func TestDurationEstimatorConcurrent(t *testing.T) {
	d := NewDurationEstimator(DurationOptions{})
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 500 {
				d.Observe("t", float64(g+i%3))
				d.PredictDuration("t")
				d.Quantile("t", 0.5)
				if i%100 == 0 {
					d.SetPrior("t", 1)
				}
			}
		}()
	}
	wg.Wait()
	if s, _ := d.Stats("t"); s.Count != 2000 || s.P50.N != 2000 {
		t.Fatalf("count %d, p50 n %d", s.Count, s.P50.N)
	}
}
