package planner

import (
	"strings"
	"testing"
)

func tinySpec(t *testing.T) (*AppSpec, string) {
	t.Helper()
	spec, dir, err := ReadApp("testdata/tiny.json")
	if err != nil {
		t.Fatal(err)
	}
	return spec, dir
}

func TestBuildAppOrdersAndFusesSelfLoops(t *testing.T) {
	spec, dir := tinySpec(t)
	// List the dependent model first: the graph must still put its input first.
	spec.Models[0], spec.Models[2] = spec.Models[2], spec.Models[0]
	a, err := BuildApp(spec, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[string]int{}
	for i, m := range a.Models {
		pos[m.Name] = i
	}
	if pos["b"] > pos["c"] {
		t.Fatalf("order %v: c reads b, b must come first", pos)
	}
	c := a.Models[pos["c"]]
	if !c.selfLoop || len(c.inputs) != 1 {
		t.Fatalf("c: self-loop %v, inputs %v: want the loop fused and one input (b)", c.selfLoop, c.inputs)
	}
	if c.Requests() != 40 {
		t.Fatalf("c answers %d requests, want b's 40", c.Requests())
	}
	multi := 0
	for i, q := range c.reqs {
		if len(q.out) > 1 {
			multi++
			// Round 1's prompt is its chunk plus round 0's output.
			if got, want := a.prompt(c, i, 1), q.chunk[1]+q.out[0]; got != want {
				t.Fatalf("round 1 prompt %d, want %d", got, want)
			}
		}
		b := a.Models[pos["b"]]
		if got, want := a.prompt(c, i, 0), q.chunk[0]+b.reqs[i].out[0]; got != want {
			t.Fatalf("request %d: round 0 prompt %d, want chunk + b's output = %d", i, got, want)
		}
		for _, o := range q.out {
			if o > 256 {
				t.Fatalf("output %d above max_output 256", o)
			}
		}
	}
	if multi == 0 {
		t.Fatal("no request of the self-loop has more than one round")
	}
}

func TestBuildAppErrorsNameTheModel(t *testing.T) {
	cases := []struct {
		name   string
		edit   func(s *AppSpec)
		wanted []string
	}{
		{"cycle", func(s *AppSpec) { s.Models[1].Inputs = []InputSpec{{From: "c"}} }, []string{"model ", "cycle", "b → c"}},
		{"no profile", func(s *AppSpec) { s.Models[1].Profile = "" }, []string{"model b", "no profile"}},
		{"unknown profile", func(s *AppSpec) { s.Models[0].Profile = "h100-nope" }, []string{"model a", "unknown profile"}},
		{"unknown input", func(s *AppSpec) { s.Models[2].Inputs = []InputSpec{{From: "zz"}} }, []string{"model c", `"zz"`}},
		{"tp", func(s *AppSpec) { s.Models[0].TP = []int{3} }, []string{"model a", "tensor-parallel degree 3"}},
		{"self-loop without rounds", func(s *AppSpec) { s.Models[2].RoundsLengths = "" }, []string{"model c", "rounds_lengths"}},
		{"input too short", func(s *AppSpec) { s.Models[2].Requests = 41 }, []string{"model c", "answers only 40"}},
		{"negative skip", func(s *AppSpec) { s.Models[2].Inputs[0].Skip = -0.5 }, []string{"model c", "skip within 0..1"}},
		{"too many requests", func(s *AppSpec) { s.Models[0].Requests = 2_000_000 }, []string{"model a", "requests must be within"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			spec, dir := tinySpec(t)
			tc.edit(spec)
			_, err := BuildApp(spec, dir, 1)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.wanted {
				if !strings.Contains(err.Error(), w) {
					t.Fatalf("error %q does not say %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line", err)
			}
		})
	}
}

func TestBudgetBelowTheSmallestPlanNamesTheModel(t *testing.T) {
	spec, dir := tinySpec(t)
	spec.Models[1].TP = []int{2}
	a, err := BuildApp(spec, dir, 1)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Search(a, NewSimulator(a), 1, ModelRates)
	if err == nil || !strings.Contains(err.Error(), "model b") || !strings.Contains(err.Error(), "needs 2 GPUs") {
		t.Fatalf("err = %v, want model b needing 2 GPUs", err)
	}
}
