package planner

import (
	"testing"
)

func exampleApp(b *testing.B, requests int) *App {
	b.Helper()
	spec, dir, err := ReadApp("../examples/apps/ensembling.json")
	if err != nil {
		b.Fatal(err)
	}
	for i := range spec.Models {
		spec.Models[i].Requests = requests
	}
	a, err := BuildApp(spec, dir, spec.Seed)
	if err != nil {
		b.Fatal(err)
	}
	return a
}

// BenchmarkSimulateModel is one model's 1,000 requests on one A100 (one
// engine replay): the unit the search's cost is made of.
func BenchmarkSimulateModel(b *testing.B) {
	for _, plan := range []Plan{{1, 1}, {16, 1}, {1, 8}} {
		b.Run(plan.String(), func(b *testing.B) { benchSimulate(b, plan) })
	}
}

func benchSimulate(b *testing.B, plan Plan) {
	a := exampleApp(b, 1000)
	m := a.Models[0]
	items := make([]pending, len(m.reqs))
	for i := range items {
		items[i] = pending{req: i}
	}
	for b.Loop() {
		s := NewSimulator(a)
		if _, err := s.run(m, plan, true, items); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch16x6 is Show 3: the search for six models on 16 GPUs,
// 1,000 requests each, from a cold memo.
func BenchmarkSearch16x6(b *testing.B) {
	a := exampleApp(b, 1000)
	for b.Loop() {
		if _, err := Search(a, NewSimulator(a), 16, ModelRates); err != nil {
			b.Fatal(err)
		}
	}
}
