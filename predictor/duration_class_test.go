package predictor

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func TestArgumentClass(t *testing.T) {
	for args, want := range map[string]string{
		`{"command": "make test -j4"}`:              "prog:make",
		`{"cmd": "FOO=1 /usr/bin/pytest -q"}`:       "prog:pytest",
		`{"url": "https://Example.com:8443/a?b=c"}`: "host:example.com",
		`{"query": "weather"}`:                      "",
		`not json`:                                  "",
		`{"command": "   "}`:                        "",
		`{"command": "cd /testbed && python -m pytest tests/x.py -q"}`: "prog:python -m pytest",
		`{"command": "cd /repo; export A=1\nmake all | tail"}`:         "prog:make",
		`{"command": "cd /repo"}`:                                      "prog:cd",
		`{"command": "python3 reproduce.py"}`:                          "prog:python3",
	} {
		if got := ArgumentClass(args); got != want {
			t.Errorf("ArgumentClass(%s) = %q, want %q", args, got, want)
		}
	}
}

// A shell tool whose duration depends on the program: the class medians
// predict within 2x where the per-tool median cannot, and they are used.
func TestClassDurationsBeatThePerToolMedian(t *testing.T) {
	c := NewClassDurations(DurationOptions{})
	progs := map[string]float64{"ls": 0.01, "make": 20, "grep": 0.5}
	within2x := func(pred, actual float64) bool { return math.Abs(math.Log(pred/actual)) <= math.Ln2 }
	hits, toolHits, n := 0, 0, 0
	for i := range 300 {
		name := []string{"ls", "make", "grep"}[i%3]
		args := fmt.Sprintf(`{"command": "%s -x %d"}`, name, i)
		actual := progs[name] * (1 + 0.2*float64(i%5)/4)
		if i >= 150 {
			n++
			if within2x(c.Predict("bash", args), actual) {
				hits++
			}
			if within2x(c.toolMedian("bash"), actual) {
				toolHits++
			}
		}
		c.Observe("bash", args, actual)
	}
	if hits != n || toolHits >= n/2 {
		t.Fatalf("within 2x: %d of %d with classes, %d with the per-tool median", hits, n, toolHits)
	}
	// The quantiles come from the same statistics as the prediction: make's
	// (20 s to 30 s), not the tool's mixture of three programs.
	p50, ok50 := c.Quantile("bash", `{"command": "make all"}`, 0.5)
	p90, ok90 := c.Quantile("bash", `{"command": "make all"}`, 0.9)
	if !ok50 || !ok90 || p50 < 19 || p90 > 31 || p90 < p50 {
		t.Fatalf("make's p50 %v (%v), p90 %v (%v), want within 20-30 s and p50 ≤ p90", p50, ok50, p90, ok90)
	}
	if _, ok := c.Quantile("never-called", "", 0.5); ok {
		t.Fatal("a tool with no samples has a quantile")
	}
}

// Where the arguments do not decide the duration, the per-tool median
// stays the prediction.
func TestClassDurationsKeepThePerToolFloor(t *testing.T) {
	c := NewClassDurations(DurationOptions{})
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 400 {
		// The host carries no signal: every call's duration is drawn from
		// the same log-normal, and 40 hosts leave each class few samples.
		args := fmt.Sprintf(`{"url": "https://h%d.example/"}`, i%40)
		c.Observe("http_get", args, math.Exp(rng.NormFloat64()))
	}
	args := `{"url": "https://h0.example/"}`
	if got, floor := c.Predict("http_get", args), c.toolMedian("http_get"); got != floor {
		t.Fatalf("predicted %v, the per-tool median is %v: a class without signal was used", got, floor)
	}
}

// ArgumentClass runs on every server-side tool call serve predicts and
// learns (twice per call), not per engine step.
func BenchmarkArgumentClass(b *testing.B) {
	args := `{"command": "cd /testbed && python -m pytest tests/test_fields.py -q 2>&1 | tail -20"}`
	for b.Loop() {
		if ArgumentClass(args) != "prog:python -m pytest" {
			b.Fatal("wrong class")
		}
	}
}
