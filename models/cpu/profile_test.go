package cpu

import (
	"testing"

	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/models/safetensors"
)

func TestCalibrateAndProfile(t *testing.T) {
	m := tinyModel(t, "llama", safetensors.F32, 1)
	x, err := New(m, Options{NumBlocks: 40, BlockSize: 4, HostBlocks: 8})
	if err != nil {
		t.Fatal(err)
	}
	iters, swaps, err := x.Calibrate(0, 64, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(iters) < 10 || len(swaps) == 0 || x.Host().Used() != 0 {
		t.Fatalf("%d iterations, %d swaps, %d host slots left allocated", len(iters), len(swaps), x.Host().Used())
	}
	p, st, err := x.Profile("cpu-tiny", engine.Config{MaxBatchedTokens: 64, MaxSeqs: 8}, iters, swaps)
	if err != nil {
		t.Fatal(err)
	}
	if p.KVBytesPerToken != m.Config.KVBytesPerToken() || p.NumBlocks() != 40 || p.BlockBytes() != x.BlockBytes() || p.HostBlocks() != 8 {
		t.Fatalf("profile sizes %+v", p)
	}
	if st.Samples != len(iters) || p.Iter.Base+p.Iter.PrefillToken+p.Iter.DecodeSeq <= 0 {
		t.Fatalf("fit %+v of %+v", st, p.Iter)
	}
	if len(x.Samples()) != 0 {
		t.Fatal("calibration kept its batches as run samples")
	}
}
