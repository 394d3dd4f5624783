package cluster

// RoundRobin sends calls to the replicas in turn (Kubernetes' default).
type RoundRobin struct{ next int }

func (b *RoundRobin) Name() string { return "round-robin" }

func (b *RoundRobin) Pick(_ *Call, s *State) int {
	i := b.next % len(s.Replicas)
	b.next = i + 1
	return i
}

// LeastUsed sends a call to the replica with the fewest calls in its system
// (waiting and running): Autellix's baseline.
type LeastUsed struct{}

func (LeastUsed) Name() string { return "least-used" }

func (LeastUsed) Pick(_ *Call, s *State) int {
	return leastBy(s, func(r *Replica) float64 { return float64(r.Calls()) })
}

// LeastTokens sends a call to the replica with the fewest tokens of work
// waiting and running, per unit of its speed.
type LeastTokens struct{}

func (LeastTokens) Name() string { return "least-tokens" }

func (LeastTokens) Pick(_ *Call, s *State) int {
	return leastBy(s, func(r *Replica) float64 { return float64(r.Tokens()) / weight(r) })
}

func weight(r *Replica) float64 {
	if r.Weight > 0 {
		return r.Weight
	}
	return 1
}

// Prefix is a cache-aware router as SGLang's: the replica with the longest
// cached prefix of the prompt, when that prefix is a large enough part of
// it, unless the replicas' loads (calls in the system) are out of balance,
// when the least loaded takes the call.
type Prefix struct{ opts Options }

func (b *Prefix) Name() string { return "prefix" }

func (b *Prefix) Pick(c *Call, s *State) int {
	minI, maxL, bestI := 0, 0, -1
	for i := range s.Replicas {
		r := &s.Replicas[i]
		if r.Calls() < s.Replicas[minI].Calls() {
			minI = i
		}
		maxL = max(maxL, r.Calls())
		if bestI < 0 || r.CachedPrefix > s.Replicas[bestI].CachedPrefix ||
			(r.CachedPrefix == s.Replicas[bestI].CachedPrefix && r.Calls() < s.Replicas[bestI].Calls()) {
			bestI = i
		}
	}
	minL := s.Replicas[minI].Calls()
	if maxL-minL > b.opts.PrefixAbsThreshold && float64(maxL) > float64(minL)*b.opts.PrefixRelThreshold {
		return minI
	}
	if c.PromptTokens > 0 && float64(s.Replicas[bestI].CachedPrefix) > b.opts.PrefixCacheThreshold*float64(c.PromptTokens) {
		return bestI
	}
	return minI
}

// Autellix is Algorithm 2 of the Autellix paper (§4.3): a call of at most
// LongPrompt tokens goes to the least used replica; a longer one goes to
// its program's replica, which the program's first long call fixes as the
// least used at that time.
type Autellix struct {
	long    int
	program map[string]int
}

// NewAutellix makes the balancer with the short/long cut-off in tokens.
func NewAutellix(longPrompt int) *Autellix {
	return &Autellix{long: longPrompt, program: make(map[string]int)}
}

func (b *Autellix) Name() string { return "autellix" }

func (b *Autellix) Pick(c *Call, s *State) int {
	if c.PromptTokens <= b.long {
		return LeastUsed{}.Pick(c, s)
	}
	if i, ok := b.program[c.Program]; ok && i < len(s.Replicas) {
		return i
	}
	i := LeastUsed{}.Pick(c, s)
	b.program[c.Program] = i
	return i
}

// ProgramDone drops the program's pin.
func (b *Autellix) ProgramDone(program string) { delete(b.program, program) }
