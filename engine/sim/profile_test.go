package sim

import (
	"math"
	"strings"
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/kvswap"
)

func TestBuiltinProfiles(t *testing.T) {
	names := ProfileNames()
	want := []string{"a100-40g-gptj-6b", "a100-40g-vicuna-13b", "a100-80g-llama3-70b", "a100-80g-llama3-8b", "h100-80g-gptj-6b", "h100-80g-llama3-8b", "h100-80g-vicuna-13b", "infercept-script"}
	if strings.Join(names, ",") != strings.Join(want, ",") {
		t.Fatalf("profiles %v, want %v", names, want)
	}
	kv := map[string]int{"a100-40g-gptj-6b": 458752, "a100-80g-llama3-70b": 327680, "a100-40g-vicuna-13b": 819200, "a100-80g-llama3-8b": 131072, "h100-80g-llama3-8b": 131072, "h100-80g-vicuna-13b": 819200, "h100-80g-gptj-6b": 458752, "infercept-script": 458752}
	for _, n := range names {
		p, err := LoadProfile(n)
		if err != nil {
			t.Fatal(err)
		}
		if p.KVBytesPerToken != kv[n] {
			t.Errorf("%s: %d KV bytes/token, want %d (DESIGN.md §6)", n, p.KVBytesPerToken, kv[n])
		}
		if len(p.Provenance) == 0 {
			t.Errorf("%s has no provenance", n)
		}
		if p.NumBlocks() <= 0 || p.HostBlocks() <= 0 {
			t.Errorf("%s: %d device and %d host blocks", n, p.NumBlocks(), p.HostBlocks())
		}
	}
}

func TestProfileErrors(t *testing.T) {
	if _, err := LoadProfile("tpu-v9"); err == nil || !strings.Contains(err.Error(), "a100-40g-gptj-6b") {
		t.Fatalf("unknown profile error %v should list the valid ones", err)
	}
	for _, bad := range []string{
		`{"name": "x"}`,
		`{"name": "x", "kv_bytes_per_token": 1, "block_size": 16, "kv_capacity_tokens": 160, "max_batched_tokens": 8, "max_seqs": 1, "iter": {"base_s": -1}}`,
		`{"name": "x", "unknown_field": 1}`,
		`not json`,
	} {
		if _, err := ParseProfile([]byte(bad)); err == nil {
			t.Errorf("profile %s was accepted", bad)
		}
	}
}

// The GPT-J profile must give the MARS benchmark's iteration time:
// 16.92 ms + 0.0408 ms per batched token.
func TestIterationCost(t *testing.T) {
	p, _ := LoadProfile("a100-40g-gptj-6b")
	x := NewExecutor(p)
	b := &engine.Batch{Items: []engine.BatchItem{
		{Start: 0, Len: 300, Sample: true}, // prefill
		{Start: 500, Len: 1, Sample: true}, // decode
	}}
	got := x.Cost(b)
	want := 0.01692 + 0.0000408*301
	if math.Abs(got-want) > 1e-12 {
		t.Fatalf("iteration cost %.6f s, want %.6f s", got, want)
	}
	b.SwapOut = make([]kvswap.Move, 10)
	withSwap := x.Cost(b)
	swap := float64(10*56)*4e-6 + float64(10*p.BlockBytes())/20e9
	if math.Abs(withSwap-want-swap) > 1e-12 {
		t.Fatalf("swap of 10 blocks adds %.6f s, want %.6f s", withSwap-want, swap)
	}
}

// The infercept-script profile holds the constants of InferCept's public
// GPT-J 6B script (WukLab/InferCept exps/6B_bench.sh and the code it runs),
// each cited in its provenance; the gptj profile holds MARS/LAMPS's, and
// says so.
func TestInferCeptScriptProfile(t *testing.T) {
	p, err := LoadProfile("infercept-script")
	if err != nil {
		t.Fatal(err)
	}
	// 10 ms + 0.0463 ms per batched token (6B_bench.sh lines 6-7).
	x := NewExecutor(p)
	b := &engine.Batch{Items: []engine.BatchItem{{Start: 0, Len: 383, Sample: true}, {Start: 900, Len: 1, Sample: true}}}
	if got, want := x.Cost(b), 0.010+0.0000463*384; math.Abs(got-want) > 1e-12 {
		t.Errorf("iteration of 384 tokens costs %.6f s, want %.6f s", got, want)
	}
	checks := []struct {
		what      string
		got, want int64
	}{
		{"token budget (scheduler_v2.py mlimit)", int64(p.MaxBatchedTokens), 384},
		{"block size (DeepSpeed kv block for head size 256)", int64(p.BlockSize), 64},
		{"max sequences (arg_utils default)", int64(p.MaxSeqs), 256},
		{"host tier bytes (--swap-space 128 GiB)", p.HostCapacity, 128 << 30},
		{"swap bandwidth (458,752 B per 40 us, solver.py)", int64(p.Swap.Bandwidth), 458752 * 25000},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.what, c.got, c.want)
		}
	}
	if p.KVCapacityTokens%p.BlockSize != 0 {
		t.Errorf("KV capacity %d tokens is not whole %d-token blocks", p.KVCapacityTokens, p.BlockSize)
	}
	prov := strings.Join(p.Provenance, "\n")
	for _, cite := range []string{"3a1a4dac37cb569e767bc4a95ef8ed0995a13b99", "exps/6B_bench.sh", "scheduler_v2.py", "solver.py", "arg_utils.py", "config.py", "llm_engine.py", "ASSUMPTION"} {
		if !strings.Contains(prov, cite) {
			t.Errorf("infercept-script provenance does not cite %q", cite)
		}
	}
	g, _ := LoadProfile("a100-40g-gptj-6b")
	gprov := strings.Join(g.Provenance, "\n")
	for _, cite := range []string{"mars-codebase", "16.92", "0.0408", "infercept-script", "0.0463"} {
		if !strings.Contains(gprov, cite) {
			t.Errorf("a100-40g-gptj-6b provenance does not say %q (its constants are MARS/LAMPS's, not InferCept's script's)", cite)
		}
	}
}
