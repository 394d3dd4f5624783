package cluster

import "time"

// Call is an LLM call to place, as the balancer knows it at submission.
type Call struct {
	Program string
	Thread  string
	// PromptTokens is the call's prompt length in tokens.
	PromptTokens int
	// PredictedDecode is the predicted number of tokens the call generates
	// before it ends or pauses for a tool.
	PredictedDecode int
	// PredictedToolS is the predicted duration of the call's tools in
	// seconds (0: none predicted).
	PredictedToolS float64
	// ProgramRemaining is the predicted number of tokens the program still
	// decodes after this call, across its later calls (0: unknown or none).
	ProgramRemaining int
}

// Replica is one engine replica at the time of a call.
type Replica struct {
	Name    string
	Profile string
	// Weight is the replica's speed relative to the fleet's slowest
	// (decode tokens per second of its profile); 1 when homogeneous.
	Weight float64

	WaitingCalls, RunningCalls   int // runnable calls not in / in the device batch set
	PausedCalls                  int // calls in a tool, holding context here
	WaitingTokens, RunningTokens int // work of those calls: prefill left + predicted decode
	FreeBlocks, TotalBlocks      int // device KV blocks
	BlockSize                    int // tokens per block
	RunningContext               int // context tokens of the running calls
	WaitingPrefill               int // prompt tokens the waiting calls still have to compute
	MaxSeqs                      int // calls per iteration (0: no cap known)
	// Speed is the replica's iteration cost model (its profile's).
	Speed Speed

	// CachedPrefix is how many tokens of the call being placed this
	// replica holds in its prefix cache: filled per call by the State's
	// owner, since only it can see the replica's cache.
	CachedPrefix int

	programs map[string]Held
}

// Speed is an iteration's cost on a replica: Base + PrefillTokenS per
// prompt token + DecodeSeqS per decoding call + DecodeCtxS per context token
// of the decoding calls (the sim profile's model; engine/sim).
type Speed struct {
	BaseS, PrefillTokenS, DecodeSeqS, DecodeCtxS float64
}

// IterS is an iteration's duration with calls decoding over ctx tokens.
func (v Speed) IterS(calls, ctx int) float64 {
	return v.BaseS + v.DecodeSeqS*float64(calls) + v.DecodeCtxS*float64(ctx)
}

// Held is a program's context on a replica.
type Held struct {
	Tokens   int           // context tokens of its last call here
	Since    time.Duration // when the program first ran here
	LastUsed time.Duration // when its last call here ended or paused
}

// Calls is the number of calls in the replica's system (waiting and running).
func (r *Replica) Calls() int { return r.WaitingCalls + r.RunningCalls }

// Tokens is the work queued on the replica in tokens (waiting and running).
func (r *Replica) Tokens() int { return r.WaitingTokens + r.RunningTokens }

// Holds reports the context the replica holds for a program.
func (r *Replica) Holds(program string) (Held, bool) {
	h, ok := r.programs[program]
	return h, ok
}

// Hold records that the replica holds tokens of a program's context at now.
func (r *Replica) Hold(program string, tokens int, now time.Duration) {
	if r.programs == nil {
		r.programs = make(map[string]Held)
	}
	h, ok := r.programs[program]
	if !ok {
		h.Since = now
	}
	h.Tokens, h.LastUsed = tokens, now
	r.programs[program] = h
}

// Forget drops a program's context from the replica's record (the program
// ended, or its context moved).
func (r *Replica) Forget(program string) { delete(r.programs, program) }

// Programs is the number of programs whose context the replica holds.
func (r *Replica) Programs() int { return len(r.programs) }

// State is the set of replicas at the time of a call.
type State struct {
	Now      time.Duration
	Replicas []Replica
}

// ProgramDone forgets a finished program on every replica.
func (s *State) ProgramDone(program string) {
	for i := range s.Replicas {
		s.Replicas[i].Forget(program)
	}
}

// leastBy returns the replica with the smallest load(r), lowest index on ties.
func leastBy(s *State, load func(r *Replica) float64) int {
	best, bestLoad := 0, 0.0
	for i := range s.Replicas {
		l := load(&s.Replicas[i])
		if i == 0 || l < bestLoad {
			best, bestLoad = i, l
		}
	}
	return best
}
