package policy

import (
	"context"
	"fmt"
	"testing"

	"github.com/pitstop-llm/pitstop/bench"
	"github.com/pitstop-llm/pitstop/bench/workload"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// smallWorkload has the three shapes the policies meet: a multi-API call
// (tools inside a call), a multi-turn program (each call continues its
// parent's context) and a DAG program (parallel threads joined by a last
// call).
func smallWorkload(t testing.TB) *workload.Workload {
	multiAPI := workload.Program{ID: "multi-api", Calls: []workload.Call{{
		ID: "c", NewTokens: 300, Segments: []workload.Segment{
			{Decode: 40, Tool: "math", ToolTime: 0.05, ToolReturn: 20},
			{Decode: 30, Tool: "qa", ToolTime: 2, ToolReturn: 60},
			{Decode: 50},
		}}}}
	chat := workload.Program{ID: "chat"}
	for i := range 4 {
		c := workload.Call{ID: fmt.Sprint("turn", i), NewTokens: 120, ThinkTime: 0.5, Segments: []workload.Segment{{Decode: 60}}}
		if i > 0 {
			c.Parents, c.ContinueParent = []string{fmt.Sprint("turn", i-1)}, true
		}
		chat.Calls = append(chat.Calls, c)
	}
	dag := workload.Program{ID: "dag", Calls: []workload.Call{
		{ID: "root", Thread: "t0", NewTokens: 200, Segments: []workload.Segment{{Decode: 20}}},
		{ID: "a", Thread: "t1", Parents: []string{"root"}, ContinueParent: true, NewTokens: 30, Segments: []workload.Segment{{Decode: 40}}},
		{ID: "b", Thread: "t2", Parents: []string{"root"}, ContinueParent: true, NewTokens: 30, Segments: []workload.Segment{{Decode: 25}}},
		{ID: "join", Thread: "t0", Parents: []string{"a", "b"}, ContinueParent: true, NewTokens: 10, Segments: []workload.Segment{{Decode: 10}}},
	}}
	w := &workload.Workload{Name: "policy-e2e", Programs: []workload.Program{multiAPI, chat, dag}}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	return w
}

// TestEndToEnd runs every policy on a small workload under memory pressure
// (a device of 6,000 tokens for about 40 programs at once) and checks that
// every call finishes and no block leaks.
func TestEndToEnd(t *testing.T) {
	prof, err := sim.LoadProfile("a100-40g-gptj-6b")
	if err != nil {
		t.Fatal(err)
	}
	prof.KVCapacityTokens = 6000
	w := smallWorkload(t)
	for _, name := range Names() {
		t.Run(name, func(t *testing.T) {
			pol, err := New(name, Options{})
			if err != nil {
				t.Fatal(err)
			}
			cfg := engine.Config{
				NumBlocks: prof.NumBlocks(), BlockSize: prof.BlockSize, HostBlocks: 120,
				MaxBatchedTokens: prof.MaxBatchedTokens, MaxSeqs: prof.MaxSeqs,
				Cost: prof.HandlingCost(), HostBlockBytes: prof.BlockBytes(),
			}
			run, err := bench.Run(context.Background(), bench.RunConfig{
				Workload: w, Engine: cfg, Executor: sim.NewExecutor(prof), Policy: pol, Name: name,
				Rate: 4, Duration: 10, Seed: 3, PredictionError: 0.3, CheckEvery: 50,
			})
			if err != nil {
				t.Fatal(err)
			}
			if run.Completed != run.Requests || run.Requests == 0 {
				t.Fatalf("%d of %d calls completed", run.Completed, run.Requests)
			}
			t.Logf("%d calls, kv max %.2f, preemptions %d, swap %d B, recompute %d", run.Requests, run.KVUtilMax, run.Preemptions, run.SwapOutBytes, run.RecomputeTokens)
			if run.LeakedBlocks != 0 {
				t.Fatalf("%d blocks leaked", run.LeakedBlocks)
			}
		})
	}
}
