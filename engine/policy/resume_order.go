package policy

import "github.com/pitstop-llm/pitstop/engine"

// ResumeOrder wraps a policy so that a full host tier keeps the KV needed
// soonest: parked KV that resumes furthest in the future gives way (it is
// discarded) to a newcomer that resumes sooner, Belady's rule with the
// predicted tool durations (HostRank = View.ResumesIn). Every other hook is
// the wrapped policy's, whose swap decisions then count that room
// (View.HostRoom).
//
// It is an option (Options.HostEviction "resume"), not the default: it
// lowers latency where a swap is an order of magnitude cheaper than
// recomputing and raises it slightly where the two cost about the same
// (docs/results-host-eviction.md).
type ResumeOrder struct{ engine.Policy }

// HostRank is the predicted seconds until s resumes.
func (ResumeOrder) HostRank(v *engine.View, s *engine.Sequence) float64 { return v.ResumesIn(s) }
