package bench

import (
	"github.com/pitstop-llm/pitstop/cluster"
	"github.com/pitstop-llm/pitstop/engine"
	"github.com/pitstop-llm/pitstop/engine/sim"
)

// ProfileReplicas makes one replica per profile, each with its own simulated
// executor and the policy newPolicy makes, sized and priced by its profile.
// A replica's weight is its single-call decode speed against the slowest's.
func ProfileReplicas(profiles []*sim.Profile, newPolicy func() engine.Policy) []Replica {
	slowest := 0.0
	for _, p := range profiles {
		slowest = max(slowest, p.Iter.Base+p.Iter.DecodeSeq)
	}
	out := make([]Replica, len(profiles))
	for i, p := range profiles {
		out[i] = Replica{
			Profile:  p.Name,
			Engine:   p.EngineConfig(),
			Executor: sim.NewExecutor(p),
			Policy:   newPolicy(),
			Speed: cluster.Speed{BaseS: p.Iter.Base, PrefillTokenS: p.Iter.PrefillToken,
				DecodeSeqS: p.Iter.DecodeSeq, DecodeCtxS: p.Iter.DecodeCtx},
			Weight: slowest / (p.Iter.Base + p.Iter.DecodeSeq),
		}
	}
	return out
}
