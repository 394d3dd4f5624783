package remote

import (
	"slices"
	"time"

	"github.com/pitstop-llm/pitstop/cluster"
)

// pick chooses the backend of a generation: the pinned one (a call's
// earlier round ran there) when it is up; else the program's home (the
// backend holding its context) unless its queue is much longer than the
// others' (AffinitySlack); else the balancer's choice among the available
// backends, with each backend's record of the program's context as its
// cached prefix. No backend in exclude is chosen.
func (r *Router) pick(req *Request, exclude map[string]bool, pin string) *Backend {
	r.mu.Lock()
	defer r.mu.Unlock()
	var room [8]*Backend // most routers have few backends: no allocation
	cands := room[:0]
	for _, b := range r.backends {
		if exclude[b.name] {
			continue
		}
		if b.name == pin && b.isUp() {
			return b
		}
		if b.available() {
			cands = append(cands, b)
		}
	}
	if len(cands) == 0 {
		return nil
	}
	// A program's next call extends the context it left: its prompt is at
	// least as long as the longest context a backend holds of it, and that
	// backend is its home.
	prompt := req.PromptTokens
	var home *Backend
	shortest := -1
	for _, b := range cands {
		if h, ok := r.holds[b.name].Holds(req.Program); ok && h.Tokens >= prompt {
			prompt, home = h.Tokens, b
		}
		if q := b.adm.queued(); shortest < 0 || q < shortest {
			shortest = q
		}
	}
	// Affinity: the home keeps the program unless its queue is much longer
	// than the shortest (the balancer then weighs the cache against the
	// queues).
	if home != nil && r.cfg.AffinitySlack > 0 && home.adm.queued()-shortest <= r.cfg.AffinitySlack {
		return home
	}
	s := &r.pickState
	s.Now = time.Since(r.start)
	s.Replicas = slices.Grow(s.Replicas[:0], len(cands))[:len(cands)]
	for i, b := range cands {
		rep := *r.holds[b.name] // the program records, by reference
		rep.Weight = b.spec.Weight
		rep.WaitingCalls, rep.RunningCalls = b.adm.queued(), b.adm.running()
		rep.RunningTokens = int(b.work.Load())
		rep.BlockSize, rep.TotalBlocks, rep.FreeBlocks = 16, 1<<24, 1<<24
		rep.MaxSeqs = b.adm.currentLimit()
		rep.Speed = cluster.Speed{BaseS: r.speed.BaseS / rep.Weight, PrefillTokenS: r.speed.PrefillTokenS / rep.Weight,
			DecodeSeqS: r.speed.DecodeSeqS / rep.Weight, DecodeCtxS: r.speed.DecodeCtxS / rep.Weight}
		rep.CachedPrefix = 0
		if h, ok := rep.Holds(req.Program); ok {
			rep.CachedPrefix = min(h.Tokens, prompt)
		}
		s.Replicas[i] = rep
	}
	call := &r.pickCall
	*call = cluster.Call{Program: req.Program, Thread: req.Thread, PromptTokens: prompt, PredictedDecode: req.PredictedDecode}
	i := r.bal.Pick(call, s)
	if i < 0 || i >= len(cands) {
		i = 0
	}
	return cands[i]
}
