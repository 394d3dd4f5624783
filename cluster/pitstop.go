package cluster

// Pitstop places a call where it costs the cluster least time: the call's
// own expected latency on the replica (waiting for memory or a batch slot,
// computing the part of its prompt the replica does not hold, decoding at
// that replica's iteration time with the call added) plus the delay it
// imposes on the calls already running there (its prefill stalls each of
// them; its decode lengthens every iteration they run). Every term is in
// seconds of the replica's own cost model, so replicas of different speed
// compare directly, a cache miss is weighed against queueing instead of a
// fixed token cut-off, and a program leaves a replica that has become the
// bottleneck once the queueing there costs more than recomputing its
// context elsewhere.
type Pitstop struct{}

// NewPitstop makes pitstop's balancer.
func NewPitstop() *Pitstop { return &Pitstop{} }

func (*Pitstop) Name() string { return "pitstop" }

func (b *Pitstop) Pick(c *Call, s *State) int {
	return leastBy(s, func(r *Replica) float64 { return b.Cost(c, r) })
}

// Cost is the time in seconds that placing c on r costs: c's latency there
// plus the delay it adds to r's running calls.
func (*Pitstop) Cost(c *Call, r *Replica) float64 {
	v := r.Speed
	miss := float64(max(c.PromptTokens-r.CachedPrefix, 1))
	prefill := miss * v.PrefillTokenS
	decode := float64(max(c.PredictedDecode, 1))
	running := float64(r.RunningCalls)
	iter := v.IterS(r.RunningCalls+1, r.RunningContext+c.PromptTokens)
	// Prefill ahead of it runs in chunks before (or beside) its own.
	wait := float64(r.WaitingPrefill) * v.PrefillTokenS
	need := (c.PromptTokens - r.CachedPrefix + c.PredictedDecode + r.BlockSize - 1) / max(r.BlockSize, 1)
	full := need > r.FreeBlocks || (r.MaxSeqs > 0 && r.RunningCalls >= r.MaxSeqs)
	if full && r.RunningCalls > 0 {
		// No room: it waits about as long as a running call has left,
		// behind the calls already waiting.
		left := float64(r.RunningTokens) / running
		wait += left * iter * (1 + float64(r.WaitingCalls)/running)
	}
	own := wait + prefill + decode*iter
	extra := running * (prefill + decode*(v.DecodeSeqS+v.DecodeCtxS*float64(c.PromptTokens)))
	return own + extra
}
