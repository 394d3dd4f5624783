// Package policy holds the scheduling policies, one per file. Each orders the
// runnable calls and chooses preserve, swap or discard at tool calls; the
// engine's mechanism (batching, blocks, swaps) is the same for all.
//
// Policies that use predictions read them only from Forecast().Predicted
// (oracle-with-noise in benchmarks, a model in serving: the policy cannot
// tell), except srpt, the clairvoyant reference, which reads Truth.
//
// # Hooks: mechanism in the engine, decisions in the policy
//
// The engine carries out swap-out, swap-in, discard, preemption and host-tier
// eviction; the policy decides which call, which handling and in what order.
// engine.Policy is one interface. Priority and Handle are every policy's
// own; every other hook has a default in engine.BasePolicy, the engine's
// behaviour before it asked, and every policy here embeds BasePolicy and
// overrides what it decides differently.
//
//	hook           decides                                         default (engine.BasePolicy)
//	Priority       the order of runnable calls, lower first         (required)
//	Handle         preserve, swap or discard at a tool call, and   (required)
//	               again each iteration while the KV is on device
//	Traits         prefix cache; preempting to admit               neither
//	Refresh        re-rank every runnable call this iteration      never
//	Shape, Admit   this iteration's token cap; who may join it;    the engine's limits; everyone
//	               whether a refusal holds back the rest
//	HoldBack       whether a waiting or swapped call that does     yes: no overtaking
//	               not fit holds back the calls ranked after it
//	PausedVictim   which paused call's device KV gives way when    the most predicted tool time left
//	               a call needs blocks
//	EvictPaused    how it goes: swap or discard                    swap (discarded if the host is full)
//	PreemptVictim  which running call ranked below gives way       the lowest-ranked
//	Evict          how a preempted call goes: swap or discard      discard (recomputed, as vLLM)
//	HostRank       whose parked host KV gives way to a newcomer    all alike: nothing gives way,
//	               when the host tier is full (ranked after it,    the newcomer is discarded
//	               latest first)
//	Retain, Cold   where a finished call's freed blocks join the   the free queue's tail: LRU
//	               prefix cache's free queue (its cold head goes
//	               first), and later which programs' go cold
//	Observe        every engine event (the policy sees it first)   ignored
//	Queue          a waiting call's queue, for metrics             0
//
// Here: fcfs and vllm-opt keep every default but the prefix cache (vllm-opt);
// infercept, lamps, srpt and pitstop evict preempted calls by least waste
// (Evict); mlfq, plas, atlas and srpt preempt (Traits), the first three
// swapping while the host tier has room; sola and vllm-prefill-first shape
// batches (Shape, Admit), and pitstop with Options.PitstopHostRoom "admit"
// admits and picks paused victims by the host tier's room (Shape, Admit,
// PausedVictim: host_room.go); lamps, pitstop, sola and the Autellix family
// re-rank over time (Refresh); most follow events (Observe). Any policy
// takes Belady's rule on a full host tier with Options.HostEviction "resume"
// (ResumeOrder, a wrapper that overrides HostRank alone). A policy's swap
// decisions count the host room that parked KV would give up to the call
// (View.HostRoom), so an override of HostRank reaches them too. pitstop
// with Options.PitstopEvict "program" tells the prefix cache which finished
// programs' contexts to evict first (Retain, Cold: retain_hint.go).
//
// # Overriding a hook, wrapping a policy
//
// A policy that evicts the paused call whose tool returns soonest, and
// discards it rather than swapping, overrides two hooks and keeps the rest:
//
//	type SoonestOut struct{ policy.InferCept }
//
//	func (SoonestOut) PausedVictim(v *engine.View, paused []*engine.Sequence) *engine.Sequence {
//		var best *engine.Sequence
//		for _, p := range paused {
//			if best == nil || v.ToolRemaining(p) < v.ToolRemaining(best) {
//				best = p
//			}
//		}
//		return best
//	}
//
//	func (SoonestOut) EvictPaused(*engine.View, *engine.Sequence) handling.Kind { return handling.Discard }
//
// A wrapper embeds the engine.Policy it wraps and defines only what it
// changes: every other hook, present or added later, reaches the wrapped
// policy, and no wrapper forwards hooks one by one or asserts the wrapped
// policy's type to find them. The runtime's prefix-cache wrapper overrides
// Traits alone. Sharing one engine between tenants by attained service
// changes the order only: Priority puts a tenant's queue above the wrapped
// policy's classes, and Refresh asks for a re-rank when tenants' queues move
// (the runtime's is sharedBetweenTenants in runtime/policy.go, its levels in
// runtime/tenant_share.go; Example_tenantShare is a toy of the same shape):
//
//	type tenantShare struct {
//		engine.Policy
//		tenants *tenantTable // service per tenant, its queue
//	}
//
//	func (p *tenantShare) Priority(v *engine.View, s *engine.Sequence) engine.Priority {
//		in := p.Policy.Priority(v, s)
//		return engine.Priority{Class: float64(p.tenants.queue(s))*1e6 + in.Class, Key: in.Key}
//	}
//
//	func (p *tenantShare) Refresh(v *engine.View) bool {
//		moved := p.tenants.moved() // evaluated first: both must run
//		return p.Policy.Refresh(v) || moved
//	}
package policy
