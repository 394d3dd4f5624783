package planner

import (
	"os"
	"testing"
)

// FuzzBuildApp feeds application files to the parser and the graph
// builder (length samples from testdata/): bad input is an error, never a
// panic, and a graph that builds has its models in topological order.
func FuzzBuildApp(f *testing.F) {
	for _, name := range []string{"testdata/tiny.json", "testdata/pipeline.json"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"models":[{"name":"a","profile":"flat-profile.json","weights_bytes":1,"requests":3,"prompt_lengths":"ten.json","output_lengths":"five.json","inputs":[{"from":"a","skip":-1}]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		spec, err := ParseApp(data)
		if err != nil {
			return
		}
		a, err := BuildApp(spec, "testdata", 1)
		if err != nil {
			return
		}
		for i, m := range a.Models {
			for _, u := range m.inputs {
				if u >= i {
					t.Fatalf("model %s reads model %d, not before it", m.Name, u)
				}
			}
			for j := range m.reqs {
				for r := range m.reqs[j].out {
					_ = a.prompt(m, j, r) // every input request a round reads exists
				}
			}
		}
	})
}
