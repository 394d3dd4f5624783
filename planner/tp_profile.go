package planner

import (
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/engine/sim"
)

// tpEfficiency is the assumed fraction of linear speed-up that a k-fold
// wider tensor-parallel group keeps: two all-reduces per layer over NVLink
// and per-iteration launch overhead that does not shrink. An assumption in
// the range vLLM users report for 7–13B models on A100 NVLink pairs, not a
// measurement; it is written into every derived profile's provenance.
func tpEfficiency(k int) (float64, bool) {
	switch k {
	case 1:
		return 1, true
	case 2:
		return 0.85, true
	case 4:
		return 0.7, true
	case 8:
		return 0.55, true
	}
	return 0, false
}

// tpScale is the iteration time of a k-fold wider TP group over the base's.
func tpScale(k int) float64 {
	eff, _ := tpEfficiency(k)
	return 1 / (float64(k) * eff)
}

// DeriveTP makes the profile of a model on tp GPUs from its profile on
// baseTP GPUs (tp a multiple of baseTP, ratio k in tpEfficiency):
//   - every iteration cost term is divided by k·eff(k) (each GPU reads 1/k
//     of the weights and holds 1/k of the KV heads);
//   - KV capacity is what k times the GPUs hold after one copy of the
//     weights: k·cap + (k−1)·weights/kv_bytes_per_token (the memory per GPU
//     left for weights and KV is taken from the base profile);
//   - batch limits and swap costs are kept.
//
// The load time becomes load·(0.5 + 0.5/k): half of loading is fixed
// (process and CUDA start, communicator set-up), half reads the weights,
// which k GPUs share (an assumption; SamuLLM measures a cost table).
func DeriveTP(base *sim.Profile, baseTP, tp int, weightsBytes float64, load time.Duration) (*sim.Profile, time.Duration, error) {
	if baseTP <= 0 || tp%baseTP != 0 {
		return nil, 0, fmt.Errorf("tensor-parallel degree %d is not a multiple of the profile's %d", tp, baseTP)
	}
	k := tp / baseTP
	eff, ok := tpEfficiency(k)
	if !ok {
		return nil, 0, fmt.Errorf("tensor-parallel degree %d: %d× the profile's degree is not one of 1, 2, 4, 8", tp, k)
	}
	if k == 1 {
		return base, load, nil
	}
	p := *base
	s := tpScale(k)
	p.Iter = sim.IterCost{
		Base: base.Iter.Base * s, PrefillToken: base.Iter.PrefillToken * s, PrefillAttn: base.Iter.PrefillAttn * s,
		DecodeSeq: base.Iter.DecodeSeq * s, DecodeCtx: base.Iter.DecodeCtx * s,
	}
	p.KVCapacityTokens = k*base.KVCapacityTokens + int(float64(k-1)*weightsBytes/float64(base.KVBytesPerToken))
	p.Name = fmt.Sprintf("%s-tp%d", base.Name, tp)
	p.Device = fmt.Sprintf("%d× (%s)", k, base.Device)
	p.Provenance = append(append([]string(nil), base.Provenance...),
		fmt.Sprintf("Derived by planner.DeriveTP for tensor parallelism %d from the profile's %d: iteration terms ÷ (%d × %.2f assumed TP efficiency), KV capacity %d× plus the freed weight copies (%.3g B of weights), load time × %.2f (half fixed, half weight reads shared).",
			tp, baseTP, k, eff, k, weightsBytes, 0.5+0.5/float64(k)))
	if err := p.Validate(); err != nil {
		return nil, 0, err
	}
	return &p, time.Duration(float64(load) * (0.5 + 0.5/float64(k))), nil
}
