package planner

import (
	"fmt"
	"time"

	"github.com/pitstop-llm/pitstop/engine/sim"
)

// Plan is a model's execution plan (SamuLLM §3): DP replicas, each over TP
// GPUs with tensor parallelism. Pipeline parallelism is left out, as the
// paper does on one node.
type Plan struct {
	DP int `json:"dp"`
	TP int `json:"tp"`
}

// GPUs the plan occupies.
func (p Plan) GPUs() int { return p.DP * p.TP }

func (p Plan) String() string { return fmt.Sprintf("dp%d×tp%d", p.DP, p.TP) }

// planProfile is a model on one TP degree: the simulator profile of one
// replica and its load time.
type planProfile struct {
	profile *sim.Profile
	load    time.Duration
	// scale is the profile's iteration time over the base profile's (the
	// one the model's profile_tp names): every cost term is scaled alike.
	scale float64
}

// plans lists a model's valid plans within gpus: every allowed TP degree,
// every replica count that fits (and MaxDP), whose replica holds at least
// its longest sequence in KV.
func (m *Model) plans(gpus int) []Plan {
	var out []Plan
	for _, tp := range m.tps {
		pp := m.byTP[tp]
		if pp.profile.KVCapacityTokens < m.longest {
			continue
		}
		for dp := 1; dp*tp <= gpus; dp++ {
			if m.maxDP > 0 && dp > m.maxDP {
				break
			}
			out = append(out, Plan{DP: dp, TP: tp})
		}
	}
	return out
}

// minGPUs is the fewest GPUs any plan of the model needs (0: none fits its
// longest sequence).
func (m *Model) minGPUs() int {
	for _, tp := range m.tps {
		if m.byTP[tp].profile.KVCapacityTokens >= m.longest {
			return tp
		}
	}
	return 0
}

// Profiles are the model's profiles by tensor-parallel degree (derived ones
// carry their derivation in their provenance).
func (m *Model) Profiles() map[int]*sim.Profile {
	out := make(map[int]*sim.Profile, len(m.tps))
	for _, tp := range m.tps {
		out[tp] = m.byTP[tp].profile
	}
	return out
}
